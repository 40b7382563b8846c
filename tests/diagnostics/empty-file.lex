// expect: E003
// nothing here yet
