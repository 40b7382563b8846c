// expect: E001 at line 4
// A misspelt declaration keyword is named.
workflow w
leddger "postgres://lexrun@ledger.firm.internal/lexrun"
sources client {
  files "*.pdf"
  bates "W"
}
tool stamped runs bates {
  reads client
}
