// expect: E015
workflow w
pool p {
  gpus 0
  vram 8 GiB
}
