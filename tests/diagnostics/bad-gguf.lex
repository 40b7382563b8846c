// expect: E056 at line 7
workflow w
pool p {
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p {
  gguf "models/broken.gguf"
}
