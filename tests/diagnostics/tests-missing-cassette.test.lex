// expect: E100 at line 5
// The cassette was never recorded.
test "smith: replay" {
  workflow "empty-file.lex"
  cassette "cassettes/smith.jsonl"
  expect exit 0
}
