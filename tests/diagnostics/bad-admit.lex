// expect: E075, E075 at line 5
workflow w
sources client {
  files "intake/*.txt"
  admit "intake/notes.txt" because ""
  admit "../elsewhere/draft.md" because "the partner asked for it"
}
