// expect: E070 at line 4
workflow w
sources client {
  files "**/*.md"
}
