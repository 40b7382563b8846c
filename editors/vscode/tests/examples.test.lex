// SYNTAX TEST "source.lex" "the constructs of a .test.lex file"

test "affidavit: smith, verified" {
// <---- keyword.other.test.lex
//   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^ string.quoted.double.lex
  workflow "affidavit.lex"
//^^^^^^^^ keyword.other.workflow.lex
  matter "matters/smith"
//^^^^^^ keyword.control.lex
  cassette "cassettes/affidavit-smith.jsonl"
//^^^^^^^^ keyword.other.cassette.lex
  expect exit 0
//^^^^^^ keyword.control.expect.lex
//       ^^^^ keyword.other.exit.lex
//            ^ constant.numeric.lex
  expect gate runs
//^^^^^^ keyword.control.expect.lex
//       ^^^^ entity.name.function.stage.lex
//            ^^^^ constant.language.state.lex
  expect gate.grounds == true
//^^^^^^ keyword.control.expect.lex
//       ^^^^ variable.other.object.lex
//            ^^^^^^^ variable.other.member.lex
//                    ^^ keyword.operator.comparison.lex
//                       ^^^^ constant.language.boolean.lex
  expect verify check_draft passes
//^^^^^^ keyword.control.expect.lex
//       ^^^^^^ keyword.control.lex
//              ^^^^^^^^^^^ entity.name.function.stage.lex
//                          ^^^^^^ constant.language.verdict.lex
  expect draft rounds 2
//^^^^^^ keyword.control.expect.lex
//             ^^^^^^ keyword.control.lex
}
