// expect: E111 at line 16
// A box with no width.
workflow production "Plaintiff's first production"

sources collected {
  files "maria-rivera/**"
}

production vol001 {
  reads     collected
  volume    "VOL001"
  bates     "RIVERA" start 1 width 7
  legend    confidential "CONFIDENTIAL"
  legend    aeo "HIGHLY CONFIDENTIAL – ATTORNEYS' EYES ONLY"
  designate confidential "maria-rivera/**"
  redact    box "maria-rivera/letters/letter.pdf" page 1 at 72, 90, 0, 14 as "PRIVILEGE"
}
