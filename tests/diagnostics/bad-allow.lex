// expect: E083 at line 25
workflow w
pool gpu {
  gpus 0
  vram 32 GiB
  serve llama_cpp at "http://127.0.0.1:8081"
}
model m on gpu {
  gguf "models/m.gguf"
  weights 8 GiB
  layers 32  kv_heads 8  head_dim 128
  ctx 8k
}
sources client {
  files "intake/*.txt"
}
stage draft {
  model m
  prompt "Draft from {{evidence}}"
  reads client
}
verify draft against client {
  citations must appear
  allow reporter "Betts' Dec."
  allow court "Sup. Ct. of Nowhere"
  allow reporter "  "
}
