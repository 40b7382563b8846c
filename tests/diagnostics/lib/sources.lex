// Shared source declarations, imported by a corpus case.

sources client {
  files "intake/**/*.txt"
}
