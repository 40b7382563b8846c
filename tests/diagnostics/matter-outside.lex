// expect: E076, E078 at line 3
workflow w
matter "../../clients/other"
sources client {
  files "*.pdf"
  bates "OTHER"
}
tool stamped runs bates {
  reads client
}
