// expect: E058 at line 8
workflow w
pool p {
  gpus 0
  vram 24 GiB
  serve ollama at "http://127.0.0.1:11434"
}
model m on p {
  tag "gemma3:12b"
  weights 8 GiB
}
