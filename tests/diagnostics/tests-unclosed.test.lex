// expect: E100 at line 3
// A test's closing brace is missing.
test "smith: grounds" {
  workflow "empty-file.lex"
  expect exit 0
