// expect: E073
workflow w
sources client {
  files "intake/*.pdf"
  bates "SMITH & CO" width 6
}
