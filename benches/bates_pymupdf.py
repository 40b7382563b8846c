"""The comparison for `cargo bench --bench bates`: PyMuPDF stamping the same Bates numbers
(Helvetica 9 pt, bottom-right, 18 pt margin) on every page and saving a new file.

Usage: python3 benches/bates_pymupdf.py IN.pdf OUT.pdf PREFIX
Needs `pip install pymupdf`.
"""
import sys

import fitz  # PyMuPDF


def main() -> None:
    src, out, prefix = sys.argv[1:4]
    doc = fitz.open(src)
    for i, page in enumerate(doc):
        text = f"{prefix}{i + 1:06d}"
        rect = page.rect
        width = fitz.get_text_length(text, fontname="helv", fontsize=9)
        page.insert_text((rect.width - 18 - width, rect.height - 18), text, fontsize=9, fontname="helv")
    doc.save(out)


if __name__ == "__main__":
    main()
