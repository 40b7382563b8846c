// expect: E061 at line 6
workflow w
pool p {
  gpus 4, 5, 8, 9
  link nvlink
  vram 2 x 32 GiB
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p { gguf "x.gguf"  weights 4 GiB  layers 8 kv_heads 8 head_dim 64 }
