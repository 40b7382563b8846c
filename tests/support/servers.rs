//! Model servers for tests and benchmarks.
//!
//! - [`llama`]: the real llama.cpp `llama-server` (built by `scripts/llama-server`) serving the
//!   tiny model from `scripts/tiny-model`, started once per test process on a free port.
//! - [`Fake`]: a scripted server on a free port that speaks either Ollama's API (`/api/chat`
//!   as NDJSON, `/api/tags`, `/api/ps`, `/api/version`) or llama.cpp's (`/v1/chat/completions`
//!   as server-sent events with `timings`, with every piece too when the request asks for
//!   `timings_per_token`, `/health`, `/props`, `/tokenize`), byte for byte as
//!   documented, with answers chosen per request, a fixed delay per token, and faults on
//!   demand: refused connections, 503 while "loading", streams cut midway, hangs, HTTP 500,
//!   malformed JSON, an error line mid-stream.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A running real llama.cpp server.
pub struct Llama {
    pub url: String,
    pub model: PathBuf,
}

fn script(name: &str, env: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env) {
        return PathBuf::from(p);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("scripts").join(name))
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/{name}: {e}"));
    assert!(out.status.success(), "scripts/{name} failed");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Starts `llama-server` with the tiny model (once per process; it stops when the process
/// ends). `extra` arguments go to the server.
pub fn llama() -> &'static Llama {
    static SERVER: OnceLock<Llama> = OnceLock::new();
    SERVER.get_or_init(|| start_llama(&["-np", "1", "-c", "32768"]))
}

