//! `lexrun mcp` driven by the official MCP client SDK (Python `mcp`, installed by
//! `scripts/mcp-client`) as an orchestrator drives it, and by raw JSON-RPC for what no SDK
//! sends: garbage, unknown tools, wrong types, a 100 MB argument.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use support::{copy_dir, fresh_store, lexrun};

const EXE: &str = env!("CARGO_BIN_EXE_lexrun");

/// A Python with the MCP SDK: `LEXRUN_MCP_PYTHON`, else the one `scripts/mcp-client` installs.
fn python() -> String {
    if let Ok(p) = std::env::var("LEXRUN_MCP_PYTHON") {
        return p;
    }
    let o = Command::new("scripts/mcp-client")
        .stderr(Stdio::inherit())
        .output()
        .expect("scripts/mcp-client runs");
    assert!(o.status.success(), "scripts/mcp-client failed");
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// One client session: the server started in `cwd` with a fresh store, the client declaring
/// `roots` (or none), the calls made in order.
fn session(cwd: &Path, roots: Option<&[&Path]>, calls: Value) -> Value {
    let store = fresh_store();
    let scenario = json!({
        "exe": EXE,
        "cwd": cwd,
        "env": {
            "LEXRUN_STORE": store,
            "XDG_DATA_HOME": store.with_extension("data"),
            "NO_COLOR": "1",
            "PATH": std::env::var("PATH").unwrap_or_default(),
        },
        "roots": roots,
        "calls": calls,
    });
    let mut child = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(scenario.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn error_code(call: &Value) -> &str {
    assert_eq!(call["is_error"], true, "not an error: {call}");
    call["structured"]["error"]["code"].as_str().unwrap_or("")
}

#[test]
fn an_orchestrator_lists_every_tool_with_typed_arguments() {
    let out = session(&repo(), None, json!([]));
    assert_eq!(out["server"], "lexrun");
    let mut names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["audit", "bates", "check", "plan", "run", "sources", "text", "verify"]
    );
    let verify = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "verify")
        .unwrap();
    let schema = &verify["input_schema"];
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    required.sort();
    assert_eq!(required, ["draft", "sources"]);
    assert_eq!(schema["properties"]["draft"]["type"], "string");
    assert_eq!(schema["properties"]["sources"]["type"], "array");
}

#[test]
fn check_gives_each_problem_with_its_code_and_line_as_the_command_line_does() {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join("broken.lex");
    std::fs::write(
        &wf,
        "workflow broken \"A stage with a model nobody declared\"\n\nstage draft {\n  model   ghost\n  prompt  \"Write.\"\n}\n",
    )
    .unwrap();
    let cli = lexrun(&["check", wf.to_str().unwrap()]);
    assert_eq!(cli.status.code(), Some(1));
    let printed = String::from_utf8_lossy(&cli.stderr).to_string();
    let out = session(
        dir.path(),
        None,
        json!([{"tool": "check", "args": {"files": ["broken.lex"]}}]),
    );
    let call = &out["calls"][0];
    assert_eq!(call["is_error"], false, "{call}");
    let r = &call["structured"];
    assert_eq!(r["ok"], false);
    assert_eq!(r["exit_code"], 1);
    let diags = r["files"][0]["diagnostics"].as_array().unwrap();
    assert!(!diags.is_empty(), "{r}");
    for d in diags {
        let code = d["code"].as_str().unwrap();
        let place = format!("broken.lex:{}:{}", d["line"], d["column"]);
        assert!(
            printed.contains(&format!("lex::{code}")) && printed.contains(&place),
            "the command line prints {code} at {place}:\n{printed}\n{d}"
        );
    }
    let ghost = diags
        .iter()
        .find(|d| d["message"].as_str().unwrap().contains("ghost"))
        .expect("the undeclared model is named");
    assert_eq!(ghost["line"], 4, "{ghost}");
    assert_eq!(ghost["severity"], "error");
}

#[test]
fn verify_gives_the_command_lines_verdicts_and_catches_the_planted_fabrications() {
    let cli = lexrun(&[
        "verify",
        "--json",
        "--sources",
        "workflows/matters/smith-v-acme/intake",
        "tests/verify/smith/draft.md",
    ]);
    assert_eq!(cli.status.code(), Some(1));
    let want: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let out = session(
        &repo(),
        None,
        json!([{"tool": "verify", "args": {
            "draft": "tests/verify/smith/draft.md",
            "sources": ["workflows/matters/smith-v-acme/intake"],
        }}]),
    );
    let call = &out["calls"][0];
    assert_eq!(call["is_error"], false, "{call}");
    let got = &call["structured"];
    assert_eq!(got["exit_code"], 1);
    let verdicts = |v: &Value| -> Vec<(String, String, String)> {
        v["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["kind"].as_str().unwrap().to_string(),
                    c["text"].as_str().unwrap().to_string(),
                    c["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(verdicts(got), verdicts(&want));
    // The hand-labelled fabrications of the draft are among the unsupported claims.
    let expected = std::fs::read_to_string("tests/verify/smith/expected.tsv").unwrap();
    let planted: Vec<&str> = expected
        .lines()
        .filter(|l| !l.starts_with('#') && l.ends_with("\tunsupported"))
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert!(!planted.is_empty());
    for p in planted {
        assert!(
            verdicts(got).iter().any(|(_, t, s)| s == "unsupported"
                && t.split_whitespace().collect::<Vec<_>>().join(" ") == p),
            "planted `{p}` not unsupported"
        );
    }
}

#[test]
fn paths_outside_the_roots_are_refused_inside_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("inner")).unwrap();
    std::fs::write(root.join("inner/draft.md"), "Paid $5.00 on June 1, 2022.\n").unwrap();
    std::fs::write(
        root.join("inner/receipt.txt"),
        "Paid $5.00 on June 1, 2022.\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("secret.txt"),
        "Paid $5.00 on June 1, 2022.\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("inner/link.txt")).unwrap();
    let verify = |draft: &str, source: &str| json!({"tool": "verify", "args": {"draft": draft, "sources": [source]}});
    // No roots declared: the folder the server started in.
    let out = session(
        &root,
        None,
        json!([
            verify("inner/draft.md", "inner/receipt.txt"),
            verify("inner/draft.md", "../secret.txt"),
            verify("inner/draft.md", dir.path().join("secret.txt").to_str().unwrap()),
            verify("inner/draft.md", "inner/link.txt"),
            {"tool": "bates", "args": {"prefix": "X", "inputs": ["inner/receipt.txt"], "out": "../stamped"}},
        ]),
    );
    let calls = out["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    assert_eq!(calls[0]["structured"]["exit_code"], 0, "{}", calls[0]);
    for c in &calls[1..] {
        assert_eq!(error_code(c), "outside_roots", "{c}");
        assert_eq!(c["structured"]["error"]["exit_code"], 2);
    }
    assert!(!dir.path().join("stamped").exists());
    // Roots declared by the client: only inside them.
    let inner = root.join("inner");
    let out = session(
        &root,
        Some(&[inner.as_path()]),
        json!([
            verify("inner/draft.md", "inner/receipt.txt"),
            {"tool": "check", "args": {"files": [root.join("x.lex")]}},
        ]),
    );
    let calls = out["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    std::fs::write(root.join("x.lex"), "").unwrap();
    let out = session(
        &root,
        Some(&[inner.as_path()]),
        json!([{"tool": "check", "args": {"files": ["x.lex"]}}]),
    );
    assert_eq!(error_code(&out["calls"][0]), "outside_roots");
}

/// The example library copied where a test may write, its store private.
fn library() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("workflows"), dir.path());
    dir
}

#[test]
fn a_run_reports_progress_and_its_record_and_its_output_is_refused_as_evidence() {
    let lib = library();
    let run = json!({"tool": "run", "progress": true, "args": {
        "file": "affidavit.lex",
        "replay": "cassettes/affidavit-smith.jsonl",
    }});
    let out = session(
        lib.path(),
        None,
        json!([run, {"list_resources": true}, {"read": "lexrun://nonesuch/run.json"}, {"read": "lexrun://LAST/report.md"}]),
    );
    let call = &out["calls"][0];
    assert_eq!(call["is_error"], false, "{call}");
    let rec = &call["structured"];
    assert_eq!(rec["exit_code"], 0, "{rec}");
    assert_eq!(rec["workflow"], "affidavit");
    assert_eq!(rec["cancelled"], false);
    let steps = rec["matters"][0]["steps"].as_array().unwrap();
    assert!(steps.iter().any(|s| s["name"] == "draft"), "{rec}");
    let record = PathBuf::from(rec["record"].as_str().unwrap());
    assert!(record.is_file(), "{}", record.display());
    let progress = call["progress"].as_array().unwrap();
    assert!(
        progress.len() >= 3,
        "a notification per finished stage: {progress:?}"
    );
    assert!(progress
        .iter()
        .any(|p| p["message"].as_str().unwrap().starts_with("gate")));
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    // What the run wrote, as resources by URI.
    let uris: Vec<&str> = rec["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    let run_id = rec["run_id"].as_str().unwrap();
    for want in [
        "run.json",
        "report.md",
        "review.html",
        "output/affidavit.md",
    ] {
        assert!(
            uris.contains(&format!("lexrun://{run_id}/{want}").as_str()),
            "{want} not among {uris:?}"
        );
    }
    let listed = out["calls"][1]["resources"].as_array().unwrap();
    assert_eq!(listed.len(), uris.len(), "{listed:?}");
    assert!(out["calls"][2]["protocol_error"].is_string());
    let report = &out["calls"][3]["contents"][0];
    assert_eq!(report["mime_type"], "text/markdown");
    let on_disk = std::fs::read_to_string(record.with_file_name("report.md")).unwrap();
    assert_eq!(report["text"].as_str().unwrap(), on_disk);

    // A model's output, copied into the matter's intake, offered as evidence: refused.
    let output = walk(&lib.path().join("out"))
        .into_iter()
        .find(|p| {
            p.extension().is_some_and(|e| e == "md")
                && std::fs::read_to_string(p).is_ok_and(|t| t.len() > 200)
        })
        .expect("an output of the run");
    let copy = lib.path().join("matters/smith-v-acme/intake/our-notes.md");
    std::fs::copy(&output, &copy).unwrap();
    let out = session_with_store(
        lib.path(),
        json!([
            {"tool": "sources", "args": {"file": "affidavit.lex"}},
            {"tool": "run", "args": {"file": "affidavit.lex", "replay": "cassettes/affidavit-smith.jsonl"}},
        ]),
    );
    let sources = &out["calls"][0];
    assert_eq!(sources["is_error"], false, "{sources}");
    assert_eq!(sources["structured"]["refused"], true);
    assert_eq!(sources["structured"]["exit_code"], 1);
    let files = sources["structured"]["files"].as_array().unwrap();
    let ours = files
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("our-notes.md"))
        .expect("the copy has a verdict");
    assert!(ours["refused"].is_string(), "{ours}");
    let rerun = &out["calls"][1];
    assert_eq!(error_code(rerun), "refused_evidence", "{rerun}");
    assert_eq!(rerun["structured"]["error"]["exit_code"], 1);
}

/// A session whose store is the one the previous session's runs used: `LEXRUN_STORE` in the
/// library itself.
fn session_with_store(cwd: &Path, calls: Value) -> Value {
    let calls = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c["args"]["store"] = json!(".store");
            c
        })
        .collect::<Vec<_>>();
    session(cwd, None, Value::Array(calls))
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// A raw JSON-RPC conversation with `lexrun mcp`: lines in, lines out.
struct Raw {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn start(cwd: &Path) -> Raw {
        let store = fresh_store();
        let mut child = Command::new(EXE)
            .arg("mcp")
            .current_dir(cwd)
            .env("LEXRUN_STORE", &store)
            .env("XDG_DATA_HOME", store.with_extension("data"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut raw = Raw { child, out };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        );
        let init = raw.reply(0);
        assert_eq!(init["result"]["serverInfo"]["name"], "lexrun", "{init}");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    fn line(&mut self, text: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(text).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        self.line(v.to_string().as_bytes());
    }

    /// The reply to request `id` (notifications and other replies before it are passed over).
    fn reply(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            let n = self.out.read_line(&mut line).unwrap();
            assert!(n > 0, "the server ended before answering {id}");
            let v: Value = serde_json::from_str(&line).expect("the server writes JSON lines");
            if v["id"] == id {
                return v;
            }
        }
    }

    fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
        self.reply(id)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn garbage_unknown_tools_wrong_types_and_a_100_mb_argument_get_errors_and_the_server_goes_on() {
    let mut raw = Raw::start(&repo());
    raw.line(b"this is not JSON {");
    raw.line(b"{\"jsonrpc\": \"2.0\", \"id\": ");
    raw.line(&[0xff, 0xfe, 0x00, 0x41]);
    let unknown = raw.call(1, "nonesuch", json!({}));
    assert!(unknown["error"]["message"].is_string(), "{unknown}");
    let wrong = raw.call(2, "check", json!({"files": 5}));
    let text = wrong.to_string();
    assert!(
        wrong["error"]["message"].is_string() || wrong["result"]["isError"] == true,
        "{wrong}"
    );
    assert!(
        text.contains("files") || text.contains("sequence"),
        "{text}"
    );
    let missing = raw.call(3, "verify", json!({"draft": "x.md"}));
    assert!(missing.to_string().contains("sources"), "{missing}");
    let huge = "a".repeat(100 << 20);
    let r = raw.call(
        4,
        "verify",
        json!({"draft": huge, "sources": ["workflows/matters/smith-v-acme/intake"]}),
    );
    assert_eq!(r["result"]["isError"], true, "a refusal, not a crash");
    let msg = r["result"]["structuredContent"]["error"]["message"]
        .as_str()
        .unwrap();
    assert!(msg.contains("at most 4096 bytes"), "{msg}");
    // Still serving.
    raw.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    let listed = raw.reply(5);
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 8);
}

/// A server that takes connections and never answers: a model call that does not end.
fn silent_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    url
}

fn the_run_json(out: &Path) -> Value {
    let run = walk(out)
        .into_iter()
        .find(|p| p.ends_with("run.json"))
        .expect("the run wrote its record");
    serde_json::from_str(&std::fs::read_to_string(run).unwrap()).unwrap()
}

#[test]
fn a_cancelled_run_stops_keeps_its_record_and_the_server_goes_on() {
    let lib = library();
    let url = silent_server();
    let out = session(
        lib.path(),
        None,
        json!([
            {"tool": "run", "cancel_after": 2, "args": {"file": "summary.lex", "endpoint": [format!("*={url}")]}},
            {"tool": "check", "args": {"files": ["summary.lex"]}},
        ]),
    );
    assert_eq!(out["calls"][0]["cancelled"], true);
    assert_eq!(
        out["calls"][1]["structured"]["ok"], true,
        "{}",
        out["calls"][1]
    );
    let rec = the_run_json(&lib.path().join("out"));
    assert_eq!(rec["cancelled"], true, "{rec}");
    assert_eq!(rec["matters"][0]["status"], "cancelled");
}

#[test]
fn cancelling_after_the_gate_keeps_the_gate_and_stops_the_draft() {
    use support::servers::{Answer, Fake, Seen, Speaks};
    let dir = tempfile::tempdir().unwrap();
    let o = lexrun(&["init", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    // The gate answers at once; the draft's answer takes a minute.
    let server = Fake::start(Speaks::Llama, std::time::Duration::ZERO, |s: &Seen| {
        let text = if s.prompt().contains("screening a new matter") {
            r#"{"grounds": true, "reason": "The deposit was kept.", "needs_figures": false}"#
                .to_string()
        } else {
            std::thread::sleep(std::time::Duration::from_secs(60));
            "The tenant paid a deposit.".to_string()
        };
        Answer { text, fault: None }
    });
    let out = session(
        dir.path(),
        None,
        json!([{"tool": "run", "progress": true, "cancel_after": 6, "args": {
            "file": "starter.lex", "endpoint": [format!("local={}", server.url)],
        }}]),
    );
    let call = &out["calls"][0];
    assert_eq!(call["cancelled"], true, "{call}");
    let messages: Vec<&str> = call["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["gate done"], "the finished stage was reported");
    let rec = the_run_json(&dir.path().join("out"));
    assert_eq!(rec["cancelled"], true, "{rec}");
    let status = |name: &str| {
        rec["matters"][0]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["status"].clone())
            .unwrap_or_default()
    };
    assert_eq!(status("gate"), "done", "{rec}");
    assert_eq!(status("draft"), "cancelled", "{rec}");
}

#[test]
fn a_client_that_disappears_mid_run_cancels_it_cleanly() {
    let lib = library();
    let url = silent_server();
    let mut raw = Raw::start(lib.path());
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run", "arguments": {"file": "summary.lex", "endpoint": [format!("*={url}")]}}}),
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    drop(raw.child.stdin.take());
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = raw.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the server did not end with its client"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let rec = the_run_json(&lib.path().join("out"));
    assert_eq!(rec["cancelled"], true, "{rec}");
}
