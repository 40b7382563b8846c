//! `lexrun lsp` as an editor meets it: the binary is started as a process and spoken to in
//! JSON-RPC over its standard input and output.

use crate::support::lsp;

use std::path::Path;

use lsp::{position, uri, Client};
use serde_json::{json, Value};

const EXE: &str = env!("CARGO_BIN_EXE_lexrun");

fn affidavit() -> (String, String) {
    let path = Path::new("workflows/affidavit.lex");
    (uri(path), std::fs::read_to_string(path).unwrap())
}

fn hover_text(c: &mut Client, uri: &str, pos: Value) -> String {
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": pos}),
    );
    h["contents"]["value"].as_str().unwrap_or("").to_string()
}

/// The errors among diagnostics (the example has one warning: a model split over PCIe).
fn errors(diags: &[Value]) -> Vec<&Value> {
    diags.iter().filter(|d| d["severity"] == 1).collect()
}

fn labels(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_session_on_the_affidavit_example() {
    let (mut c, caps) = Client::start(EXE);
    for cap in [
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "completionProvider",
        "renameProvider",
        "documentFormattingProvider",
        "semanticTokensProvider",
    ] {
        assert!(!caps[cap].is_null(), "missing capability {cap}: {caps}");
    }
    let (u, text) = affidavit();
    c.open(&u, &text);
    let diags = c.diagnostics(&u, Some(1));
    assert!(errors(&diags).is_empty(), "the example checks: {diags:?}");
    // The warning inside the imported cluster file is shown on the `use` line.
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "E054");
    assert_eq!(
        diags[0]["range"]["start"],
        position(&text, "use \"lib/cluster.lex\"", 0, 0)
    );
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .contains("lib/cluster.lex (line 44)"),
        "{diags:?}"
    );

    // A model: its memory budget on its pool.
    let h = hover_text(&mut c, &u, position(&text, "model   drafter", 0, 9));
    assert!(
        h.contains("model `drafter`") && h.contains("board_a"),
        "{h}"
    );
    assert!(
        h.contains("weights 34.7 GiB") && h.contains("KV cache"),
        "{h}"
    );
    assert!(h.contains("of 128.0 GiB"), "{h}");

    // A stage: its model, inputs, answer and readers.
    let h = hover_text(&mut c, &u, position(&text, "stage gate", 0, 7));
    assert!(h.contains("model: `gatekeeper`"), "{h}");
    assert!(h.contains("grounds: bool"), "{h}");
    assert!(h.contains("stage `draft` reads it"), "{h}");

    // A stdlib prompt: its template text.
    let h = hover_text(&mut c, &u, position(&text, "std.prompts.gate", 0, 13));
    let gate = std::fs::read_to_string("stdlib/prompts/gate.hbs").unwrap();
    assert!(h.contains(gate.lines().next().unwrap()), "{h}");

    // Go to definition, into an import and into the stdlib.
    let d = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": u}, "position": position(&text, "model   drafter", 0, 9)}),
    );
    assert!(
        d["uri"]
            .as_str()
            .unwrap()
            .ends_with("workflows/lib/cluster.lex"),
        "{d}"
    );
    let cluster = std::fs::read_to_string("workflows/lib/cluster.lex").unwrap();
    assert_eq!(
        d["range"]["start"],
        position(&cluster, "model drafter", 0, 6)
    );
    let d = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": u}, "position": position(&text, "std.prompts.gate", 0, 13)}),
    );
    let std_uri = d["uri"].as_str().unwrap();
    assert!(std_uri.ends_with("/prompts.lex"), "{d}");
    let std_path = std_uri.trim_start_matches("file://");
    let std_text = std::fs::read_to_string(std_path).unwrap();
    assert!(std_text.contains("template gate"));
    assert!(
        std::fs::metadata(std_path)
            .unwrap()
            .permissions()
            .readonly(),
        "the stdlib copy is read-only"
    );

    // References: the declaration, the reads, the verify blocks.
    let refs = c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": u}, "position": position(&text, "sources client", 0, 9), "context": {"includeDeclaration": true}}),
    );
    assert_eq!(
        refs.as_array().unwrap().len(),
        text.matches("client").count()
    );

    // Completion: the fields after `gate.`, the settings of a stage, the models.
    let after_dot = position(&text, "gate.needs_figures", 0, 5);
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": after_dot}),
    );
    let got = labels(&items);
    assert_eq!(got, ["grounds", "reason", "needs_figures"], "{items}");

    // Rename a stage across the file.
    let edit = c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": u}, "position": position(&text, "stage gate", 0, 7), "newName": "screen"}),
    );
    let edits = edit["changes"][&u].as_array().unwrap();
    let words = text
        .match_indices("gate")
        .filter(|(i, _)| {
            let b = text.as_bytes();
            let before = *i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.');
            let after = b
                .get(i + 4)
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
            before && after
        })
        .count();
    assert_eq!(edits.len(), words, "{edit}");
    assert!(edits.iter().all(|e| e["newText"] == "screen"));

    // Rename a model declared in the imported file: both files change.
    let edit = c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": u}, "position": position(&text, "model   drafter", 0, 9), "newName": "writer"}),
    );
    let changes = edit["changes"].as_object().unwrap();
    assert_eq!(changes.len(), 2, "{edit}");
    assert_eq!(changes[&u].as_array().unwrap().len(), 1);
    let cluster_uri = uri(Path::new("workflows/lib/cluster.lex"));
    let in_cluster = changes[&cluster_uri].as_array().unwrap();
    assert_eq!(in_cluster.len(), 1);
    assert_eq!(
        in_cluster[0]["range"]["start"],
        position(&cluster, "model drafter", 0, 6)
    );

    // A name that is already taken is refused.
    let err = c
        .request_raw(
            "textDocument/rename",
            json!({"textDocument": {"uri": u}, "position": position(&text, "model   drafter", 0, 9), "newName": "reasoner"}),
        )
        .unwrap_err();
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("already declared"),
        "{err}"
    );

    // Renaming a stdlib name is refused with a reason.
    let err = c
        .request_raw(
            "textDocument/rename",
            json!({"textDocument": {"uri": u}, "position": position(&text, "std.prompts.gate", 0, 13), "newName": "x"}),
        )
        .unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("stdlib"), "{err}");

    // Semantic tokens cover the file.
    let t = c.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": u}}),
    );
    assert!(t["data"].as_array().unwrap().len() > 5 * 40, "{t}");

    // The example is formatted, so formatting changes nothing.
    let f = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": u}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(f, json!([]));

    assert!(c.shutdown().success());
}

