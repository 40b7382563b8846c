// expect: E064 at line 3
workflow w
pool spare {
  serve llama_cpp at "http://127.0.0.1:1"
}
