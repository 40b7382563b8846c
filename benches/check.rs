//! `lexrun check` on the affidavit example (with the cluster file it imports and the stdlib
//! prompts) and on the generated 1,000-stage workflow, in one run. Targets: 10 ms wall for the
//! affidavit, 50 ms for the large workflow.
//!
//! Run: `cargo bench --bench check`. It times the release binary end to end (process start,
//! read, parse, check, diagnostics) and the library in process, and reports medians as ratios
//! to the targets.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/bigflow.rs"]
mod bigflow;

const RUNS: usize = 30;

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// (end to end, in process) medians of checking `path`, which must pass.
fn time(path: &Path) -> (Duration, Duration) {
    let exe = env!("CARGO_BIN_EXE_lexrun");
    let utf8 = camino::Utf8Path::from_path(path).expect("utf-8 path");
    let mut lib = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let checked = lexrun::check::check_path(utf8);
        lib.push(t.elapsed());
        assert!(
            !checked.has_errors(),
            "{}",
            lexrun::diagnostic::render(&checked.diagnostics, &checked.sources, false)
        );
    }
    let mut wall = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let status = Command::new(exe)
            .arg("check")
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("lexrun runs");
        wall.push(t.elapsed());
        assert!(
            status.success(),
            "lexrun check failed on {}",
            path.display()
        );
    }
    (median(&mut wall), median(&mut lib))
}

fn main() {
    let affidavit = Path::new(env!("CARGO_MANIFEST_DIR")).join("workflows/affidavit.lex");
    let dir = tempfile::tempdir().expect("temp dir");
    let big = dir.path().join("big.lex");
    std::fs::write(&big, bigflow::generate()).expect("write workflow");

    let (a_wall, a_lib) = time(&affidavit);
    let (b_wall, b_lib) = time(&big);
    println!("lexrun check workflows/affidavit.lex (end to end, median of {RUNS}): {:.2} ms = {:.2} × the 10 ms target", ms(a_wall), ms(a_wall) / 10.0);
    println!("  in process:                                              {:.2} ms = {:.2} × the 10 ms target", ms(a_lib), ms(a_lib) / 10.0);
    println!("lexrun check of {} stages (end to end, median of {RUNS}):     {:.2} ms = {:.2} × the 50 ms target", bigflow::STAGES, ms(b_wall), ms(b_wall) / 50.0);
    println!("  in process:                                              {:.2} ms = {:.2} × the 50 ms target", ms(b_lib), ms(b_lib) / 50.0);
}
