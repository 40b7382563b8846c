workflow production "Plaintiff's first production volume, numbered, designated and redacted"

// CPU only. Images every collected document as per-page PDFs stamped with a Bates number
// (bottom-right) and its confidentiality legend (bottom-left), produces the spreadsheet
// natively, burns in the redactions, withholds the privileged memo with a privilege log,
// writes the Concordance and Opticon load files, and reads everything back before the
// volume is put in place. `lexrun workflows/production.lex --out DIR` writes DIR/VOL001.

matter "matters/harbor-production"

sources collected {
  files       "maria-rivera/**"
  description "Documents collected from Maria Rivera"
}

production vol001 {
  reads  collected
  volume "VOL001"
  bates  "RIVERA" start 1 width 7
  images pdf

  legend    confidential "CONFIDENTIAL"
  legend    aeo "HIGHLY CONFIDENTIAL – ATTORNEYS' EYES ONLY"
  designate confidential "maria-rivera/**"
  designate aeo "maria-rivera/finance/*-bank-statement.pdf"

  natives "**/*.xlsx"

  redact   ssn as "PII"
  redact   account as "PII"
  withhold "maria-rivera/counsel/**" as "Attorney-Client Privilege" because "Memorandum from counsel giving legal advice on the enforceability of the rent increase"

  fields BEGBATES, ENDBATES, BEGATTACH, ENDATTACH, PGCOUNT, CUSTODIAN, FILENAME, DATESENT, FROM, TO, CC, SUBJECT, CONFIDENTIALITY, NATIVEPATH, TEXTPATH, HASH
}
