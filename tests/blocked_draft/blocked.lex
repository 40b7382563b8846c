workflow blocked "An affidavit whose verification blocks it, and one sent back first"

// The pool's endpoint is replaced with --endpoint when the tests run.

use std.prompts

matter "matter"

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
  bates "BLK" start 1 width 6
}

stage draft {
  model  drafter
  prompt std.prompts.affidavit
  reads  client
  max_tokens 2000
}

// Dates and amounts block; quotations go back once; a wrong Bates number is only flagged.
verify draft against client {
  dates   must appear or block
  amounts must appear or block
  quotes  must match
  bates   must exist or flag
  on failure revise, at most 1 rounds
}

output "affidavit.docx" from draft appendix verification
output "affidavit.pdf"  from draft
output "affidavit.md"   from draft appendix verification
