// expect: E004 at line 5
workflow w
pool p {
  gpus 0
  vram 32 GiBs
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p { gguf "x.gguf"  weights 4 GiB  layers 8 kv_heads 8 head_dim 64 }
