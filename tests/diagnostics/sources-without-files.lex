// expect: E074 at line 3
workflow w
sources client {
  description "Client materials"
}
