// expect: E076
workflow w
matter "../../clients/other"
sources client {
  files "*.txt"
}
tool stamped runs bates {
  reads client
}
