// SYNTAX TEST "source.lex" "the constructs of a .lex workflow"

workflow affidavit "Tenant affidavit"
// <-------- keyword.other.workflow.lex
//       ^^^^^^^^^ entity.name.namespace.workflow.lex
//                 ^^^^^^^^^^^^^^^^^^ string.quoted.double.lex

use std.prompts
// <--- keyword.control.import.lex
//  ^^^^^^^^^^^ entity.name.namespace.module.lex

ledger "postgres://lexrun@ledger.firm.internal/lexrun"
// <------ keyword.control.lex
//     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ string.quoted.double.lex

pool board_a {
// <---- storage.type.pool.lex
//   ^^^^^^^ entity.name.type.pool.lex
//           ^ punctuation.section.block.begin.lex
  vram    4 x 32 GiB
//^^^^ variable.other.property.lex
//        ^ constant.numeric.lex
//          ^ keyword.other.unit.lex
//            ^^ constant.numeric.lex
//               ^^^ keyword.other.unit.lex
  serve   llama_cpp at "http://127.0.0.1:8081"  // the server
//        ^^^^^^^^^ constant.language.lex
//                  ^^ keyword.control.lex
//                                              ^^^^^^^^^^^^^ comment.line.double-slash.lex
}

model drafter on board_a {
// <----- storage.type.model.lex
//    ^^^^^^^ entity.name.type.model.lex
//            ^^ keyword.other.on.lex
//               ^^^^^^^ entity.name.type.pool.lex
  ctx 64k  kv q4_0  flash_attn on
//    ^^ constant.numeric.lex
//      ^ keyword.other.unit.lex
//            ^^^^ constant.language.lex
  min_decode 40 tok/s
//^^^^^^^^^^ variable.other.property.lex
//              ^^^^^ keyword.other.unit.lex
}

stage figures after gate when gate.needs_figures {
// <----- storage.type.stage.lex
//    ^^^^^^^ entity.name.function.stage.lex
//            ^^^^^ keyword.control.lex
//                       ^^^^ keyword.control.lex
//                            ^^^^ variable.other.object.lex
//                                 ^^^^^^^^^^^^^ variable.other.member.lex
  returns { total: number, items: list of text }
//^^^^^^^ keyword.control.lex
//                 ^^^^^^ support.type.primitive.lex
//                                ^^^^ storage.modifier.lex
//                                        ^^^^ support.type.primitive.lex
  stop when not grounds and total >= 100
//          ^^^ keyword.operator.logical.lex
//                          ^^^^^ - keyword
//                                ^^ keyword.operator.comparison.lex
  timeout 20m
//        ^^ constant.numeric.lex
//          ^ keyword.other.unit.lex
  prompt """
    {{evidence}} and {{#each items}}{{this.amount}}{{/each}}
//  ^^ punctuation.definition.tag.begin.handlebars
//    ^^^^^^^^ variable.other.handlebars
//                     ^ keyword.control.handlebars
//                      ^^^^ keyword.control.handlebars
//                                    ^^^^^^^^^^^ variable.other.handlebars
    not a keyword: stage
//  ^^^ string.quoted.triple.lex - keyword
  """
}

verify figures against client {
  amounts must appear or flag
//^^^^^^^ variable.other.property.lex
//        ^^^^ keyword.control.lex
//             ^^^^^^ constant.language.lex
//                       ^^^^ constant.language.lex
  on failure revise, at most 2 rounds
}

/* a block
   comment */
// <-- comment.block.lex

model big on board_a {
  params 30.5B  active 3B
//^^^^^^ variable.other.property.lex
//       ^^^^ constant.numeric.lex
//           ^ keyword.other.unit.lex
//              ^^^^^^ variable.other.property.lex
//                     ^ constant.numeric.lex
//                      ^ keyword.other.unit.lex
  params 122B
//       ^^^ constant.numeric.lex
//          ^ keyword.other.unit.lex
  weights 35B
//        ^^ constant.numeric.lex
//          ^ keyword.other.unit.lex
  weights 70.6 GB
//        ^^^^ constant.numeric.lex
//             ^^ keyword.other.unit.lex
}

pool typing {
  api_key "KEY"
//^^^^^^^ variable.other.property.lex
}

stage
// <----- storage.type.lex

stage s {
  prompt "Summarise {{#if grounds}}{{claims.0}}{{else}}nothing{{/if}} {{! a note }}"
//                  ^^ punctuation.definition.tag.begin.handlebars
//                    ^ keyword.control.handlebars
//                     ^^ keyword.control.handlebars
//                        ^^^^^^^ variable.other.handlebars
//                               ^^ punctuation.definition.tag.end.handlebars
//                                               ^^^^ keyword.control.handlebars
//                                                                    ^^^^^^^^^^^^^ comment.block.handlebars
}
