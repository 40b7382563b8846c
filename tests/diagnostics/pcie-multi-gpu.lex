// expect: E054 at line 5
workflow w
pool p {
  gpus 2, 3
  link pcie
  vram 32 GiB + 16 GiB
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p { gguf "x.gguf"  weights 4 GiB  layers 8 kv_heads 8 head_dim 64 }
