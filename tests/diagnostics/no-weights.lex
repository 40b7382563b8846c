// expect: E057 at line 9
workflow w
pool p {
  gpus 0
  vram 24 GiB
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p {
  gguf "models/not-downloaded.gguf"
  layers 8 kv_heads 8 head_dim 64
}
