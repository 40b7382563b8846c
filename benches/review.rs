//! The review page for a 2,000-claim draft over 10,000 pages of generated evidence (the
//! corpus of `benches/verify.rs`): its size, the time `lexrun verify --html` takes against
//! `lexrun verify --json` on the same files, and the time the page takes to open and become
//! interactive in headless Chromium (from navigation to the end of the page's script, as the
//! browser measures it, and as seen from outside over the DevTools pipe).
//! Targets: under 5 MB; interactive in under 1 s.
//!
//! Run: `cargo bench --bench review` (needs Debian's `chromium`: `scripts/install-tools`).
//! With `LEXRUN_BENCH_DIR=DIR` the generated files and the page are kept in DIR.

#[path = "../tests/support/browser.rs"]
mod browser;
#[path = "../tests/support/corpus.rs"]
mod corpus;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PAGES: usize = 10_000;
const PLANTED: usize = 1_000; // each plants a fact and a Bates number: 2,000 claims
const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir =
        std::env::var_os("LEXRUN_BENCH_DIR").map_or_else(|| tmp.path().to_path_buf(), Into::into);
    let sources = dir.join("sources");
    std::fs::create_dir_all(&sources).unwrap();
    let c = corpus::generate(PAGES, PLANTED, 42);
    for (name, pages) in &c.files {
        std::fs::write(sources.join(name), pages.join("\u{000C}")).unwrap();
    }
    let draft = dir.join("draft.md");
    std::fs::write(&draft, &c.draft).unwrap();
    drop(c);

    let exe = env!("CARGO_BIN_EXE_lexrun");
    let verify = |flag: &str| {
        let t = Instant::now();
        let out = Command::new(exe)
            .args(["verify", flag, "--sources"])
            .arg(&sources)
            .arg(&draft)
            .stderr(Stdio::null())
            .output()
            .expect("lexrun runs");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "lexrun verify {flag} failed"
        );
        (t.elapsed(), out.stdout)
    };
    // Taking turns, so that a busy moment on the machine falls on both.
    let (mut html_t, mut json_t) = (Vec::new(), Vec::new());
    let mut page = Vec::new();
    let mut claims = 0;
    for _ in 0..RUNS {
        let (t, out) = verify("--json");
        json_t.push(t.as_secs_f64());
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        claims = v["claims"].as_array().map_or(0, Vec::len);
        let (t, out) = verify("--html");
        html_t.push(t.as_secs_f64());
        page = out;
    }
    let file = dir.join("review.html");
    std::fs::write(&file, &page).unwrap();
    let mb = page.len() as f64 / 1e6;
    let (html_s, json_s) = (median(html_t), median(json_t));
    println!("review page: {claims} claims over {PAGES} pages of evidence");
    println!(
        "size: {mb:.2} MB ({:.2} × the 5 MB target; no page images: the evidence is text)",
        mb / 5.0
    );
    println!(
        "lexrun verify --html: {:.0} ms vs --json {:.0} ms ({:.2} ×), median of {RUNS}",
        html_s * 1e3,
        json_s * 1e3,
        html_s / json_s
    );

    let mut b = match browser::Browser::launch(1280, 900) {
        Ok(b) => b,
        Err(why) => {
            println!("time to interactive: not measured: {why}");
            return;
        }
    };
    let ready = "document.body && document.body.getAttribute('data-ready') === '1'";
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        b.open(std::path::Path::new("/dev/null"), "true");
        let t: Duration = b.open(&file, ready);
        outside.push(t.as_secs_f64() * 1e3);
        inside.push(b.eval("window.reviewReady").as_f64().unwrap_or(f64::NAN));
        let marks = b.eval("document.querySelectorAll('#draft mark.c[id]').length");
        assert_eq!(marks.as_u64(), Some(claims as u64), "every claim is marked");
    }
    let (inside, outside) = (median(inside), median(outside));
    println!(
        "time to interactive in headless Chromium: {inside:.0} ms from navigation start (the page's own clock; {:.2} × the 1 s target), {outside:.0} ms from the navigate command to the ready flag seen over the DevTools pipe ({:.2} ×), median of {RUNS}",
        inside / 1000.0,
        outside / 1000.0
    );
}
