// expect: E007 at line 6
workflow w
pool p {
  gpus 0
  vram 24 GiB
  gpu rtx3080
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p { gguf "x.gguf"  weights 4 GiB  layers 8 kv_heads 8 head_dim 64 }
