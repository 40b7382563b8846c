// expect: E001 at line 3
workflow w
stgae draft {
  model m
}
