// expect: E050 at line 10
// A second board is declared on GPUs the cluster already uses.
workflow affidavit "Tenant affidavit from intake to a verified draft"

use std.prompts
use "lib/cluster.lex"

pool board_x {
  host    "threadripper"
  gpus    8, 9
  link    nvlink
  vram    2 x 32 GiB
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8095"
}

model drafter on board_x {
  gguf    "models/Qwen3.6-35B-A3B-Q8_0.gguf"
  weights 20 GiB
  layers 40  kv_heads 2  head_dim 256
  ctx 8k  kv q8_0  flash_attn on
  temperature 0.3
}

sources client {
  files       "intake/**/*.pdf", "intake/**/*.txt"
  bates       "SMITH" start 1 width 6
  description "Client intake: letter, lease, emails and invoices"
}

stage gate {
  model   drafter
  prompt  std.prompts.gate
  reads   client
  returns { grounds: bool, reason: text, needs_figures: bool }
  stop when not grounds
}

stage draft after gate {
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
