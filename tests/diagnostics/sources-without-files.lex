// expect: E074
workflow w
sources client {
  description "Client materials"
}
