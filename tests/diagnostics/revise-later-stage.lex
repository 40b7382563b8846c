// expect: E022 at line 25
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
stage draft {
  model m
  prompt "d"
}
stage attack {
  model m
  prompt "a"
  returns { passes: bool }
  revise draft until passes
}
