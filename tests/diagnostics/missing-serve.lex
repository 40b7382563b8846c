// expect: E015 at line 3
workflow w
pool p {
  gpus 0
  vram 8 GiB
}
