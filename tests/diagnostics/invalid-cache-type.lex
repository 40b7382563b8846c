// expect: E007 at line 8
workflow w
pool p {
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p {
  gguf "x.gguf"
  kv q3_k
  flash_attn on
}
