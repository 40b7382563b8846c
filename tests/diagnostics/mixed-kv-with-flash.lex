// expect: E053 at line 8
workflow w
pool p {
  serve llama_cpp at "http://127.0.0.1:1"
}
model m on p {
  gguf "x.gguf"
  kv_k q8_0
  kv_v q4_0
  flash_attn on
}
