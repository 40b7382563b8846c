// expect: E009 at line 5
workflow w
pool p {
  slots 1
  slots 2
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p { gguf "x.gguf" }
