// expect: E001 at line 4
workflow w

pool {
  gpus 0
}