#[test]
fn completion_offers_what_fits_the_cursor() {
    let (mut c, _) = Client::start(EXE);
    let (u, text) = affidavit();
    let text = text.replace("  timeout 20m\n", "  timeout 20m\n  \n");
    c.open(&u, &text);
    let blank = position(&text, "timeout 20m\n  \n", 0, "timeout 20m\n  ".len());
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": blank}),
    );
    let got = labels(&items);
    for want in ["model", "prompt", "reads", "returns", "temperature"] {
        assert!(got.contains(&want.to_string()), "{want} not in {got:?}");
    }
    assert!(!got.contains(&"gguf".to_string()), "{got:?}");

    let at_model = position(&text, "model   drafter", 0, "model   ".len());
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": at_model}),
    );
    let got = labels(&items);
    assert!(
        got.contains(&"reasoner".to_string()) && !got.contains(&"client".to_string()),
        "{got:?}"
    );

    let at_prompt = position(&text, "std.prompts.affidavit", 0, "std.prompts.".len());
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": at_prompt}),
    );
    assert!(labels(&items).contains(&"finance".to_string()), "{items}");
}

#[test]
fn an_edit_that_breaks_then_fixes_a_file_clears_its_diagnostics() {
    let (mut c, _) = Client::start(EXE);
    let (u, text) = affidavit();
    c.open(&u, &text);
    let clean = c.diagnostics(&u, Some(1));
    assert!(errors(&clean).is_empty(), "{clean:?}");
    let broken = text.replace("model   drafter", "model   drafterr");
    c.change(&u, 2, &broken);
    let all = c.diagnostics(&u, Some(2));
    let d = errors(&all);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "E010");
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .contains("help: did you mean `drafter`?"),
        "{d:?}"
    );
    assert_eq!(d[0]["range"]["start"], position(&broken, "drafterr", 0, 0));
    // Hover on the mistake explains its code, as `lexrun explain` does.
    let h = hover_text(&mut c, &u, position(&broken, "drafterr", 0, 2));
    assert!(h.contains("lex::E010") && h.contains("not declared"), "{h}");
    c.change(&u, 3, &text);
    assert_eq!(c.diagnostics(&u, Some(3)), clean);
    assert!(c.shutdown().success());
}

