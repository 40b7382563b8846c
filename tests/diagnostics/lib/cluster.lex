// A shared cluster file, imported by the corpus cases that test labels across files.

pool board_a {
  host    "threadripper"
  gpus    4, 5, 8, 9
  link    nvlink
  vram    4 x 32 GiB
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8081"
}

pool pair_01 {
  host    "threadripper"
  gpus    0, 1
  link    nvlink
  vram    2 x 32 GiB
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8083"
}

model clerk on board_a {
  gguf    "models/clerk.gguf"
  weights 8 GiB
  layers 32  kv_heads 8  head_dim 128
  ctx 8k
}

model gatekeeper on pair_01 {
  gguf    "models/gatekeeper.gguf"
  weights 30.3 GiB
  layers 48  kv_heads 4  head_dim 128
  ctx 8k  kv q8_0  flash_attn on
}
