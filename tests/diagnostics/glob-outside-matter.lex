// expect: E071 at line 4
workflow w
sources client {
  files "../other-matter/*.pdf"
}
