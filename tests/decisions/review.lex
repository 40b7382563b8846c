workflow review "An affidavit a reviewer decides on: a date confirmed by a page, a citation struck, a defined term waived"

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

verify draft against client {
  dates     must appear
  citations must appear
  quotes    must match
  on failure block
}

output "affidavit.docx" from draft appendix verification
