//! Stamping a generated 1,000-page PDF: `lexrun bates` against a PyMuPDF script doing the same
//! (benches/bates_pymupdf.py), side by side. Target: lexrun's wall time ≤ 1.0 × PyMuPDF's.
//!
//! Run: `cargo bench --bench bates` (needs `pip install pymupdf` for the comparison).

use std::process::Command;

#[path = "../tests/support/pdf.rs"]
mod pdf;
#[path = "support/pymupdf.rs"]
mod pymupdf;

use pymupdf::{compare, median, time};

const PAGES: usize = 1_000;
const RUNS: usize = 5;

fn generate(path: &std::path::Path) {
    let texts: Vec<String> = (0..PAGES)
        .map(|p| {
            (0..40)
                .map(|line| format!("Exhibit page {p}, line {line}: the tenant gave written notice of the condition."))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let pages: Vec<pdf::PageSpec> = texts.iter().map(|t| pdf::page(t)).collect();
    std::fs::write(path, pdf::pdf(&pages)).unwrap();
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("exhibits.pdf");
    generate(&input);
    let size = std::fs::metadata(&input).unwrap().len();
    let out = dir.path().join("lexrun");
    let exe = env!("CARGO_BIN_EXE_lexrun");
    let lex = median(
        (0..RUNS)
            .map(|_| {
                time(
                    Command::new(exe)
                        .args(["bates", "--prefix", "SMITH", "-o"])
                        .arg(&out)
                        .arg(&input),
                )
            })
            .collect(),
    );
    println!("input: {PAGES} pages, {:.1} MB", size as f64 / 1e6);
    println!(
        "lexrun bates (median of {RUNS}): {:.1} ms",
        lex.as_secs_f64() * 1e3
    );
    let py_out = dir.path().join("pymupdf.pdf");
    compare(
        "lexrun bates",
        lex,
        RUNS,
        "bates_pymupdf.py",
        &[input.as_ref(), py_out.as_ref(), "SMITH".as_ref()],
    );
}
