// expect: E001
workflow w

stage s {
  model m

sources client {
  files "intake/*.txt"
}
