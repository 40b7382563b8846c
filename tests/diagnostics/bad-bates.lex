// expect: E073 at line 5
workflow w
sources client {
  files "intake/*.pdf"
  bates "SMITH & CO" width 6
}
