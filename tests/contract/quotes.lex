workflow quotes "Quotations held to the page as the rule says"

// The pool's endpoint is replaced with --endpoint when the tests run; the test writes the
// rule (`quotes must match` or `quotes must match exactly`) into a copy of this file.

matter "matter"

pool gpu {
  host  "test"
  gpus  0
  vram  32 GiB
  serve llama_cpp at "http://127.0.0.1:9"
}

model drafter on gpu {
  gguf    "models/tiny-llama-v3.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
}

sources client {
  files "intake/*.txt"
}

stage draft {
  model  drafter
  prompt """
    {{evidence}}

    Quote the lease.
  """
  reads  client
}

verify draft against client {
  quotes RULE
  on failure flag
}

output "draft.md" from draft appendix verification
