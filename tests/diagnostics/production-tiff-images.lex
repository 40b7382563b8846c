// expect: E007 at line 12
// TIFF images are not produced yet.
workflow production "Plaintiff's first production"

sources collected {
  files "maria-rivera/**"
}

production vol001 {
  reads     collected
  bates     "RIVERA" start 1 width 7
  images    tiff
}
