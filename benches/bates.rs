//! Stamping a generated 1,000-page PDF: `lexrun bates` against a PyMuPDF script doing the same
//! (benches/bates_pymupdf.py), side by side. Target: lexrun's wall time ≤ 1.0 × PyMuPDF's.
//!
//! Run: `cargo bench --bench bates` (needs `pip install pymupdf` for the comparison).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};

const PAGES: usize = 1_000;
const RUNS: usize = 5;

fn generate(path: &std::path::Path) {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Times-Roman" },
    );
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for p in 0..PAGES {
        let mut ops = Vec::new();
        for line in 0..40 {
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new("Tf", vec!["F1".into(), 11.into()]));
            ops.push(Operation::new(
                "Td",
                vec![72.into(), (740 - 16 * line).into()],
            ));
            ops.push(Operation::new("Tj", vec![Object::string_literal(format!("Exhibit page {p}, line {line}: the tenant gave written notice of the condition."))]));
            ops.push(Operation::new("ET", vec![]));
        }
        let content = doc.add_object(Stream::new(
            dictionary! {},
            Content { operations: ops }.encode().unwrap(),
        ));
        kids.push(Object::from(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        })));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    doc.save(path).unwrap();
}

fn time(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("command runs");
    assert!(status.success(), "{cmd:?} failed");
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
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
    let has_fitz = Command::new("python3")
        .args(["-c", "import fitz"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_fitz {
        println!("PyMuPDF is not installed: `pip install pymupdf` for the comparison");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/bates_pymupdf.py");
    let py_out = dir.path().join("pymupdf.pdf");
    let py = median(
        (0..RUNS)
            .map(|_| {
                time(
                    Command::new("python3")
                        .arg(script)
                        .arg(&input)
                        .arg(&py_out)
                        .arg("SMITH"),
                )
            })
            .collect(),
    );
    println!(
        "PyMuPDF script (median of {RUNS}): {:.1} ms",
        py.as_secs_f64() * 1e3
    );
    println!(
        "ratio: lexrun bates = {:.2} × PyMuPDF (target ≤ 1.00)",
        lex.as_secs_f64() / py.as_secs_f64()
    );
}
