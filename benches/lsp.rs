//! Diagnostics latency of `lexrun lsp`: the time from sending a one-line `didChange` (an
//! incremental change, as editors send) to receiving the `publishDiagnostics` for that
//! version, on the affidavit example (target 10 ms) and on the generated 1,000-stage workflow
//! of the plan benchmark (target 50 ms); and the debounce: 30 edits sent in a burst, without
//! waiting, must cost at most 2 checks (the server counts them: `lexrun/stats`).
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
const BURST: usize = 30;

/// The change that turns line `line` of `from` into `to`'s.
fn line_change(from: &str, to: &str, line: usize) -> serde_json::Value {
    let old = from.lines().nth(line).expect("the line");
    let new = to.lines().nth(line).expect("the line");
    serde_json::json!([{
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": old.len()}},
        "text": new,
    }])
}

struct Measured {
    times: Vec<Duration>,
    /// Checks the burst of edits cost, and the time from its last edit to its diagnostics.
    burst_checks: u64,
    burst_wait: Duration,
}

fn measure(path: &std::path::Path, text: &str, edit: (&str, &str)) -> Measured {
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
    let line = text[..text.find(edit.0).expect("the edit applies")]
        .matches('\n')
        .count();
    let forth = line_change(text, &edited, line);
    let back = line_change(&edited, text, line);
    let mut times = Vec::new();
    let mut version = 1;
    for i in 0..EDITS {
        version += 1;
        let change = if i % 2 == 0 { &forth } else { &back };
        let t = Instant::now();
        c.change_ranges(&u, version, change.clone());
        c.diagnostics(&u, Some(version));
        times.push(t.elapsed());
    }
    // A burst: 30 edits as fast as they can be sent, then the diagnostics of the last.
    let before = c.request("lexrun/stats", serde_json::Value::Null)["checks"]
        .as_u64()
        .expect("checks");
    for i in 0..BURST {
        version += 1;
        let change = if i % 2 == 0 { &forth } else { &back };
        c.change_ranges(&u, version, change.clone());
    }
    let sent = Instant::now();
    c.diagnostics(&u, Some(version));
    let burst_wait = sent.elapsed();
    let after = c.request("lexrun/stats", serde_json::Value::Null)["checks"]
        .as_u64()
        .expect("checks");
    c.shutdown();
    times.sort();
    Measured {
        times,
        burst_checks: after - before,
        burst_wait,
    }
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

/// Where a check's time goes, in process: the parse of the whole text, the check of it
/// (parse included), and the check again after a one-line edit with the parse of the other
/// declarations reused, as the server runs it.
fn phases(path: &std::path::Path, text: &str, edit: (&str, &str)) -> String {
    let path = camino::Utf8Path::from_path(path).expect("utf-8 path");
    let edited = text.replacen(edit.0, edit.1, 1);
    let median = |f: &mut dyn FnMut()| {
        let mut t: Vec<Duration> = (0..EDITS / 2)
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed()
            })
            .collect();
        t.sort();
        t[t.len() / 2].as_secs_f64() * 1e3
    };
    let parse = median(&mut || {
        std::hint::black_box(lexrun::syntax::parse(text, 0));
    });
    let mut reuse = lexrun::syntax::Reuse::default();
    let mut flip = false;
    let reused = median(&mut || {
        flip = !flip;
        let t = if flip { &edited } else { text };
        let c =
            lexrun::check::check_bytes_reusing(path, t.as_bytes().to_vec(), &|_| None, &mut reuse);
        assert!(!c.has_errors());
    });
    format!("parse alone {parse:.1} ms; check reusing the parse of unchanged declarations {reused:.1} ms")
}

fn report(what: &str, m: &Measured, check: Duration, target_ms: f64) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let times = &m.times;
    let median = ms(times[times.len() / 2]);
    let p95 = ms(times[times.len() * 95 / 100]);
    println!(
        "{what}: one-line didChange → publishDiagnostics, median {median:.1} ms (p95 {p95:.1} ms) over {} edits = {:.2} × the {target_ms:.0} ms target; `check` alone in process {:.1} ms (the server takes {:.2} × that)",
        times.len(),
        median / target_ms,
        ms(check),
        median / ms(check)
    );
    println!(
        "{what}: {BURST} edits in a burst cost {} checks (target ≤ 2, {:.2} × it); their diagnostics {:.1} ms after the last edit",
        m.burst_checks,
        m.burst_checks as f64 / 2.0,
        ms(m.burst_wait)
    );
}

fn main() {
    let affidavit = std::path::Path::new("workflows/affidavit.lex");
    let text = std::fs::read_to_string(affidavit).expect("the example");
    let m = measure(affidavit, &text, ("timeout 20m", "timeout 21m"));
    let check = check_alone(affidavit, &text);
    report("affidavit example", &m, check, 10.0);
    println!(
        "affidavit example: in process, {}",
        phases(affidavit, &text, ("timeout 20m", "timeout 21m"))
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let big = dir.path().join("big.lex");
    let text = bigflow::generate();
    std::fs::write(&big, &text).expect("write workflow");
    let m = measure(&big, &text, ("timeout 10m", "timeout 11m"));
    let check = check_alone(&big, &text);
    report(
        &format!(
            "generated workflow ({} stages, {} KiB)",
            bigflow::STAGES,
            text.len() / 1024
        ),
        &m,
        check,
        50.0,
    );
    println!(
        "generated workflow: in process, {}",
        phases(&big, &text, ("timeout 10m", "timeout 11m"))
    );
}
