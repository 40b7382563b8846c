// expect: E051 at line 8
workflow w
pool p {
  gpus 0
  vram 32 GiB
  serve llama_cpp at "http://127.0.0.1:1"
}
model big on p {
  gguf "models/huge.gguf"
  ctx 8k
}
