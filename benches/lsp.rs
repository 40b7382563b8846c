//! Diagnostics latency of `lexrun lsp`: the time from sending `didChange` to receiving the
//! `publishDiagnostics` for that version, on the affidavit example (target 20 ms) and on the
//! generated 1,000-stage workflow of the plan benchmark (target 100 ms).
//!
//! Run: `cargo bench --bench lsp`. The release binary is started as a process and spoken to
//! over stdio, as an editor does; each edit changes one stage's timeout, alternating, so every
//! check is a real one. Reported as medians and 95th percentiles, as ratios to the targets, and
//! against `check` of the same text in process (what the server cannot avoid doing).

use std::time::{Duration, Instant};

#[path = "../tests/support/bigflow.rs"]
mod bigflow;
#[path = "../tests/support/lsp.rs"]
mod lsp;

const EDITS: usize = 60;

fn measure(path: &std::path::Path, text: &str, edit: (&str, &str)) -> Vec<Duration> {
    let (mut c, _) = lsp::Client::start(env!("CARGO_BIN_EXE_lexrun"));
    let u = lsp::uri(path);
    c.open(&u, text);
    let d = c.diagnostics(&u, Some(1));
    assert!(
        d.iter().all(|d| d["severity"] != 1),
        "the workflow has errors: {d:?}"
    );
    let edited = text.replacen(edit.0, edit.1, 1);
    assert_ne!(edited, text, "the edit applies");
    let mut times = Vec::new();
    for i in 0..EDITS {
        let version = 2 + i as i64;
        let body = if i % 2 == 0 { &edited } else { text };
        let t = Instant::now();
        c.change(&u, version, body);
        c.diagnostics(&u, Some(version));
        times.push(t.elapsed());
    }
    c.shutdown();
    times.sort();
    times
}

/// The floor: `check` of the same text in this process, as the server must run it.
fn check_alone(path: &std::path::Path, text: &str) -> Duration {
    let path = camino::Utf8Path::from_path(path).expect("utf-8 path");
    let mut times: Vec<Duration> = (0..EDITS / 2)
        .map(|_| {
            let t = Instant::now();
            let checked = lexrun::check::check_bytes(path, text.as_bytes().to_vec());
            assert!(!checked.has_errors());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn report(what: &str, times: &[Duration], check: Duration, target_ms: f64) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = ms(times[times.len() / 2]);
    let p95 = ms(times[times.len() * 95 / 100]);
    println!(
        "{what}: didChange → publishDiagnostics, median {median:.1} ms (p95 {p95:.1} ms) over {} edits = {:.2} × the {target_ms:.0} ms target; `check` alone in process {:.1} ms (the server takes {:.2} × that)",
        times.len(),
        median / target_ms,
        ms(check),
        median / ms(check)
    );
}

fn main() {
    let affidavit = std::path::Path::new("workflows/affidavit.lex");
    let text = std::fs::read_to_string(affidavit).expect("the example");
    let times = measure(affidavit, &text, ("timeout 20m", "timeout 21m"));
    let check = check_alone(affidavit, &text);
    report("affidavit example", &times, check, 20.0);

    let dir = tempfile::tempdir().expect("temp dir");
    let big = dir.path().join("big.lex");
    let text = bigflow::generate();
    std::fs::write(&big, &text).expect("write workflow");
    let times = measure(&big, &text, ("timeout 10m", "timeout 11m"));
    let check = check_alone(&big, &text);
    report(
        &format!(
            "generated workflow ({} stages, {} KiB)",
            bigflow::STAGES,
            text.len() / 1024
        ),
        &times,
        check,
        100.0,
    );
}
