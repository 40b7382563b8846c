// expect: E055 at line 11
workflow w
pool vllm {
  gpus 0
  vram 32 GiB
  compute 7.0
  serve openai at "http://127.0.0.1:8000"
}
model m on vllm {
  tag "Qwen/Qwen3-14B-AWQ"
  quant awq
  weights 10 GiB
  layers 40 kv_heads 8 head_dim 128
}
