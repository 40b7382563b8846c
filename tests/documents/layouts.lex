workflow layouts "One draft laid out as a letter, a memo and a pleading"

// The pool's endpoint is replaced with --endpoint when the tests run.

use std.prompts

matter "letter-matter"

pool gpu {
  host  "test"
  gpus  0
  vram  32 GiB
  serve llama_cpp at "http://127.0.0.1:9"
}

model drafter on gpu {
  gguf    "models/drafter.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
}

sources client {
  files "intake/*.txt"
  bates "DOC" start 1 width 6
}

stage draft {
  model  drafter
  prompt std.prompts.summary
  reads  client
}

verify draft against client {
  dates   must appear
  amounts must appear
  on failure flag
}

output "letter.docx" from draft layout letter
output "letter.pdf"  from draft layout letter
output "memo.pdf"    from draft layout memo
output "motion.pdf"  from draft layout pleading
