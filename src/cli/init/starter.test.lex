// `lexrun test` replays the cassette (recorded from a scripted test server, as its first line
// says), checks the expectations, and compares what the run produced with its snapshot.

test "starter: the sample matter, drafted and verified" {
  workflow "starter.lex"
  cassette "cassettes/starter.jsonl"
  expect exit 0
  expect gate.grounds == true
  expect draft runs
  expect verify draft passes
}