#[test]
fn a_half_typed_file_never_stops_the_server() {
    let (mut c, _) = Client::start(EXE);
    let (u, text) = affidavit();
    c.open(&u, "");
    // Every prefix of the example a few bytes apart, as if typed, with requests in between.
    let mut version = 1;
    let cuts: Vec<usize> = (0..text.len()).step_by(37).chain([text.len()]).collect();
    for (n, &cut) in cuts.iter().enumerate() {
        version += 1;
        let typed = &text[..cut];
        c.change(&u, version, typed);
        if n % 5 == 0 {
            let end = position(&format!("{typed}\u{0}"), "\u{0}", 0, 0);
            for method in [
                "textDocument/hover",
                "textDocument/completion",
                "textDocument/definition",
            ] {
                c.request(method, json!({"textDocument": {"uri": u}, "position": end}));
            }
            c.request(
                "textDocument/semanticTokens/full",
                json!({"textDocument": {"uri": u}}),
            );
            c.request(
                "textDocument/formatting",
                json!({"textDocument": {"uri": u}, "options": {"tabSize": 2, "insertSpaces": true}}),
            );
        }
    }
    assert!(errors(&c.diagnostics(&u, Some(version))).is_empty());
    // Positions past the end and unknown documents are answered, not fatal.
    let far = json!({"line": 9999, "character": 9999});
    c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": far}),
    );
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere/x.lex"}, "position": far}),
    );
    assert!(r.is_null());
    assert!(c.shutdown().success());
}

#[test]
fn problems_outside_the_file_are_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = Client::start(EXE);

    // A file in no workflow folder, with no header.
    let loose = dir.path().join("loose.lex");
    let u = uri(&loose);
    c.open(&u, "pool p {\n  gpus 0\n}\n");
    let d = c.diagnostics(&u, Some(1));
    assert!(d.iter().any(|d| d["code"] == "E008"), "{d:?}");

    // A missing import and a missing template file.
    let text = "workflow w\nuse \"lib/none.lex\"\nstage s {\n  model m\n  prompt \"prompts/none.hbs\"\n}\n";
    let u = uri(&dir.path().join("w.lex"));
    c.open(&u, text);
    let d = c.diagnostics(&u, Some(1));
    let codes: Vec<&str> = d.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"E012") && codes.contains(&"E042"), "{d:?}");

    // A document with no file at all.
    let u = "untitled:Untitled-1";
    c.open(u, "workflow w\nstage s { model nope }\n");
    let d = c.diagnostics(u, Some(1));
    assert!(d.iter().any(|d| d["code"] == "E010"), "{d:?}");

    // A test file gets the test reader's diagnostics.
    let u = uri(&dir.path().join("x.test.lex"));
    c.open(&u, "test \"a\" {\n  colour blue\n}\n");
    let d = c.diagnostics(&u, Some(1));
    assert!(d.iter().any(|d| d["code"] == "E100"), "{d:?}");
    assert!(c.shutdown().success());
}

#[test]
fn formatting_returns_the_canonical_text() {
    let (mut c, _) = Client::start(EXE);
    let dir = tempfile::tempdir().unwrap();
    let u = uri(&dir.path().join("f.lex"));
    let text = "workflow w\npool p {\ngpus 0\n    vram 24GiB\n}\n";
    c.open(&u, text);
    let f = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": u}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(
        f[0]["newText"],
        "workflow w\n\npool p {\n  gpus 0\n  vram 24 GiB\n}\n"
    );
    assert_eq!(f[0]["range"]["end"], json!({"line": 5, "character": 0}));
    assert!(c.shutdown().success());
}

/// The VS Code extension, run by its own language client against this binary (a stand-in
/// `vscode` module in place of the editor). Needs Node.js and the extension's npm packages
/// (`scripts/vscode-deps`); without them it says so and passes.
#[test]
fn the_vscode_extension_starts_its_server_and_follows_its_setting() {
    let dir = Path::new("editors/vscode");
    let node = std::process::Command::new("node").arg("--version").output();
    if node.is_err() || !dir.join("node_modules/vscode-languageclient").is_dir() {
        eprintln!(
            "skipped: run scripts/vscode-deps to install Node.js and the extension's packages"
        );
        return;
    }
    let o = std::process::Command::new("node")
        .arg("tests/client/run.js")
        .arg(EXE)
        .current_dir(dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("diagnostic E010 at line 12"), "{out}");
}

