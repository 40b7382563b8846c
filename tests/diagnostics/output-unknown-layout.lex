// expect: E080 at line 23
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
stage s {
  model m
  prompt "Summarise {{evidence}}"
  reads client
}
output "summary.md" from s unverified
output "demand.docx" from s layout leter unverified
