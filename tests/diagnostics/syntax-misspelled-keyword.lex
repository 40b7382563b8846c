// expect: E001
workflow w
stgae draft {
  model m
}
