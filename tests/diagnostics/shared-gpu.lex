// expect: E050 at line 10
workflow w
pool a {
  gpus 0, 1
  vram 2 x 32 GiB
  link nvlink
  serve llama_cpp at "http://127.0.0.1:1"
}
pool b {
  gpus 1, 2
  vram 2 x 32 GiB
  link nvlink
  serve llama_cpp at "http://127.0.0.1:2"
}
model x on a { gguf "x.gguf"  weights 4 GiB  layers 8 kv_heads 8 head_dim 64 }
model y on b { gguf "y.gguf"  weights 4 GiB  layers 8 kv_heads 8 head_dim 64 }
