"""The comparison for `cargo bench --bench production`: PyMuPDF stamping each page's Bates
number (Helvetica 9 pt, bottom-right) and the legend (bottom-left), finding every Social
Security number written NNN-NN-NNNN, redacting each (`add_redact_annot`, then
`apply_redactions` on the page) and saving a new file.

Usage: python3 benches/production_pymupdf.py IN.pdf OUT.pdf PREFIX LEGEND
Needs `pip install pymupdf`.
"""
import re
import sys

import fitz  # PyMuPDF

SSN = re.compile(r"\b[0-9]{3}-[0-9]{2}-[0-9]{4}\b")


def main() -> None:
    src, out, prefix, legend = sys.argv[1:5]
    doc = fitz.open(src)
    for i, page in enumerate(doc):
        for ssn in sorted(set(SSN.findall(page.get_text()))):
            for rect in page.search_for(ssn):
                page.add_redact_annot(rect, text="REDACTED – PII", fill=(0, 0, 0))
        page.apply_redactions()
        rect = page.rect
        bates = f"{prefix}{i + 1:06d}"
        width = fitz.get_text_length(bates, fontname="helv", fontsize=9)
        page.insert_text((rect.width - 18 - width, rect.height - 12), bates, fontsize=9, fontname="helv")
        page.insert_text((18, rect.height - 12), legend, fontsize=9, fontname="helv")
    doc.save(out)


if __name__ == "__main__":
    main()
