// Imported by cycle/a.lex; closes the circle.
use "a.lex"
