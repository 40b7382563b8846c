// expect: E079 at line 4
// A ledger lexrun cannot use: the shared ledger is PostgreSQL.
workflow w
ledger "mysql://ledger.firm.internal/lexrun"
sources client {
  files "*.pdf"
  bates "W"
}
tool stamped runs bates {
  reads client
}
