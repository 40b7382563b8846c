//! What Windows editors write is a valid workflow: a UTF-8 byte-order mark and CRLF line
//! ends are accepted by `check`, kept by `fmt`, and counted right by `lexrun lsp` (a mark is
//! one UTF-16 unit of its line, as the protocol counts).

use crate::support;
use crate::support::lsp;

use std::fs;

use serde_json::json;
use support::{stderr, Lexrun};

/// A clean workflow of the diagnostics corpus.
fn workflow() -> String {
    fs::read_to_string("tests/diagnostics/template-outside.lex")
        .unwrap()
        .replace("// expect: E043 at line 14\n", "")
        .replace("\"../../../leak.hbs\"", "\"Say hello.\"")
}

fn windows(text: &str) -> String {
    format!("\u{FEFF}{}", text.replace('\n', "\r\n"))
}

#[test]
fn check_and_fmt_accept_a_byte_order_mark_and_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.lex");
    fs::write(&plain, workflow()).unwrap();
    let o = Lexrun::new().arg("fmt").arg(&plain).output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let formatted = fs::read_to_string(&plain).unwrap();
    for (name, text) in [
        ("bom.lex", format!("\u{FEFF}{formatted}")),
        ("crlf.lex", formatted.replace('\n', "\r\n")),
        ("both.lex", windows(&formatted)),
    ] {
        let f = dir.path().join(name);
        fs::write(&f, &text).unwrap();
        let o = Lexrun::new().arg("check").arg(&f).output();
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let o = Lexrun::new().arg("fmt").arg("--check").arg(&f).output();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name} is formatted: {}",
            stderr(&o)
        );
        // Unformatted, it is formatted with its mark and line ends kept.
        let messy = text.replace("model  m", "model     m");
        assert_ne!(messy, text);
        fs::write(&f, &messy).unwrap();
        let o = Lexrun::new().arg("fmt").arg(&f).output();
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert_eq!(fs::read_to_string(&f).unwrap(), text, "{name}");
    }
}

#[test]
fn a_mark_anywhere_but_the_start_is_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.lex");
    fs::write(&f, workflow().replace("stage s", "stage \u{FEFF}s")).unwrap();
    let o = Lexrun::new().arg("check").arg(&f).output();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("E017"), "{}", stderr(&o));
}

#[test]
fn the_server_counts_a_mark_and_crlf_as_the_protocol_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.lex");
    let text = windows(&workflow().replace("model m\n  prompt", "model mm\n  prompt"));
    fs::write(&path, &text).unwrap();
    let (mut c, _) = lsp::Client::start(env!("CARGO_BIN_EXE_lexrun"));
    let u = lsp::uri(&path);
    c.open(&u, &text);
    let d = c.diagnostics(&u, Some(1));
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "E010");
    let line = text.lines().position(|l| l.contains("model mm")).unwrap();
    assert_eq!(
        d[0]["range"],
        json!({"start": {"line": line, "character": 8}, "end": {"line": line, "character": 10}})
    );
    // A mistake on the first line: the mark is one unit before it.
    let first = text.replacen("workflow w", "workflow w w", 1);
    c.change(&u, 2, &first);
    let d = c.diagnostics(&u, Some(2));
    assert!(!d.is_empty());
    assert_eq!(d[0]["range"]["start"]["line"], 0, "{d:?}");
    assert!(
        d[0]["range"]["start"]["character"].as_u64().unwrap() >= 1,
        "{d:?}"
    );
    // Formatting keeps the mark and the line ends.
    c.change(&u, 3, &text);
    let edits = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": u}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    let new = edits[0]["newText"].as_str().unwrap();
    assert!(new.starts_with('\u{FEFF}') && new != text, "{new:?}");
    assert_eq!(
        new.matches('\n').count(),
        new.matches("\r\n").count(),
        "{new:?}"
    );
    assert!(c.shutdown().success());
}
