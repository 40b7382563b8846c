workflow summary "Summary and chronology of a new personal-injury file"

// The light end of lexrun: one small model on one GPU, one stage, and the `review` rule set,
// which marks unsupported claims for the attorney instead of blocking the summary.

use std.prompts
use std.verify

matter "matters/rivera-v-harbor"

pool desk {
  host    "paralegal-workstation"
  gpus    0
  vram    24 GiB
  compute 8.6
  serve   llama_cpp at "http://127.0.0.1:8080"
}

model small on desk {
  gguf    "models/Qwen3-4B-Instruct-2507-Q8_0.gguf"
  weights 4.0 GiB
  layers 36  kv_heads 8  head_dim 128
  ctx 16k  kv q8_0  flash_attn on
  temperature 0.1
  min_decode 40 tok/s
}

sources file {
  files       "file/**/*.txt", "file/**/*.pdf"
  bates       "RIVERA" width 6
  description "Incident report, witness statement and medical bills"
}

stage summary {
  model   small
  prompt  std.prompts.summary
  reads   file
  timeout 5m
}

verify summary against file {
  rules std.verify.review
}

output "summary.md" from summary appendix verification
