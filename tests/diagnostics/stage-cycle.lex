// expect: E020 at line 21
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
stage a after b {
  model m
  prompt "a"
}
stage b after a {
  model m
  prompt "b"
}
