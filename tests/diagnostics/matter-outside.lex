// expect: E076
workflow w
matter "../../clients/other"
sources client {
  files "*.pdf"
  bates "OTHER"
}
tool stamped runs bates {
  reads client
}
