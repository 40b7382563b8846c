// expect: E066 at line 16
workflow w
pool board {
  gpus 0, 1, 2, 3
  link nvlink
  vram 4 x 32 GiB
  gpu v100_sxm2
  serve llama_cpp at "http://127.0.0.1:1"
}
model dense on board {
  gguf "models/Qwen2.5-32B-Instruct-Q8_0.gguf"
  weights 32.5 GiB
  params 32.8B
  layers 64  kv_heads 8  head_dim 128
  ctx 8k
  min_decode 40 tok/s
}
