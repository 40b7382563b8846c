// expect: E100 at line 5
// A test names a workflow file that was renamed.
test "smith: grounds" {
  matter   "matters/smith"
  workflow "affidavit-old.lex"
  expect exit 0
}
