workflow pipeline "A three-pool pipeline for runtime tests"

// Every pool's endpoint is replaced with --endpoint when the tests run.

use std.prompts
use std.verify

matter "matter"

pool gpu_a {
  host    "test"
  gpus    0
  vram    32 GiB
  serve   llama_cpp at "http://127.0.0.1:9"
}

pool gpu_b {
  host    "test"
  gpus    1
  vram    32 GiB
  serve   llama_cpp at "http://127.0.0.1:9"
}

pool rtx {
  host    "test-rtx"
  gpus    0
  vram    24 GiB
  serve   ollama at "http://127.0.0.1:9"
}

model gatekeeper on gpu_a {
  gguf    "models/tiny-llama-v2.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
}

model drafter on gpu_b {
  gguf    "models/tiny-llama-v2.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
  max_tokens 256
}

model extractor on rtx {
  tag     "gemma4:26b"
  weights 17 GiB
  layers 30  kv_heads 8  head_dim 128
  ctx 16k
  temperature 0
}

sources client {
  files "intake/*.txt"
  bates "TEST" start 1 width 6
}

stage gate {
  model   gatekeeper
  prompt  std.prompts.gate
  reads   client
  returns { grounds: bool, reason: text, needs_figures: bool }
  stop when not grounds
}

stage draft after gate {
  model   drafter
  prompt  std.prompts.affidavit
  reads   client, gate
}

stage review after draft {
  model   gatekeeper
  prompt  std.prompts.adversary
  reads   client
  returns { passes: bool, objections: list of text }
  revise  draft until passes, at most 2 rounds
}

stage figures after gate when gate.needs_figures {
  model   extractor
  prompt  std.prompts.finance
  reads   client
  returns {
    amounts: list of record { amount: number, date: date, purpose: text, bates: text },
    total: number
  }
}

verify draft against client {
  rules std.verify.strict
}

verify figures against client {
  amounts must appear
  dates   must appear
  bates   must exist
  on failure flag
}

output "draft.md"     from draft appendix verification
output "figures.json" from figures
