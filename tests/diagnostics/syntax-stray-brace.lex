// expect: E001
workflow w
}
