// The reference cluster, shared by the example workflows.
//
// Host `threadripper`: twelve 32 GB V100s in two NVLink boards of four ({4,5,8,9} and
// {6,7,10,11}), an NVLink pair {0,1} and a mixed PCIe pair {2,3}. Host `rtx-host`: RTX 3090s
// under Ollama. Every model lives inside one board and stays loaded; stages take turns.
//
// A GGUF that is not on this machine is checked by its declared `weights`, attention shape
// and parameters (all, and active per token): memory fit and decode speed.

pool board_a {
  host    "threadripper"
  gpus    4, 5, 8, 9
  link    nvlink
  vram    4 x 32 GiB
  gpu     v100_sxm2
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8081"
}

pool board_b {
  host    "threadripper"
  gpus    6, 7, 10, 11
  link    nvlink
  vram    4 x 32 GiB
  gpu     v100_sxm2
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8082"
}

pool pair_01 {
  host    "threadripper"
  gpus    0, 1
  link    nvlink
  vram    2 x 32 GiB
  gpu     v100_sxm2
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8083"
}

// One card of this pair has 16 GB, so the split is uneven; PCIe between them costs speed.
pool pair_23 {
  host    "threadripper"
  gpus    2, 3
  link    pcie
  vram    32 GiB + 16 GiB
  gpu     v100_pcie
  compute 7.0
  serve   llama_cpp at "http://127.0.0.1:8084"
}

pool rtx {
  host    "rtx-host"
  gpus    0
  vram    24 GiB
  gpu     rtx3090
  compute 8.6
  serve   ollama at "http://127.0.0.1:11434"
}

model gatekeeper on pair_01 {
  gguf    "models/Qwen3-30B-A3B-Instruct-2507-Q8_0.gguf"
  weights 30.3 GiB
  params  30.5B active 3.3B
  layers 48  kv_heads 4  head_dim 128
  ctx 32k  kv q8_0  flash_attn on
  temperature 0
  min_decode 40 tok/s
}

model drafter on board_a {
  gguf    "models/Qwen3.6-35B-A3B-Q8_0.gguf"
  weights 34.7 GiB
  params  35B active 3B
  layers 40  kv_heads 2  head_dim 256
  ctx 64k  kv q4_0  flash_attn on
  temperature 0.3  top_p 0.9
  min_decode 40 tok/s
}

model reasoner on board_b {
  gguf    "models/Qwen3.5-122B-A10B-Q6_K.gguf"
  weights 93.8 GiB
  params  122B active 10B
  layers 48  kv_heads 2  head_dim 256
  ctx 128k  kv q8_0  flash_attn on
  temperature 0.2
  min_decode 40 tok/s
}

model adversary on pair_23 {
  gguf    "models/Qwen3-30B-A3B-Thinking-2507-Q8_0.gguf"
  weights 30.3 GiB
  params  30.5B active 3.3B
  layers 48  kv_heads 4  head_dim 128
  ctx 32k  kv q8_0  flash_attn on
  temperature 0.6
  min_decode 40 tok/s
}

model extractor on rtx {
  tag     "gemma4:26b"
  weights 17 GiB
  params  26B active 4B
  layers 30  kv_heads 8  head_dim 128
  ctx 32k
  temperature 0
  min_decode 40 tok/s
}
