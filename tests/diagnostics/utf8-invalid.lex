// expect: E002 at line 2
workflow w "café in Latin-1"
