// expect: E071
workflow w
sources client {
  files "intake/[abc.txt"
}
