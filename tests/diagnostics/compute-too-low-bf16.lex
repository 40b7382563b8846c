// expect: E055 at line 11
workflow w
pool vllm {
  gpus 0
  vram 32 GiB
  compute 7.0
  serve openai at "http://127.0.0.1:8000"
}
model m on vllm {
  tag "google/gemma-3-12b-it"
  dtype bfloat16
  weights 24 GiB
  layers 48 kv_heads 8 head_dim 256
  ctx 4k
}