/// Starts a new `llama-server`; it stops when this process ends.
pub fn start_llama(args: &[&str]) -> Llama {
    let bin = script("llama-server", "LEXRUN_LLAMA_SERVER");
    let model = script("tiny-model", "LEXRUN_TINY_MODEL");
    let port = free_port();
    let mut cmd = Command::new(&bin);
    cmd.args(["-m", model.to_str().unwrap(), "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "-t", "1", "--offline"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    spawn_tied(cmd);
    let url = format!("http://127.0.0.1:{port}");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if let Some((200, _)) = http_get(port, "/health") {
            return Llama { url, model };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("llama-server did not become ready on port {port}");
}

/// Starts `llama-server` with the small real instruct model from `scripts/small-model`
/// (SmolLM2-135M-Instruct, its own 8,192-token context, one slot, one thread, as
/// `scripts/serve-small` serves it); it stops when this process ends.
pub fn start_small() -> Llama {
    let bin = script("llama-server", "LEXRUN_LLAMA_SERVER");
    let model = script("small-model", "LEXRUN_SMALL_MODEL");
    let port = free_port();
    let mut cmd = Command::new(&bin);
    cmd.args(["-m", model.to_str().unwrap(), "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "-t", "1", "--offline"])
        .args(["-c", "8192", "-np", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    spawn_tied(cmd);
    let url = format!("http://127.0.0.1:{port}");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if let Some((200, _)) = http_get(port, "/health") {
            return Llama { url, model };
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("llama-server with the small model did not become ready on port {port}");
}

/// Spawns a process that dies with this one: from a thread that lives as long as the process,
/// with PR_SET_PDEATHSIG.
pub fn spawn_tied(mut cmd: Command) -> u32 {
    use std::os::unix::process::CommandExt;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child: std::io::Result<Child> = cmd.spawn();
        let pid = child.as_ref().map(|c| c.id()).ok();
        let _ = tx.send(pid);
        if let Ok(mut c) = child {
            let _ = c.wait();
        }
        // Keep the thread (the child's parent thread) alive for the process's lifetime.
        loop {
            std::thread::park();
        }
    });
    rx.recv().ok().flatten().expect("the server starts")
}

/// A plain HTTP GET: (status, body).
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    let status = buf.split_whitespace().nth(1)?.parse().ok()?;
    let body = buf.split_once("\r\n\r\n").map(|x| x.1.to_string())?;
    Some((status, body))
}

/// The protocol a fake server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speaks {
    Ollama,
    Llama,
}

/// Something going wrong, for one request.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Close the connection without answering.
    Refuse,
    /// Answer with this status and an error body.
    Status(u16),
    /// Send this many tokens, then close the connection mid-stream.
    CutAfter(usize),
    /// Send this many tokens, then nothing for a long time.
    HangAfter(usize),
    /// Send a line that is not JSON.
    Malformed,
    /// Ollama: an `{"error":…}` line after this many tokens, under HTTP 200.
    ErrorLine(usize),
}

/// What a request gets.
#[derive(Clone, Debug, Default)]
pub struct Answer {
    pub text: String,
    pub fault: Option<Fault>,
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub body: Value,
    pub at: Instant,
    pub done: Option<Instant>,
}

impl Seen {
    /// The user message (chat) or prompt (completion).
    pub fn prompt(&self) -> String {
        self.body["messages"][0]["content"]
            .as_str()
            .or(self.body["prompt"].as_str())
            .unwrap_or("")
            .to_string()
    }
}

type Script = dyn Fn(&Seen) -> Answer + Send + Sync;

pub struct Fake {
    pub url: String,
    pub port: u16,
    pub speaks: Speaks,
    /// Every model-call request, in order of arrival.
    pub seen: Arc<Mutex<Vec<Seen>>>,
    faults: Arc<Mutex<VecDeque<Fault>>>,
    loading_until: Arc<Mutex<Option<Instant>>>,
    stop: Arc<AtomicBool>,
    pub calls: Arc<AtomicUsize>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

pub const OLLAMA_MODEL: &str = "gemma4:26b";

impl Fake {
    /// A server whose answers come from `script`, `delay` per streamed token.
    pub fn start(
        speaks: Speaks,
        delay: Duration,
        script: impl Fn(&Seen) -> Answer + Send + Sync + 'static,
    ) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        let fake = Fake {
            url: format!("http://127.0.0.1:{port}"),
            port,
            speaks,
            seen: Arc::new(Mutex::new(Vec::new())),
            faults: Arc::new(Mutex::new(VecDeque::new())),
            loading_until: Arc::new(Mutex::new(None)),
            stop: Arc::new(AtomicBool::new(false)),
            calls: Arc::new(AtomicUsize::new(0)),
        };
        let script: Arc<Script> = Arc::new(script);
        let (seen, faults, loading, stop, calls) = (
            fake.seen.clone(),
            fake.faults.clone(),
            fake.loading_until.clone(),
            fake.stop.clone(),
            fake.calls.clone(),
        );
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let cx = Cx {
                    speaks,
                    delay,
                    script: script.clone(),
                    seen: seen.clone(),
                    faults: faults.clone(),
                    loading: loading.clone(),
                    calls: calls.clone(),
                };
                std::thread::spawn(move || {
                    let _ = cx.serve(conn);
                });
            }
        });
        fake
    }

    /// The next model calls get these faults, one each, in order.
    pub fn fail_next(&self, faults: impl IntoIterator<Item = Fault>) {
        self.faults.lock().unwrap().extend(faults);
    }

    /// Answer 503 "Loading model" for this long from now.
    pub fn loading_for(&self, d: Duration) {
        *self.loading_until.lock().unwrap() = Some(Instant::now() + d);
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

struct Cx {
    speaks: Speaks,
    delay: Duration,
    script: Arc<Script>,
    seen: Arc<Mutex<Vec<Seen>>>,
    faults: Arc<Mutex<VecDeque<Fault>>>,
    loading: Arc<Mutex<Option<Instant>>>,
    calls: Arc<AtomicUsize>,
}

fn now_rfc3339() -> &'static str {
    "2026-11-29T12:00:00.000000000Z"
}

impl Cx {
    fn serve(&self, conn: TcpStream) -> std::io::Result<()> {
        let mut reader = BufReader::new(conn.try_clone()?);
        let mut out = conn;
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut len = 0;
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            if h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);

        let loading = self
            .loading
            .lock()
            .unwrap()
            .is_some_and(|t| Instant::now() < t);
        let is_call = matches!(
            path.as_str(),
            "/api/chat" | "/v1/chat/completions" | "/completion"
        );
        if loading && (is_call || path == "/health") && self.speaks == Speaks::Llama {
            return respond(
                &mut out,
                503,
                "application/json",
                &json!({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
                    .to_string(),
            );
        }
        match (method.as_str(), path.as_str(), self.speaks) {
            ("GET", "/api/version", Speaks::Ollama) => {
                respond(&mut out, 200, "application/json", r#"{"version":"0.12.3"}"#)
            }
            ("GET", "/api/tags", Speaks::Ollama) => {
                let tags = json!({"models": [{
                    "name": OLLAMA_MODEL, "model": OLLAMA_MODEL,
                    "modified_at": now_rfc3339(), "size": 17_000_000_000u64,
                    "digest": "4c4aa1a3f0a2b7c3e1d2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4",
                    "details": {"format": "gguf", "family": "gemma3", "parameter_size": "26B", "quantization_level": "Q4_K_M"}
                }]});
                respond(&mut out, 200, "application/json", &tags.to_string())
            }
            ("POST", "/api/generate", Speaks::Ollama) => {
                // Loading a model: an empty prompt answers at once with done_reason "load".
                let v = json!({"model": body["model"], "created_at": now_rfc3339(), "response": "", "done": true, "done_reason": "load"});
                self.seen.lock().unwrap().push(Seen {
                    path: path.clone(),
                    body: body.clone(),
                    at: Instant::now(),
                    done: Some(Instant::now()),
                });
                respond(&mut out, 200, "application/json", &v.to_string())
            }
            ("GET", "/api/ps", Speaks::Ollama) => {
                respond(&mut out, 200, "application/json", r#"{"models":[]}"#)
            }
            ("GET", "/health", Speaks::Llama) => {
                respond(&mut out, 200, "application/json", r#"{"status":"ok"}"#)
            }
            ("GET", "/props", Speaks::Llama) => {
                let props = json!({
                    "default_generation_settings": {"n_ctx": 32768},
                    "total_slots": 1,
                    "model_path": "/models/fake.gguf",
                    "model_alias": "",
                });
                respond(&mut out, 200, "application/json", &props.to_string())
            }
            ("GET", "/v1/models", Speaks::Llama) => {
                // The OpenAI-style list (vLLM and others serve the models they were started with).
                let v = json!({"object": "list", "data": [
                    {"id": "gatekeeper", "object": "model", "owned_by": "test"},
                    {"id": "drafter", "object": "model", "owned_by": "test"},
                ]});
                respond(&mut out, 200, "application/json", &v.to_string())
            }
            ("POST", "/tokenize", Speaks::Llama) => {
                let n = body["content"].as_str().unwrap_or("").len().div_ceil(4);
                let tokens: Vec<u32> = (0..n as u32).collect();
                respond(
                    &mut out,
                    200,
                    "application/json",
                    &json!({"tokens": tokens}).to_string(),
                )
            }
            ("POST", "/api/chat", Speaks::Ollama)
            | ("POST", "/v1/chat/completions", Speaks::Llama) => {
                self.calls.fetch_add(1, Ordering::SeqCst);
                let fault = self.faults.lock().unwrap().pop_front();
                let mut seen = Seen {
                    path: path.clone(),
                    body: body.clone(),
                    at: Instant::now(),
                    done: None,
                };
                let answer = (self.script)(&seen);
                let fault = fault.or(answer.fault.clone());
                let idx = {
                    let mut s = self.seen.lock().unwrap();
                    s.push(seen.clone());
                    s.len() - 1
                };
                let r = self.stream(&mut out, &seen, &answer.text, fault);
                seen.done = Some(Instant::now());
                self.seen.lock().unwrap()[idx] = seen;
                r
            }
            _ => respond(&mut out, 404, "text/plain", "404 page not found"),
        }
    }

    fn stream(
        &self,
        out: &mut TcpStream,
        seen: &Seen,
        text: &str,
        fault: Option<Fault>,
    ) -> std::io::Result<()> {
        match fault {
            Some(Fault::Refuse) => return Ok(()),
            Some(Fault::Status(code)) => {
                let body = match self.speaks {
                    Speaks::Ollama => json!({"error": "model runner has unexpectedly stopped"}),
                    Speaks::Llama => {
                        json!({"error": {"code": code, "message": "internal failure", "type": "server_error"}})
                    }
                };
                return respond(out, code, "application/json", &body.to_string());
            }
            _ => {}
        }
        let ctype = match self.speaks {
            Speaks::Ollama => "application/x-ndjson",
            Speaks::Llama => "text/event-stream",
        };
        write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )?;
        let tokens = split_tokens(text);
        let model = seen.body["model"].as_str().unwrap_or("").to_string();
        let started = Instant::now();
        let prompt_n = seen.prompt().len().div_ceil(4) as u64;
        if self.speaks == Speaks::Llama {
            chunk(
                out,
                &sse(
                    &json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null}, "finish_reason": null}], "object": "chat.completion.chunk"}),
                ),
            )?;
        }
        for (i, tok) in tokens.iter().enumerate() {
            match &fault {
                Some(Fault::CutAfter(n)) if i == *n => {
                    // No terminating chunk: the body ends mid-stream.
                    return out.flush();
                }
                Some(Fault::HangAfter(n)) if i == *n => {
                    out.flush()?;
                    std::thread::sleep(Duration::from_secs(600));
                    return Ok(());
                }
                Some(Fault::Malformed) if i == 1 => {
                    let bad = match self.speaks {
                        Speaks::Ollama => "{\"model\": \"x\", \"message\": {\n".to_string(),
                        Speaks::Llama => "data: {\"choices\": [{\"delta\": \n\n".to_string(),
                    };
                    chunk(out, &bad)?;
                    return end(out);
                }
                Some(Fault::ErrorLine(n)) if i == *n => {
                    let line = match self.speaks {
                        Speaks::Ollama => json!({"error": "an error was encountered while running the model: unexpected EOF"}).to_string() + "\n",
                        Speaks::Llama => sse(&json!({"error": {"code": 500, "message": "an error was encountered while running the model", "type": "server_error"}})),
                    };
                    chunk(out, &line)?;
                    return end(out);
                }
                _ => {}
            }
            if !self.delay.is_zero() {
                std::thread::sleep(self.delay);
            }
            let piece = match self.speaks {
                Speaks::Ollama => json!({"model": model, "created_at": now_rfc3339(), "message": {"role": "assistant", "content": tok}, "done": false}).to_string() + "\n",
                // llama.cpp sends the timings so far with every piece when asked to.
                Speaks::Llama if seen.body["timings_per_token"] == true => {
                    let ms = started.elapsed().as_secs_f64() * 1000.0;
                    sse(&json!({"choices": [{"index": 0, "delta": {"content": tok}, "finish_reason": null}], "object": "chat.completion.chunk",
                        "timings": {"cache_n": 0, "prompt_n": prompt_n, "prompt_ms": 1.0, "prompt_per_second": prompt_n as f64 * 1000.0,
                            "predicted_n": i + 1, "predicted_ms": ms, "predicted_per_second": if ms > 0.0 { (i + 1) as f64 * 1000.0 / ms } else { 0.0 }}}))
                }
                Speaks::Llama => sse(&json!({"choices": [{"index": 0, "delta": {"content": tok}, "finish_reason": null}], "object": "chat.completion.chunk"})),
            };
            chunk(out, &piece)?;
        }
        let ns = started.elapsed().as_nanos().max(1) as u64;
        let n = tokens.len() as u64;
        match self.speaks {
            Speaks::Ollama => {
                let last = json!({
                    "model": model, "created_at": now_rfc3339(),
                    "message": {"role": "assistant", "content": ""},
                    "done": true, "done_reason": "stop",
                    "total_duration": ns + 1_000_000, "load_duration": 1_000_000u64,
                    "prompt_eval_count": prompt_n, "prompt_eval_duration": 1_000_000u64,
                    "eval_count": n, "eval_duration": ns,
                });
                chunk(out, &(last.to_string() + "\n"))?;
            }
            Speaks::Llama => {
                let ms = ns as f64 / 1e6;
                let timings = json!({
                    "cache_n": 0, "prompt_n": prompt_n, "prompt_ms": 1.0,
                    "prompt_per_token_ms": 1.0 / prompt_n.max(1) as f64, "prompt_per_second": prompt_n as f64 * 1000.0,
                    "predicted_n": n, "predicted_ms": ms,
                    "predicted_per_token_ms": ms / n.max(1) as f64,
                    "predicted_per_second": if ms > 0.0 { n as f64 * 1000.0 / ms } else { 0.0 },
                });
                chunk(
                    out,
                    &sse(
                        &json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "object": "chat.completion.chunk", "timings": timings}),
                    ),
                )?;
                chunk(out, "data: [DONE]\n\n")?;
            }
        }
        end(out)
    }
}

/// Whitespace-led tokens, as a tokenizer with a leading-space marker would cut them.
pub fn split_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_whitespace() && !cur.is_empty() && !cur.chars().all(char::is_whitespace) {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn sse(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn chunk(out: &mut TcpStream, s: &str) -> std::io::Result<()> {
    write!(out, "{:x}\r\n{s}\r\n", s.len())?;
    out.flush()
}

fn end(out: &mut TcpStream) -> std::io::Result<()> {
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

fn respond(out: &mut TcpStream, code: u16, ctype: &str, body: &str) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    };
    write!(
        out,
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}