fn framed(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Messages that are not messages, each answered with the protocol's error (and `id: null`),
/// after which the server goes on answering: a hover right after each is answered.
#[test]
fn every_malformed_message_is_answered_and_the_server_goes_on() {
    let (u, text) = affidavit();
    let huge_line = format!("X-Filler: {}\r\n\r\n{{}}", "y".repeat(10_000));
    let cases: Vec<(&str, Vec<u8>, i64)> = vec![
        (
            "invalid JSON",
            framed("{\"jsonrpc\": \"2.0\", \"method\""),
            -32700,
        ),
        (
            "a truncated object",
            framed("{\"jsonrpc\":\"2.0\",\"id\":9,"),
            -32700,
        ),
        (
            "Content-Length: abc",
            b"Content-Length: abc\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "a negative length",
            b"Content-Length: -5\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "an absurd length",
            b"Content-Length: 18446744073709551615\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "a length past u64",
            b"Content-Length: 99999999999999999999999999\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "a length over the limit",
            b"Content-Length: 1073741824\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "a missing header",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}\r\n".to_vec(),
            -32700,
        ),
        (
            "headers without Content-Length",
            b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "a short length",
            b"Content-Length: 12\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}".to_vec(),
            -32700,
        ),
        ("an empty body", framed(""), -32700),
        ("a header line of 10 kB", huge_line.into_bytes(), -32700),
        ("deep nesting", framed(&"[".repeat(100_000)), -32700),
        (
            "invalid UTF-8",
            {
                let mut b = b"Content-Length: 4\r\n\r\n".to_vec();
                b.extend_from_slice(&[b'"', 0xff, 0xfe, b'"']);
                b
            },
            -32700,
        ),
        (
            "a JSON array (a batch)",
            framed("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}]"),
            -32600,
        ),
        ("an empty array", framed("[]"), -32600),
        ("a number", framed("42"), -32600),
        ("a string", framed("\"hello\""), -32600),
        ("null", framed("null"), -32600),
        (
            "an object that is no message",
            framed("{\"jsonrpc\":\"2.0\"}"),
            -32600,
        ),
        (
            "a method that is a number",
            framed("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}"),
            -32600,
        ),
        (
            "an id that is an object",
            framed("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"textDocument/hover\"}"),
            -32600,
        ),
    ];
    let (mut c, _) = Client::start(EXE);
    c.open(&u, &text);
    c.diagnostics(&u, Some(1));
    for (what, bytes, code) in &cases {
        c.raw(bytes);
        let answer = c.next();
        assert_eq!(answer["error"]["code"], *code, "{what}: {answer}");
        // The id, when the message had a valid one; else null.
        let id = if *what == "a method that is a number" {
            json!(5)
        } else {
            Value::Null
        };
        assert_eq!(answer["id"], id, "{what}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.len() > 10),
            "{what}: {answer}"
        );
        // The server reads on.
        let h = hover_text(&mut c, &u, position(&text, "model   drafter", 0, 9));
        assert!(h.contains("GiB"), "{what}: then hover gave {h:?}");
    }
    assert!(c.shutdown().success());
}

#[test]
fn an_escaped_lone_surrogate_in_a_document_is_read_as_a_replacement_character() {
    let (u, text) = affidavit();
    let (mut c, _) = Client::start(EXE);
    let marked = text.replacen(
        "workflow affidavit",
        "// note: SURROGATE\nworkflow affidavit",
        1,
    );
    let body = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": u, "languageId": "lex", "version": 1, "text": marked}}})
    .to_string()
    .replace("SURROGATE", "half \\ud83d of an emoji");
    c.raw(&framed(&body));
    let d = c.diagnostics(&u, Some(1));
    assert!(errors(&d).is_empty(), "{d:?}");
    assert!(c.shutdown().success());
}

#[test]
fn the_lifecycle_is_the_protocols() {
    // Requests before `initialize` are answered -32002; notifications are dropped.
    let mut c = Client::spawn(EXE, &["--stdio"]);
    let (u, text) = affidavit();
    c.open(&u, &text);
    let e = c
        .request_raw(
            "textDocument/hover",
            json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 0}}),
        )
        .unwrap_err();
    assert_eq!(e["code"], -32002, "{e}");
    let caps = c.initialize();
    assert_eq!(caps["textDocumentSync"], 2, "incremental sync: {caps}");
    // A second `initialize` is refused; the server goes on.
    let e = c
        .request_raw("initialize", json!({"processId": null, "capabilities": {}}))
        .unwrap_err();
    assert_eq!(e["code"], -32600, "{e}");
    let e = c.request_raw("lexrun/nothing", json!({})).unwrap_err();
    assert_eq!(e["code"], -32601, "{e}");
    // A request before `initialized` is answered (the server is initialized once it has
    // answered `initialize`).
    let mut early = Client::spawn(EXE, &[]);
    early.request("initialize", json!({"processId": null, "capabilities": {}}));
    early.open(&u, &text);
    let h = hover_text(&mut early, &u, position(&text, "model   drafter", 0, 9));
    assert!(h.contains("GiB"), "{h}");
    // `exit` without `shutdown` exits 1.
    early.notify("exit", Value::Null);
    assert_eq!(early.exit_status().code(), Some(1));
    // After `shutdown`, requests are refused and `exit` exits 0.
    c.request("shutdown", Value::Null);
    let e = c.request_raw("textDocument/hover", json!({})).unwrap_err();
    assert_eq!(e["code"], -32600, "{e}");
    c.notify("exit", Value::Null);
    assert_eq!(c.exit_status().code(), Some(0));
    // Input that ends without `exit`: 1 before `shutdown`, 0 after.
    let mut c = Client::spawn(EXE, &[]);
    c.initialize();
    assert_eq!(c.close_input().code(), Some(1));
    let mut c = Client::spawn(EXE, &[]);
    c.initialize();
    c.request("shutdown", Value::Null);
    assert_eq!(c.close_input().code(), Some(0));
}

