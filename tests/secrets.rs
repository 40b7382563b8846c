//! Credentials: a pool's API key comes from the environment, goes to that pool's server and
//! no other, and is written nowhere; a password in an endpoint's URL is refused, never sent
//! as Basic auth, and shown redacted in every message.

use crate::support;

use std::fs;
use std::path::Path;

use support::raw::{two_pool_workflow, Raw, Reply};
use support::{stderr, stdout, Lexrun};

const KEY: &str = "sk-firm-7f3a9c1e55b2";

/// Every file under `dir`, as text.
fn all_text(dir: &Path, out: &mut String) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_text(&p, out);
        } else {
            out.push_str(&String::from_utf8_lossy(&fs::read(&p).unwrap()));
        }
    }
}

fn setup(firm: &str, other: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("keys.lex"),
        two_pool_workflow(firm, other, "LEXRUN_TEST_FIRM_KEY", 256),
    )
    .unwrap();
    fs::write(dir.path().join("letter.txt"), "The rent was paid.").unwrap();
    dir
}

fn run(dir: &Path, key: Option<&str>, extra: &[&str]) -> std::process::Output {
    let mut l = Lexrun::new()
        .arg("run")
        .arg(dir.join("keys.lex"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--store")
        .arg(dir.join("store"))
        .arg("--record")
        .arg(dir.join("tape.jsonl"))
        .args(extra)
        .env("RUST_LOG", "debug");
    l = match key {
        Some(k) => l.env("LEXRUN_TEST_FIRM_KEY", k),
        None => l.env_remove("LEXRUN_TEST_FIRM_KEY"),
    };
    l.output()
}

#[test]
fn a_pool_key_goes_to_its_pool_only_and_is_written_nowhere() {
    let firm = Raw::start(&["drafter"], Reply::Text("The rent was paid. ".into()));
    let other = Raw::start(&["gatekeeper"], Reply::Text("Fine. ".into()));
    let dir = setup(&firm.url, &other.url);
    let o = run(dir.path(), Some(KEY), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let firm_calls = firm.requests();
    assert!(!firm_calls.is_empty());
    for r in &firm_calls {
        assert_eq!(
            r.header("authorization").as_deref(),
            Some(format!("Bearer {KEY}").as_str()),
            "{} {}",
            r.method,
            r.path
        );
    }
    assert!(!other.requests().is_empty());
    for r in other.requests() {
        assert!(
            r.header("authorization").is_none(),
            "the other pool got a key"
        );
    }
    let mut written = stdout(&o) + &stderr(&o);
    all_text(dir.path(), &mut written);
    assert!(
        !written.contains(KEY),
        "the key was written into a record, a log or a message"
    );
    // Without the variable, the run does not start, and says which variable.
    let o = run(dir.path(), None, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("LEXRUN_TEST_FIRM_KEY"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn url_credentials_are_refused_redacted_and_never_sent() {
    let firm = Raw::start(&["drafter"], Reply::Text("Paid. ".into()));
    let other = Raw::start(&["gatekeeper"], Reply::Text("Fine. ".into()));
    let with_password = other.url.replace("http://", "http://clerk:hunter2pw@");
    // In the workflow: a check error, shown without the password.
    let dir = setup(&firm.url, &with_password);
    let o = Lexrun::new()
        .arg("check")
        .arg(dir.path().join("keys.lex"))
        .output();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("E060") && e.contains("***@"), "{e}");
    // The message and its help never repeat it (the quoted line of the file is the file's).
    let said: Vec<&str> = e
        .lines()
        .filter(|l| l.trim_start().starts_with(['×', '│']) || l.contains("help:"))
        .collect();
    assert!(!said.iter().any(|l| l.contains("hunter2pw")), "{e}");
    // Given on the command line: the run does not start.
    let dir = setup(&firm.url, &other.url);
    let o = run(
        dir.path(),
        Some(KEY),
        &["--endpoint", &format!("other={with_password}")],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("***@") && !e.contains("hunter2pw"), "{e}");
    for r in other.requests() {
        assert!(r.header("authorization").is_none(), "sent as Basic auth");
    }
    let mut written = String::new();
    if dir.path().join("out").exists() {
        all_text(&dir.path().join("out"), &mut written);
    }
    assert!(!written.contains("hunter2pw"));
}

/// Passwords holding `?`, `/`, `#` or `@`, as people type them: never shown, wherever the
/// address is — a pool's endpoint in the workflow or on the command line, or the ledger.
#[test]
fn passwords_holding_url_punctuation_are_never_shown() {
    let firm = Raw::start(&["drafter"], Reply::Text("Paid. ".into()));
    let other = Raw::start(&["gatekeeper"], Reply::Text("Fine. ".into()));
    for secret in ["pa/ss9w", "pa?ss9w", "pa#ss9w", "pa@ss9w", "12/349"] {
        let with_password = other
            .url
            .replace("http://", &format!("http://clerk:{secret}@"));
        let dir = setup(&firm.url, &with_password);
        let o = Lexrun::new()
            .arg("check")
            .arg(dir.path().join("keys.lex"))
            .output();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{secret}: {e}");
        assert!(e.contains("E060"), "{secret}: {e}");
        // Not in the message, nor in the excerpt of the file (its password starred).
        assert!(!e.contains(secret), "{secret}: {e}");
        let dir = setup(&firm.url, &other.url);
        let o = run(
            dir.path(),
            Some(KEY),
            &["--endpoint", &format!("other={with_password}")],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{secret}: {e}");
        assert!(!e.contains(secret), "{secret}: {e}");
        // A ledger that cannot be reached, named with its password.
        let o = Lexrun::new()
            .env("LEXRUN_STORE", dir.path().join("store"))
            .env(
                "LEXRUN_LEDGER",
                format!("postgres://lexrun:{secret}@127.0.0.1:9/ledger"),
            )
            .args(["sources"])
            .arg(dir.path().join("keys.lex"))
            .output();
        let e = stderr(&o) + &stdout(&o);
        assert_eq!(o.status.code(), Some(2), "{secret}: {e}");
        assert!(
            !e.contains(secret) && e.contains("lexrun:***@127.0.0.1:9"),
            "{secret}: {e}"
        );
    }
}
