// expect: E005 at line 4
workflow w
pool p {
  slots 99999999999999999999
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p { gguf "x.gguf" }
