// expect: E079 at line 4
// A firm's ledger written with its password: every copy of the file would carry it.
workflow w
ledger "postgres://lexrun:hunter2@ledger.firm.internal:5432/lexrun"
sources client {
  files "*.pdf"
  bates "W"
}
tool stamped runs bates {
  reads client
}
