//! `check` + `plan --format json` on a generated workflow of 1,000 stages, 200 models,
//! 100 pools and 50 verify blocks. Targets: under 50 ms wall and 50 MB peak memory.
//!
//! Run: `cargo bench --bench plan`. It times the release binary end to end (process start,
//! read, parse, check, lower, JSON to stdout) and reports medians as ratios to the targets.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/bigflow.rs"]
mod bigflow;
use bigflow::{generate, MODELS, POOLS, STAGES, VERIFY};

const RUNS: usize = 30;

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.lex");
    let text = generate();
    std::fs::write(&path, &text).expect("write workflow");
    let exe = env!("CARGO_BIN_EXE_lexrun");

    // In-process: the library alone, without process start-up.
    let utf8 = camino::Utf8Path::from_path(&path).expect("utf-8 temp path");
    let mut lib_times = Vec::new();
    let mut json_len = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let checked = lexrun::check::check_path(utf8);
        let w = checked.workflow.unwrap_or_else(|| {
            panic!(
                "{}",
                lexrun::diagnostic::render(&checked.diagnostics, &checked.sources, false)
            )
        });
        json_len = lexrun::plan::lower(&w).to_json().len();
        lib_times.push(t.elapsed());
    }

    // End to end: the release binary as a user runs it.
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let status = Command::new(exe)
            .args(["plan", "--format", "json"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("lexrun runs");
        times.push(t.elapsed());
        assert!(
            status.success(),
            "lexrun plan failed on the generated workflow"
        );
    }
    let peak_kib = {
        // Largest resident set of any child waited for so far: every child ran the same plan.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
        usage.ru_maxrss as f64
    };
    let wall = median(&mut times);
    let lib = median(&mut lib_times);
    let peak_mb = peak_kib * 1024.0 / 1e6;
    println!("workflow: {STAGES} stages, {MODELS} models, {POOLS} pools, {VERIFY} verify blocks; {} KiB of .lex, {} KiB of plan JSON", text.len() / 1024, json_len / 1024);
    println!("lexrun plan --format json (end to end, median of {RUNS}): {:.1} ms  = {:.2} × the 50 ms target", wall.as_secs_f64() * 1e3, wall.as_secs_f64() * 1e3 / 50.0);
    println!("check + lower + JSON in process (median of {RUNS}):        {:.1} ms  = {:.2} × the 50 ms target", lib.as_secs_f64() * 1e3, lib.as_secs_f64() * 1e3 / 50.0);
    println!("peak resident memory of lexrun:                            {peak_mb:.1} MB  = {:.2} × the 50 MB target", peak_mb / 50.0);
}
