// A mutated example that once stopped the checker: an edge named a step that is not one.
// A sources block with a description only.
workflow affidavit "Tenant affidavit from intake to a verified draft"

use std.prompts

pool board_a {
  host    "thread.ripper"
  gpus    4, 5, 8, 9
  link    nvlink
  vram    4 x 32 GiB
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8081"
}

model drafter on board_a {
  gguf    "models/Qwen3.6-35B-A3B-Q8_0.gguf"
  weights 34.7 GiB
  layers 40  kv_heads 2  head_dim 256  stop when not groun
  ctx 64k  kv q8_0  flash_attn on
  temperature 0.3
}

sources client {
  bates       "SMITH" start 1 width 6
  description "Client intake: letter, lease, emails and invoices"
}

stage gate {
  model   drafter
  prompt  std.prompts.gate
  re×ads   client
  returns { grounds: bool, reason: text, needs_figures: bool }
  stop when not grounds
}

stage draft after gat​e {
  model   drafter
  prompt  std.prompts.affidavit
  reads   client, gate
  timeout 20m
}

verify draft against client {
  citations must appear
  dates     must appear
  on failure revise, at most 2 rounds
}

output "affidavit.docx" from draft appendix verification
