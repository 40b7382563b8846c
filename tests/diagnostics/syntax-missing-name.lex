// expect: E001
workflow w

pool {
  gpus 0
}
