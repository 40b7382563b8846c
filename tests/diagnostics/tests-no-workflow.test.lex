// expect: E100 at line 3
// A test that names no workflow.
test "smith: replay" {
  expect exit 0
}
