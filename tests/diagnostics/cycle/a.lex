// Imported by import-cycle.lex.
use "b.lex"
