// expect: E007 at line 12
// An image format lexrun does not write, close to one it does.
workflow production "Plaintiff's first production"

sources collected {
  files "maria-rivera/**"
}

production vol001 {
  reads     collected
  bates     "RIVERA" start 1 width 7
  images    tif
}
