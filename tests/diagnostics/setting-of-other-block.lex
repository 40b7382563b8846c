// expect: E006 at line 5
workflow w
pool p {
  serve llama_cpp at "http://127.0.0.1:1"
  ctx 8k
}
model m on p { gguf "x.gguf" }
