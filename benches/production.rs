//! Stamping, designating and redacting a generated 1,000-page PDF: a `production` volume
//! written by `lexrun` from a workflow against a PyMuPDF script doing the same
//! (benches/production_pymupdf.py: the Bates number bottom-right, the legend bottom-left,
//! every Social Security number found, `add_redact_annot` and `apply_redactions`), side by
//! side. Target: lexrun's wall time ≤ 1.0 × PyMuPDF's.
//!
//! lexrun's volume is the whole of what a user runs: the document collected and read by
//! `pdftotext`, every page produced with its redacted glyphs taken out of its content stream
//! (the generated pages are text, so none needs rasterising), the text, load files and
//! reconciliation written, and everything read back (every page's bytes, decompressed
//! streams and text layer, and every other file) before the volume is put in place.
//!
//! Run: `cargo bench --bench production` (needs poppler-utils and tesseract-ocr, and
//! `pip install pymupdf` for the comparison). `PRODUCTION_BENCH_RUNS` sets how many runs
//! each side's median is of (3 unless set).

use std::path::Path;
use std::process::Command;

#[path = "../tests/support/pdf.rs"]
mod pdf;
#[path = "support/pymupdf.rs"]
mod pymupdf;

use pymupdf::{compare, median, time};

const PAGES: usize = 1_000;
const LINES: usize = 40;

/// Page `p`'s text: forty lines, two of them with a Social Security number.
fn page_text(p: usize) -> String {
    (0..LINES)
        .map(|line| match line {
            7 | 23 => format!(
                "Exhibit page {p}, line {line}: the tenant's SSN is {:03}-{:02}-{:04} on the form.",
                100 + p % 800,
                10 + (p + line) % 90,
                1000 + (p * 7 + line) % 9000
            ),
            _ => format!(
                "Exhibit page {p}, line {line}: the tenant gave written notice of the condition."
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const WORKFLOW: &str = r#"workflow bench "Production benchmark"

matter "m"

sources collected {
  files "smith/**"
}

production vol001 {
  reads  collected
  volume "VOL001"
  bates  "SMITH" start 1 width 6
  images pdf
  legend    confidential "CONFIDENTIAL"
  designate confidential "**"
  redact    ssn as "PII"
}
"#;

fn generate(dir: &Path, pages: usize) -> std::path::PathBuf {
    let texts: Vec<String> = (0..pages).map(page_text).collect();
    let specs: Vec<pdf::PageSpec> = texts.iter().map(|t| pdf::page(t)).collect();
    let matter = dir.join("m/smith");
    std::fs::create_dir_all(&matter).unwrap();
    let input = matter.join("exhibits.pdf");
    std::fs::write(&input, pdf::pdf(&specs)).unwrap();
    std::fs::write(dir.join("production.lex"), WORKFLOW).unwrap();
    input
}

fn main() {
    let runs: usize = std::env::var("PRODUCTION_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let pages: usize = std::env::var("PRODUCTION_BENCH_PAGES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(PAGES)
        .max(1);
    let dir = tempfile::tempdir().unwrap();
    let input = generate(dir.path(), pages);
    let size = std::fs::metadata(&input).unwrap().len();
    println!(
        "input: {pages} pages, {:.1} MB, {} Social Security numbers",
        size as f64 / 1e6,
        2 * pages
    );
    let exe = env!("CARGO_BIN_EXE_lexrun");
    let store = dir.path().join("store");
    let lex = median(
        (0..runs)
            .map(|i| {
                let out = dir.path().join(format!("out-{i}"));
                time(
                    Command::new(exe)
                        .current_dir(dir.path())
                        .env("LEXRUN_STORE", store.join(i.to_string()))
                        .env("XDG_DATA_HOME", dir.path().join(format!("data-{i}")))
                        .env_remove("LEXRUN_LEDGER")
                        .arg("production.lex")
                        .arg("--out")
                        .arg(&out),
                )
            })
            .collect(),
    );
    println!(
        "lexrun production (median of {runs}): {:.1} ms",
        lex.as_secs_f64() * 1e3
    );
    let py_out = dir.path().join("pymupdf.pdf");
    compare(
        "lexrun production",
        lex,
        runs,
        "production_pymupdf.py",
        &[
            input.as_ref(),
            py_out.as_ref(),
            "SMITH".as_ref(),
            "CONFIDENTIAL".as_ref(),
        ],
    );
}
