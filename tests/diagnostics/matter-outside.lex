// expect: E076
workflow w
matter "../../clients/other"
sources client {
  files "*.txt"
}
tool stamped bates {
  reads client
}
