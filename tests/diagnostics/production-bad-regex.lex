// expect: E111 at line 16
// A declared expression that does not compile.
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
  redact    pattern "ACCT-([0-9]+" as "PII"
}
