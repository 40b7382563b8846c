// expect: E004, E006, E010, E030 at line 20
// mistakes: 4
workflow w
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
model n on gpu {
  gguf "n.gguf"
  wieghts 8 GiB
  layers 8 kv_heads 8 head_dim 64
}
model o on gpu {
  gguf "o.gguf"
  ctx 16z
  weights 4 GiB
  layers 8 kv_heads 8 head_dim 64
}
stage gate {
  model gatekeeper
  prompt "Is there a claim in {{evidence}}?"
  reads client
  returns { grounds: bool }
  stop when not grnds
}
