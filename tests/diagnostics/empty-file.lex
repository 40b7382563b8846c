// expect: E003 at line 1
// nothing here yet
