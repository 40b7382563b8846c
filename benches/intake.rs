//! Reading intake, each side by side with the nearest command-line tool in the same run:
//!
//! 1. A 1,000-page PDF's text layer: `lexrun text --no-cache` against poppler's `pdftotext`.
//! 2. A 200-message mailbox export (mbox) whose messages have plain and HTML bodies and a
//!    CSV and a text attachment each: `lexrun text --no-cache` against a Python script on the
//!    standard library's `mailbox` and `email` packages (benches/intake_mailbox.py). There is
//!    no Debian command that turns a mailbox into text; Python's MIME parser is the one every
//!    machine with python3 has, and the script does the same work: parse every header,
//!    undo base64 and quoted-printable, decode charsets, and walk every part, attachments
//!    included, printing the text.
//!
//! Target: lexrun's wall time ≤ 1.0 × the tool's for each. Both sides are whole processes
//! writing their text to /dev/null; medians of five runs.
//!
//! Run: `cargo bench --bench intake` (needs poppler-utils and python3).

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/pdf.rs"]
mod pdf;

const PAGES: usize = 1_000;
const MESSAGES: usize = 200;
const RUNS: usize = 5;

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

fn median(mut f: impl FnMut() -> Duration) -> Duration {
    let mut v: Vec<Duration> = (0..RUNS).map(|_| f()).collect();
    v.sort();
    v[v.len() / 2]
}

fn pdf_file(path: &std::path::Path) {
    let texts: Vec<String> = (0..PAGES)
        .map(|p| {
            (0..40)
                .map(|line| format!("Exhibit page {p}, line {line}: rent of $1,250.00 fell due on March 1, 2024."))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let pages: Vec<pdf::PageSpec> = texts.iter().map(|t| pdf::page(t)).collect();
    std::fs::write(path, pdf::pdf(&pages)).unwrap();
}

/// Base64 without line breaks over 76 columns, as mail clients write it.
fn base64(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for (i, c) in data.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            s.push_str("\r\n");
        }
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn mailbox(path: &std::path::Path) {
    let mut m = String::new();
    for i in 0..MESSAGES {
        let mut csv = String::from("Date,Amount,Note\r\n");
        for r in 0..40 {
            let _ = write!(
                csv,
                "2024-03-{:02},\"$1,{r:03}.00\",rent for flat {i}\r\n",
                r % 28 + 1
            );
        }
        let note = "The tenant reported the leak again; the landlord did not reply.\r\n".repeat(30);
        let body = "Dear counsel,\r\n\r\nPlease find the ledger attached. The rent fell due on March 1, 2024.\r\n".repeat(5);
        let _ = write!(
            m,
            "From ann@example.com Tue Mar  5 10:{:02}:00 2024\r\n\
             From: Ann Lee <ann@example.com>\r\nTo: counsel@example.com\r\n\
             Subject: Ledger {i}\r\nDate: Tue, 5 Mar 2024 10:{:02}:00 +0000\r\n\
             MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b{i}\"\r\n\r\n\
             --b{i}\r\nContent-Type: multipart/alternative; boundary=\"a{i}\"\r\n\r\n\
             --a{i}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n{body}\r\n\
             --a{i}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body><p>{}</p></body></html>\r\n\
             --a{i}--\r\n\
             --b{i}\r\nContent-Type: text/csv; name=\"ledger.csv\"\r\nContent-Disposition: attachment; filename=\"ledger.csv\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n\
             --b{i}\r\nContent-Type: text/plain; name=\"note.txt\"\r\nContent-Disposition: attachment; filename=\"note.txt\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n\
             --b{i}--\r\n\r\n",
            i % 60,
            i % 60,
            body.replace("\r\n", "<br>"),
            base64(csv.as_bytes()),
            base64(note.as_bytes()),
        );
    }
    std::fs::write(path, m).unwrap();
}

fn report(what: &str, lex: Duration, other: Duration, tool: &str) {
    println!(
        "{what}: lexrun {:.1} ms, {tool} {:.1} ms = {:.2}× (target ≤ 1.0)",
        lex.as_secs_f64() * 1e3,
        other.as_secs_f64() * 1e3,
        lex.as_secs_f64() / other.as_secs_f64()
    );
}

fn main() {
    let exe = env!("CARGO_BIN_EXE_lexrun");
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("exhibits.pdf");
    pdf_file(&big);
    let mbox = dir.path().join("inbox.mbox");
    mailbox(&mbox);
    println!(
        "inputs: {PAGES}-page PDF ({:.1} MB); {MESSAGES}-message mailbox ({:.1} MB)",
        std::fs::metadata(&big).unwrap().len() as f64 / 1e6,
        std::fs::metadata(&mbox).unwrap().len() as f64 / 1e6
    );
    let lex = median(|| time(Command::new(exe).args(["text", "--no-cache"]).arg(&big)));
    let pdftotext = median(|| time(Command::new("pdftotext").arg(&big).arg("-")));
    report("1,000-page PDF text layer", lex, pdftotext, "pdftotext");
    let lex = median(|| time(Command::new(exe).args(["text", "--no-cache"]).arg(&mbox)));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/intake_mailbox.py");
    let py = median(|| time(Command::new("python3").arg(script).arg(&mbox)));
    report("200-message mailbox", lex, py, "python3 mailbox+email");
}
