// expect: E007 at line 4
workflow w
pool p {
  serve llamacpp at "http://127.0.0.1:1"
}