#[test]
fn the_transport_flags_of_editors_clients_are_understood() {
    // `--stdio` and `--clientProcessId` are what vscode-languageclient passes.
    let pid = std::process::id().to_string();
    let mut c = Client::spawn(EXE, &["--stdio", &format!("--clientProcessId={pid}")]);
    c.initialize();
    assert!(c.shutdown().success());
    // Node IPC is refused with what to use instead.
    let o = std::process::Command::new(EXE)
        .args(["lsp", "--node-ipc"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("--stdio"), "{e}");
    // A socket the editor listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut child = std::process::Command::new(EXE)
        .args(["lsp", &format!("--socket={port}")])
        .spawn()
        .unwrap();
    let (mut s, _) = listener.accept().unwrap();
    use std::io::{Read, Write};
    s.write_all(&framed(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
    ))
    .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("capabilities") {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "the server closed the socket");
        got.extend_from_slice(&buf[..n]);
    }
    s.write_all(&framed(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#))
        .unwrap();
    s.write_all(&framed(r#"{"jsonrpc":"2.0","method":"exit"}"#))
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn symbols_and_a_one_click_fix_for_a_misspelt_name() {
    let (mut c, caps) = Client::start(EXE);
    assert_eq!(caps["documentSymbolProvider"], true, "{caps}");
    let (u, text) = affidavit();
    c.open(&u, &text);
    c.diagnostics(&u, Some(1));
    let syms = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": u}}),
    );
    let names: Vec<&str> = syms
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"draft") || names.len() > 3, "{names:?}");
    assert!(
        syms.as_array()
            .unwrap()
            .iter()
            .all(|s| s["location"]["uri"] == u),
        "only the document's own: {syms}"
    );
    // Workspace symbols reach into the imports (the cluster's pools).
    let ws = c.request("workspace/symbol", json!({"query": "board"}));
    let ws = ws.as_array().unwrap();
    assert!(
        ws.iter().any(|s| s["location"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("lib/cluster.lex")),
        "{ws:?}"
    );
    // `drafterr`: the fix `drafter` in one click.
    let broken = text.replace("model   drafter", "model   drafterr");
    c.change(&u, 2, &broken);
    c.diagnostics(&u, Some(2));
    let at = position(&broken, "drafterr", 0, 3);
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": {"start": at, "end": at}, "context": {"diagnostics": []}}),
    );
    let a = &actions[0];
    assert_eq!(a["kind"], "quickfix", "{actions}");
    assert_eq!(a["isPreferred"], true);
    let edit = &a["edit"]["changes"][u.as_str()][0];
    assert_eq!(edit["newText"], "drafter", "{a}");
    assert_eq!(edit["range"]["start"], position(&broken, "drafterr", 0, 0));
    assert_eq!(edit["range"]["end"], position(&broken, "drafterr", 0, 8));
    assert!(c.shutdown().success());
}

/// Edits sent faster than the server checks cost two checks, the first and the last; none
/// of the versions in between is published, and the last is. The first edit's check may be
/// published when it ends before the next edit reaches the server (a check of a one-line
/// edit takes a few milliseconds), never one of the versions after it but the last.
#[test]
fn a_burst_of_edits_costs_at_most_two_checks() {
    let (mut c, _) = Client::start(EXE);
    let (u, text) = affidavit();
    c.open(&u, &text);
    c.diagnostics(&u, Some(1));
    let checks = |c: &mut Client| {
        c.request("lexrun/stats", Value::Null)["checks"]
            .as_u64()
            .unwrap()
    };
    let before = checks(&mut c);
    let line = text[..text.find("timeout 20m").unwrap()]
        .matches('\n')
        .count();
    let old = text.lines().nth(line).unwrap().to_string();
    for v in 2..32 {
        let new = old.replace("20m", &format!("{v}m"));
        c.change_ranges(
            &u,
            v,
            json!([{"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 200}}, "text": new}]),
        );
    }
    let last = c.diagnostics(&u, Some(31));
    assert!(errors(&last).is_empty(), "{last:?}");
    let spent = checks(&mut c) - before;
    assert!((1..=2).contains(&spent), "{spent} checks for 30 edits");
    let published: Vec<i64> = c
        .notifications
        .iter()
        .filter(|n| n["method"] == "textDocument/publishDiagnostics")
        .filter_map(|n| n["params"]["version"].as_i64())
        .collect();
    assert!(
        published.iter().all(|v| [1, 2, 31].contains(v)),
        "{published:?}"
    );
    // Incremental sync kept the text: the edited line reads as the last edit left it.
    let h = hover_text(&mut c, &u, position(&text, "model   drafter", 0, 9));
    assert!(h.contains("drafter"), "{h}");
    assert!(c.shutdown().success());
}

/// An imported file open in the editor is read as it stands there: an unsaved edit to it
/// shows in the file that imports it, and undoing the edit clears it.
#[test]
fn unsaved_changes_in_an_imported_file_are_honoured() {
    let (mut c, _) = Client::start(EXE);
    let (u, text) = affidavit();
    let lib = Path::new("workflows/lib/cluster.lex");
    let (lu, ltext) = (uri(lib), std::fs::read_to_string(lib).unwrap());
    c.open(&u, &text);
    assert!(errors(&c.diagnostics(&u, Some(1))).is_empty());
    c.open(&lu, &ltext);
    c.diagnostics(&lu, Some(1));
    let renamed = ltext.replace("model drafter on", "model drafter2 on");
    assert_ne!(renamed, ltext);
    c.change(&lu, 2, &renamed);
    let d = c.diagnostics(&u, Some(1));
    let e = errors(&d);
    assert!(
        e.iter()
            .any(|d| d["code"] == "E010" && d["message"].as_str().unwrap().contains("drafter")),
        "{d:?}"
    );
    c.change(&lu, 3, &ltext);
    let mut d = c.diagnostics(&u, Some(1));
    // The diagnostics of version 1 may come twice (the break, then the repair): wait for a clean one.
    for _ in 0..3 {
        if errors(&d).is_empty() {
            break;
        }
        d = c.diagnostics(&u, Some(1));
    }
    assert!(errors(&d).is_empty(), "{d:?}");
    assert_eq!(
        std::fs::read_to_string(lib).unwrap(),
        ltext,
        "nothing was saved"
    );
    assert!(c.shutdown().success());
}

#[test]
fn inlay_hints_show_each_models_memory_fit() {
    let (mut c, caps) = Client::start(EXE);
    assert_eq!(caps["inlayHintProvider"], true, "{caps}");
    let (u, text) = affidavit();
    c.open(&u, &text);
    c.diagnostics(&u, Some(1));
    let lines = text.lines().count();
    let hints = c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": u}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}}}),
    );
    let hints = hints.as_array().unwrap();
    assert!(!hints.is_empty(), "no hints");
    for h in hints {
        let label = h["label"].as_str().unwrap();
        assert!(
            label.contains("GiB") && label.contains("KV") && label.contains(" of "),
            "{label}"
        );
        let line = h["position"]["line"].as_u64().unwrap() as usize;
        let at = text.lines().nth(line).unwrap();
        assert!(at.trim_start().starts_with("model "), "{at}");
        assert!(
            label.contains("of 128.0 GiB") || label.contains("GiB;"),
            "{label}"
        );
    }
    assert!(c.shutdown().success());
}

#[test]
fn signature_help_in_a_prompts_handlebars() {
    let (mut c, caps) = Client::start(EXE);
    assert!(caps["signatureHelpProvider"].is_object(), "{caps}");
    let (u, text) = affidavit();
    let at = text.find("prompt").expect("a prompt");
    let line_end = at + text[at..].find('\n').unwrap();
    // An inline prompt being typed: `prompt "Facts: {{#each ` at the end of a stage's line.
    let typed = format!(
        "{} \"Facts: {{{{#each \"{}",
        &text[..at + 6],
        &text[line_end..]
    );
    c.open(&u, &typed);
    c.diagnostics(&u, Some(1));
    let pos = position(&typed, "{{#each ", 0, 8);
    let h = c.request(
        "textDocument/signatureHelp",
        json!({"textDocument": {"uri": u}, "position": pos}),
    );
    let sig = &h["signatures"][0];
    assert!(
        sig["label"].as_str().unwrap().contains("{{#each LIST}}"),
        "{h}"
    );
    assert!(
        sig["documentation"]["value"]
            .as_str()
            .unwrap()
            .contains("`evidence`"),
        "{h}"
    );
    // Outside a tag: nothing.
    let h = c.request(
        "textDocument/signatureHelp",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 0}}),
    );
    assert!(h.is_null(), "{h}");
    assert!(c.shutdown().success());
}

/// What the server checks on every edit, reusing the parse of the declarations it read
/// before, is what `lexrun check` finds in the same text: over a sequence of random edits to
/// a real workflow (some breaking it, some mending it), the diagnostics and the workflow are
/// the same as a check from scratch.
#[test]
fn checking_with_the_parse_reused_finds_what_a_full_check_finds_over_random_edits() {
    let path = camino::Utf8Path::new("workflows/affidavit.lex");
    let original = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    let mut reuse = lexrun::syntax::Reuse::default();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut text = original.clone();
    for step in 0..120 {
        text = match next(5) {
            // A line retyped from the file, a line removed, a number changed, a character
            // dropped or a stray brace: what typing does.
            0 => {
                let at = next(lines.len());
                let mut v: Vec<&str> = text.lines().collect();
                let i = next(v.len() + 1).min(v.len());
                v.insert(i, lines[at]);
                v.join("\n")
            }
            1 => {
                let mut v: Vec<&str> = text.lines().collect();
                if !v.is_empty() {
                    let i = next(v.len());
                    v.remove(i);
                }
                v.join("\n")
            }
            2 if step % 4 == 0 => original.clone(),
            2 => text.replacen("20m", &format!("{}m", next(90) + 1), 1),
            _ => {
                let mut at = next(text.len().max(1));
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let bit = ["", "}", "{", "\"", "x"][next(5)];
                let end = (at + usize::from(bit.is_empty())).min(text.len());
                let end = if text.is_char_boundary(end) { end } else { at };
                format!("{}{bit}{}", &text[..at], &text[end..])
            }
        };
        let reused = lexrun::check::check_bytes_reusing(
            path,
            text.clone().into_bytes(),
            &|_| None,
            &mut reuse,
        );
        let full = lexrun::check::check_bytes(path, text.clone().into_bytes());
        assert_eq!(reused.diagnostics, full.diagnostics, "step {step}:\n{text}");
        assert_eq!(
            reused.workflow.is_some(),
            full.workflow.is_some(),
            "step {step}"
        );
    }
    assert!(reuse.reused > 500, "reused {} pieces", reuse.reused);
}
