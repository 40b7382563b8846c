workflow flagged "The judged declaration, with unsupported propositions flagged, not blocked"

// Every pool's endpoint is replaced with --endpoint when the tests run.

use std.verify

matter "matter"

pool gpu {
  host  "test"
  gpus  0
  vram  32 GiB
  serve llama_cpp at "http://127.0.0.1:9"
}

pool bench {
  host  "test"
  gpus  1
  vram  32 GiB
  serve llama_cpp at "http://127.0.0.1:9"
}

model drafter on gpu {
  gguf    "models/tiny-llama-v3.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
}

model checker on bench {
  gguf    "models/tiny-llama-v3.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
  max_tokens 256
}

sources client {
  files "intake/*.txt"
  bates "TEST" start 1 width 6
}

stage draft {
  model  drafter
  prompt """
    {{evidence}}

    Write the tenant's declaration from these pages, citing each page by its Bates number.
  """
  reads  client
}

verify draft against client {
  rules std.verify.filing
  judge checker
  propositions must hold or flag
}

output "draft.md"   from draft appendix verification
output "draft.docx" from draft appendix verification
