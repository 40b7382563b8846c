workflow exhibits "Stamp, bind and index the exhibits, then check the draft against them"

// CPU only: no model and no GPU. Stamps Bates numbers on every exhibit, binds them into one
// PDF with slip sheets and bookmarks, writes the exhibit index, reads the text of every page
// (OCR where a page has no text layer) and checks the draft declaration against it.

matter "matters/smith-v-acme"

sources exhibits {
  files       "exhibits/**/*.pdf", "exhibits/**/*.png", "exhibits/**/*.jpg", "exhibits/**/*.tif"
  bates       "SMITH" start 1 width 6
  description "Exhibits to the declaration of Jane Smith (the client letter is a scan)"
}

tool stamped runs bates {
  reads     exhibits
  position  bottom-right
  font_size 9
}

tool binder runs merge after stamped {
  reads       stamped
  slip_sheets on
  bookmarks   on
  title       "Exhibits to the Declaration of Jane Smith"
}

tool index runs index after stamped {
  reads  stamped
  title  "Exhibit index"
  format both
}

tool text runs ocr after stamped {
  reads stamped
  lang  "eng"
  dpi   300
}

tool check runs verify-draft after text {
  reads text
  draft "drafts/affidavit-draft.md"
}

output "exhibits-binder.pdf" from binder
output "exhibit-index.md"    from index
output "draft-check.md"      from check
