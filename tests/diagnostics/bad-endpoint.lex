// expect: E060 at line 4
workflow w
pool p {
  serve llama_cpp at "127.0.0.1:8081"
}
model m on p { gguf "x.gguf" }
