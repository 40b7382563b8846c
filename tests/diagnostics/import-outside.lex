// expect: E018 at line 3
workflow w
use "../../../common/pools.lex"
pool p {
  serve llama_cpp at "http://127.0.0.1:8081"
}
model m on p {
  gguf "x.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 4k
}
stage s {
  model m
  prompt "Say hello."
}
output "out.md" from s unverified
