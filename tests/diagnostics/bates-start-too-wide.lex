// expect: E073 at line 5
workflow w
sources client {
  files "intake/*.pdf"
  bates "SMITH" start 1234567 width 6
}
