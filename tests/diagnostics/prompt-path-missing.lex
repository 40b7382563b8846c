// expect: E042 at line 40
// A prompt file that is not there: once sent to the model as its prompt, 17 characters.
workflow letter "A demand letter from intake"

use std.prompts

pool board_a {
  host    "threadripper"
  gpus    4, 5, 8, 9
  link    nvlink
  vram    4 x 32 GiB
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8081"
}

model drafter on board_a {
  gguf    "models/Qwen3.6-35B-A3B-Q8_0.gguf"
  weights 34.7 GiB
  layers 40  kv_heads 2  head_dim 256
  ctx 64k  kv q8_0  flash_attn on
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
  prompt  "prompts/demand.md"
  reads   client, gate
  timeout 20m
}
