// expect: E006 at line 4
workflow w
pool p {
  hots "gpu-1"
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p { gguf "x.gguf" }
