// expect: E083 at line 25
workflow w
use std.verify
pool gpu {
  gpus 0
  vram 32 GiB
  serve llama_cpp at "http://127.0.0.1:8081"
}
model m on gpu {
  gguf "models/m.gguf"
  weights 8 GiB
  layers 32  kv_heads 8  head_dim 128
  ctx 8k
}
sources client {
  files "intake/*.txt"
}
stage draft {
  model m
  prompt "Draft from {{evidence}}"
  reads client
}
ruleset own {
  dates must appear
  judge m
}
stage memo after draft {
  model m
  prompt "Memo from {{evidence}}"
  reads client
}
stage note after memo {
  model m
  prompt "Note from {{evidence}}"
  reads client
}
// A propositions rule (here from a rule set) with no judge, a judge with nothing to judge,
// and a rule set naming a judge.
verify draft against client {
  rules std.verify.filing
}
verify memo against client {
  dates must appear
  judge m
}
verify note against client {
  rules own
}
