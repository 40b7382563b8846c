// expect: E063 at line 10
workflow w
pool p {
  gpus 0
  vram 32 GiB
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p {
  gguf "models/small.gguf"
  ctx 32k
}
