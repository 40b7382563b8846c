// expect: E100 at line 5
// An expectation written in words lexrun test does not know.
test "smith: grounds" {
  workflow "lib/../empty-file.lex"
  expect the draft to pass
}
