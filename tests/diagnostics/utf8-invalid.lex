// expect: E002
workflow w "café in Latin-1"
