// expect: E100 at line 6
// An expectation about a stage the workflow does not have.
test "rivera: summary" {
  workflow "../../workflows/summary.lex"
  cassette "../../workflows/cassettes/summary-rivera.jsonl"
  expect sumary not empty
}
