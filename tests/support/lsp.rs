//! A language-server client for tests and benchmarks: starts `lexrun lsp` as a process and
//! speaks JSON-RPC with it over its standard input and output.

// Shared by tests and benchmarks, which use different parts of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single answer may take before the test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications seen while waiting for something else, oldest first.
    pub notifications: Vec<Value>,
}

impl Client {
    /// Starts the server and completes the `initialize` handshake; returns the client and
    /// the server's capabilities.
    pub fn start(exe: &str) -> (Client, Value) {
        let mut c = Client::spawn(exe, &[]);
        let caps = c.initialize();
        (c, caps)
    }

    /// `initialize` and `initialized`; the server's capabilities.
    pub fn initialize(&mut self) -> Value {
        let caps = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        self.notify("initialized", json!({}));
        caps["capabilities"].clone()
    }

    /// Starts `lexrun lsp ARGS…` without saying anything to it.
    pub fn spawn(exe: &str, args: &[&str]) -> Client {
        let mut child = Command::new(exe)
            .arg("lsp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("lexrun lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin: Some(stdin),
            incoming: rx,
            next_id: 1,
            notifications: Vec::new(),
        }
    }

    /// Writes bytes as they are, headers and all.
    pub fn raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("input open");
        w.write_all(bytes).expect("write");
        w.flush().expect("flush");
    }

    /// The next message from the server, whatever it is.
    pub fn next(&mut self) -> Value {
        self.recv()
    }

    /// Waits for the server to exit on its own and returns its status.
    pub fn exit_status(mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s;
            }
            assert!(start.elapsed() < PATIENCE, "lexrun lsp did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes the server's input.
    pub fn close_input(mut self) -> std::process::ExitStatus {
        self.stdin = None;
        self.exit_status()
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its answer: the `result`, or the whole message when the
    /// server answered with an error.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        match self.request_raw(method, params) {
            Ok(v) => v,
            Err(e) => panic!("{method} failed: {e}"),
        }
    }

    pub fn request_raw(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.recv();
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return match msg.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(msg["result"].clone()),
                };
            }
            if msg.get("method").is_some() {
                self.notifications.push(msg);
            }
        }
    }

    /// Waits for the diagnostics published for `uri` at `version` (any version if `None`).
    pub fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        let matches = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && version.is_none_or(|v| m["params"]["version"] == v)
        };
        if let Some(i) = self.notifications.iter().rposition(matches) {
            let m = self.notifications.remove(i);
            self.notifications.retain(|n| !matches(n));
            return m["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
        }
        loop {
            let msg = self.recv();
            if matches(&msg) {
                return msg["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
            }
            if msg.get("method").is_some() {
                self.notifications.push(msg);
            }
        }
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "lex", "version": 1, "text": text}}),
        );
    }

    pub fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// An incremental change: `changes` is the protocol's `contentChanges` array.
    pub fn change_ranges(&mut self, uri: &str, version: i64, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
    }

    /// `shutdown`, `exit`, and the process's exit status.
    pub fn shutdown(mut self) -> std::process::ExitStatus {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s;
            }
            assert!(start.elapsed() < PATIENCE, "lexrun lsp did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        let w = self.stdin.as_mut().expect("input open");
        write!(w, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        w.flush().expect("flush");
    }

    fn recv(&mut self) -> Value {
        match self.incoming.recv_timeout(PATIENCE) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("lexrun lsp did not answer in time"),
            Err(RecvTimeoutError::Disconnected) => panic!("lexrun lsp closed its output"),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// A `file://` URI for a path.
pub fn uri(path: &std::path::Path) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().expect("cwd").join(path)
    };
    format!("file://{}", abs.display())
}

/// The byte offset of the `n`th occurrence (from 0) of `needle` as an LSP position (ASCII
/// text), plus `shift` characters.
pub fn position(text: &str, needle: &str, n: usize, shift: usize) -> Value {
    let at = text
        .match_indices(needle)
        .nth(n)
        .unwrap_or_else(|| panic!("`{needle}` occurs fewer than {} times", n + 1))
        .0
        + shift;
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col})
}
