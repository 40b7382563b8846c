// expect: E075, E075
workflow w
sources client {
  files "intake/*.txt"
  admit "intake/notes.txt" because ""
  admit "../elsewhere/draft.md" because "the partner asked for it"
}
