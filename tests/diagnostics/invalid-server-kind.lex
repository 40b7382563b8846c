// expect: E007
workflow w
pool p {
  serve llamacpp at "http://127.0.0.1:1"
}
