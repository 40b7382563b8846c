// expect: E073
workflow w
sources client {
  files "intake/*.pdf"
  bates "SMITH" start 1234567 width 6
}
