workflow starter "A first workflow: screen a matter, draft an affidavit, verify every claim"

// One pool, one model, a gate, a draft and strict verification: `lexrun check starter.lex`,
// `lexrun plan starter.lex`, `lexrun test` (replays the cassette), then point the pool at
// your llama.cpp server and `lexrun run starter.lex`.

use std.prompts
use std.verify

matter "matters/sample"

pool local {
  host    "this-machine"
  gpus    0
  vram    24 GiB
  compute 8.6
  serve   llama_cpp at "http://127.0.0.1:8080"
}

model drafter on local {
  gguf    "models/Qwen3-4B-Instruct-2507-Q8_0.gguf"
  weights 4.0 GiB
  layers 36  kv_heads 8  head_dim 128
  ctx 16k  kv q8_0  flash_attn on
  temperature 0.1
}

sources record {
  files       "record/**/*.txt"
  bates       "SAMPLE" width 6
  description "The client's letter and the lease"
}

// A small question before any long draft: are there grounds at all?
stage gate {
  model   drafter
  prompt  std.prompts.gate
  reads   record
  returns { grounds: bool, reason: text, needs_figures: bool }
  stop when not grounds
}

stage draft after gate {
  model   drafter
  prompt  std.prompts.affidavit
  reads   record, gate
  timeout 10m
}

// Every citation, date, amount, Bates number and quotation must be in the record.
verify draft against record {
  rules std.verify.strict
}

output "affidavit.md" from draft appendix verification
