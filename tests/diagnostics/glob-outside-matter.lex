// expect: E071
workflow w
sources client {
  files "../other-matter/*.pdf"
}
