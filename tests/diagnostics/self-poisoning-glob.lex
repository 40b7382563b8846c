// expect: E070
workflow w
sources client {
  files "**/*.md"
}
