// expect: E112 at line 16
// A load-file field lexrun does not write.
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
  fields    BEGBATES, ENDBATES, CUSTODIEN
}
