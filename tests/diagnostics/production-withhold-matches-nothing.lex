// expect: E113 at line 17
// A withholding pattern with a misspelt folder: it withholds nothing.
workflow production "Plaintiff's first production"

matter "matters/smith"

sources collected {
  files "intake/**"
}

production vol001 {
  reads     collected
  volume    "VOL001"
  bates     "SMITH" start 1 width 6
  legend    confidential "CONFIDENTIAL"
  designate confidential "intake/**"
  withhold  "intkae/privileged/**" as "Attorney-Client Privilege"
  redact    ssn as "PII"
}
