workflow flow "Two stages on one server: the first answers well, the second does not"

// The pool's endpoint is replaced with --endpoint when the tests run.

use std.prompts

matter "matter"

pool gpu {
  host  "test"
  gpus  0
  vram  32 GiB
  serve llama_cpp at "http://127.0.0.1:9"
}

model writer on gpu {
  gguf    "models/writer.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
}

sources file {
  files "intake/*.txt"
  bates "NOTE" start 1 width 6
}

stage facts {
  model  writer
  prompt std.prompts.summary
  reads  file
  max_tokens 200
}

stage check after facts {
  model   writer
  prompt  std.prompts.gate
  reads   file
  returns { grounds: bool, reason: text }
  max_tokens 200
}

stage draft after check {
  model  writer
  prompt std.prompts.affidavit
  reads  file, facts
  max_tokens 2000
}

output "facts.md" from facts unverified
output "draft.md" from draft unverified
