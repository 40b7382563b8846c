//! Model servers from the workflow file: `lexrun up` starts a `llama-server` per model on a
//! `llama_cpp` pool, pinned to the pool's GPUs with the declared context and cache settings,
//! and preloads models on `ollama` pools; `down` stops exactly what `up` started; `status`
//! reports on every pool; `bench` measures prompt and decode speed against `min_decode`.
//!
//! What `up` started is recorded in the store (`.lexrun/servers/` beside the workflow): one
//! JSON file per model with the PID, the process's start time and its command line, and the
//! server's log beside it. A process is signalled only if all three still match, so a stale
//! record can never kill a process lexrun did not start.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::backend::{self, Backend, Call, Health, Limits};
use crate::plan::workflow::{Model, Pool, ServerKind, Weights};
use crate::plan::Plan;

/// One server `up` would start: its environment and command line.
#[derive(Clone, Debug, Serialize)]
pub struct Launch {
    pub model: String,
    pub pool: String,
    pub url: String,
    pub host: String,
    pub port: u16,
    pub env: Vec<(String, String)>,
    pub program: String,
    pub args: Vec<String>,
    pub gguf: PathBuf,
}

impl Launch {
    /// The command as a shell line.
    pub fn shell(&self) -> String {
        let mut parts: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", quote(v)))
            .collect();
        parts.push(quote(&self.program));
        parts.extend(self.args.iter().map(|a| quote(a)));
        parts.join(" ")
    }
}

fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,=@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What `up` recorded about a server it started.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub model: String,
    pub pool: String,
    pub url: String,
    pub pid: u32,
    /// The process's start time in clock ticks since boot (`/proc/PID/stat`, field 22).
    pub start_ticks: u64,
    pub program: String,
    pub args: Vec<String>,
    pub log: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Connect(#[from] crate::backend::ConnectError),
    #[error("{0}")]
    Failed(String),
}

/// GPU shares for `--tensor-split`: each GPU's memory, divided by their greatest common
/// divisor (32 GB + 16 GB → 2,1).
pub fn tensor_split(vram: &[u64]) -> Vec<u64> {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let g = vram.iter().copied().fold(0, gcd).max(1);
    vram.iter().map(|v| v / g).collect()
}

/// The `llama-server` program: the pool's `binary`, else `LEXRUN_LLAMA_SERVER`, else
/// `llama-server` on PATH.
pub fn llama_server(pool: &Pool, workflow_dir: &Path) -> Result<PathBuf, ServeError> {
    let hint = "declare it in the pool (`binary \"/path/to/llama-server\"`), set LEXRUN_LLAMA_SERVER, or put llama-server on PATH (scripts/llama-server builds a CPU one)";
    if let Some(b) = &pool.binary {
        let p = workflow_dir.join(b);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(ServeError::Input(format!(
                "pool `{}`: the server program `{}` does not exist; {hint}",
                pool.name,
                p.display()
            )))
        };
    }
    if let Some(p) = std::env::var_os("LEXRUN_LLAMA_SERVER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(ServeError::Input(format!(
                "LEXRUN_LLAMA_SERVER names `{}`, which does not exist; {hint}",
                p.display()
            )))
        };
    }
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            let p = d.join("llama-server");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(ServeError::Input(format!(
        "llama-server was not found; {hint}"
    )))
}

/// The models (all, or those named in `only`) on pools of one server kind, in plan order.
fn models_served_by<'a>(
    plan: &'a Plan,
    only: &'a [String],
    kind: ServerKind,
) -> impl Iterator<Item = (&'a Pool, &'a Model)> + 'a {
    plan.models
        .iter()
        .filter(move |m| only.is_empty() || only.contains(&m.name))
        .filter_map(move |m| {
            let pool = plan.pools.iter().find(|p| p.name == m.pool)?;
            (pool.server == kind).then_some((&pool.item, &m.item))
        })
}

/// The servers `up` would start, in plan order.
pub fn launches(
    plan: &Plan,
    workflow_dir: &Path,
    only: &[String],
    endpoints: &BTreeMap<String, String>,
) -> Result<Vec<Launch>, ServeError> {
    for o in only {
        if !plan.models.iter().any(|m| &m.name == o) {
            let all: Vec<&str> = plan.models.iter().map(|m| m.name.as_str()).collect();
            return Err(ServeError::Input(format!(
                "--only {o}: the workflow has no model `{o}`; its models: {}",
                all.join(", ")
            )));
        }
    }
    let mut out = Vec::new();
    let mut per_pool: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (pool, m) in models_served_by(plan, only, ServerKind::LlamaCpp) {
        per_pool.entry(&pool.name).or_default().push(&m.name);
        out.push(launch(pool, m, workflow_dir, endpoints)?);
    }
    if let Some((pool, models)) = per_pool.iter().find(|(_, ms)| ms.len() > 1) {
        return Err(ServeError::Input(format!(
            "pool `{pool}` has one endpoint but {} models on llama.cpp ({}); llama-server serves one model: give each model its own pool",
            models.len(),
            models.join(", ")
        )));
    }
    Ok(out)
}

fn launch(
    pool: &Pool,
    m: &Model,
    workflow_dir: &Path,
    endpoints: &BTreeMap<String, String>,
) -> Result<Launch, ServeError> {
    let url = endpoints.get(&pool.name).unwrap_or(&pool.endpoint).clone();
    let parsed = url::Url::parse(&url).map_err(|e| {
        ServeError::Input(format!("pool `{}`: `{url}` is not a URL: {e}", pool.name))
    })?;
    let host = parsed.host_str().unwrap_or("127.0.0.1").to_string();
    let port = parsed.port_or_known_default().unwrap_or(8080);
    let Weights::Gguf { path, .. } = &m.weights else {
        return Err(ServeError::Input(format!(
            "model `{}` names an Ollama tag, but pool `{}` serves llama.cpp, which needs a `gguf` file",
            m.name, pool.name
        )));
    };
    let gguf = workflow_dir.join(path);
    let program = std::env::var("LEXRUN_LLAMA_SERVER")
        .ok()
        .filter(|_| pool.binary.is_none())
        .or_else(|| pool.binary.clone())
        .unwrap_or_else(|| "llama-server".into());
    let mut args = vec![
        "-m".to_string(),
        gguf.display().to_string(),
        "--host".into(),
        host.clone(),
        "--port".into(),
        port.to_string(),
        "-c".into(),
        m.ctx.to_string(),
        "-ngl".into(),
        "999".into(),
    ];
    if m.flash_attn {
        args.extend(["-fa".into(), "on".into()]);
    }
    args.extend(["-ctk".into(), m.kv_k.clone(), "-ctv".into(), m.kv_v.clone()]);
    args.extend(["-np".into(), pool.slots.max(1).to_string()]);
    if pool.gpus.len() > 1 {
        let split: Vec<String> = tensor_split(&pool.vram)
            .iter()
            .map(u64::to_string)
            .collect();
        args.extend(["--tensor-split".into(), split.join(",")]);
    }
    let gpus: Vec<String> = pool.gpus.iter().map(u32::to_string).collect();
    Ok(Launch {
        model: m.name.clone(),
        pool: pool.name.clone(),
        url,
        host,
        port,
        env: vec![("CUDA_VISIBLE_DEVICES".into(), gpus.join(","))],
        program,
        args,
        gguf,
    })
}

/// Where `up` keeps what it started.
pub fn servers_dir(store: &Path) -> PathBuf {
    store.join("servers")
}

fn proc_start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces; fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn proc_cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the recorded process is still the one `up` started.
pub fn is_ours(r: &Record) -> bool {
    proc_start_ticks(r.pid) == Some(r.start_ticks)
        && proc_cmdline(r.pid).get(1..) == Some(&r.args[..])
}

/// The last lines of a log, for a server that died.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 << 10)));
    let mut buf = String::new();
    let _ = f.read_to_string(&mut buf);
    let all: Vec<&str> = buf.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn say(line: &str) {
    eprintln!("{line}");
}

/// Starts every server; waits until each is ready (or fails with why).
pub async fn up(
    plan: &Plan,
    workflow_dir: &Path,
    store: &Path,
    only: &[String],
    endpoints: &BTreeMap<String, String>,
    limits: &Limits,
) -> Result<Vec<Record>, ServeError> {
    let launches = launches(plan, workflow_dir, only, endpoints)?;
    let dir = servers_dir(store);
    std::fs::create_dir_all(&dir)
        .map_err(|e| ServeError::Failed(format!("cannot create `{}`: {e}", dir.display())))?;
    // Check everything before starting anything.
    let mut program_of = Vec::new();
    for l in &launches {
        let pool = plan
            .pools
            .iter()
            .find(|p| p.name == l.pool)
            .map(|p| p.item.clone())
            .ok_or_else(|| ServeError::Input(format!("no pool `{}`", l.pool)))?;
        let program = llama_server(&pool, workflow_dir)?;
        if !l.gguf.is_file() {
            return Err(ServeError::Input(format!(
                "model `{}`: the GGUF file `{}` does not exist; copy it there or fix `gguf` in the workflow",
                l.model,
                l.gguf.display()
            )));
        }
        let state = dir.join(format!("{}.json", l.model));
        if let Some(r) = read_record(&state) {
            if is_ours(&r) {
                return Err(ServeError::Input(format!(
                    "model `{}` is already served by process {} (started by `lexrun up`); `lexrun down` stops it",
                    l.model, r.pid
                )));
            }
            let _ = std::fs::remove_file(&state);
        }
        if std::net::TcpListener::bind((l.host.as_str(), l.port)).is_err() {
            return Err(ServeError::Input(format!(
                "model `{}`: port {} on {} is already in use; stop what listens there (`lexrun status` shows whether it is a model server), or give pool `{}` another endpoint",
                l.model, l.port, l.host, l.pool
            )));
        }
        program_of.push(program);
    }
    let mut started = Vec::new();
    for (l, program) in launches.iter().zip(program_of) {
        let log = dir.join(format!("{}.log", l.model));
        let logf = std::fs::File::create(&log)
            .map_err(|e| ServeError::Failed(format!("cannot write `{}`: {e}", log.display())))?;
        let mut cmd = Command::new(&program);
        cmd.args(&l.args)
            .envs(l.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(
                logf.try_clone()
                    .map_err(|e| ServeError::Failed(e.to_string()))?,
            )
            .stderr(logf);
        // Its own session: the server outlives `lexrun up` and a Ctrl-C in its terminal.
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe and touches no memory of this process.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| {
            ServeError::Failed(format!("cannot start `{}`: {e}", program.display()))
        })?;
        let pid = child.id();
        // The child is reaped by whoever stops it; never wait on it here.
        std::mem::forget(child);
        let rec = Record {
            model: l.model.clone(),
            pool: l.pool.clone(),
            url: l.url.clone(),
            pid,
            start_ticks: proc_start_ticks(pid).unwrap_or(0),
            program: program.display().to_string(),
            args: l.args.clone(),
            log: log.clone(),
        };
        let state = dir.join(format!("{}.json", l.model));
        std::fs::write(&state, serde_json::to_vec_pretty(&rec).unwrap_or_default())
            .map_err(|e| ServeError::Failed(format!("cannot write `{}`: {e}", state.display())))?;
        say(&format!(
            "  starting {:<12} {} (pid {pid}, log {})",
            l.model,
            l.url,
            log.display()
        ));
        started.push(rec);
    }
    // Wait for every server, showing each state change.
    for r in &started {
        wait_up(r, limits).await?;
    }
    // Ollama pools: the model must exist; preload it so it stays resident.
    for (pool, m) in models_served_by(plan, only, ServerKind::Ollama) {
        let url = endpoints.get(&pool.name).unwrap_or(&pool.endpoint);
        preload_ollama(m, url, limits).await?;
    }
    Ok(started)
}

async fn wait_up(r: &Record, limits: &Limits) -> Result<(), ServeError> {
    let backend = backend::connect(ServerKind::LlamaCpp, &r.url, limits)?;
    let start = Instant::now();
    let mut state = "starting".to_string();
    loop {
        if !is_ours(r) {
            return Err(ServeError::Failed(format!(
                "model `{}`: llama-server exited while loading; the end of its log ({}):\n{}",
                r.model,
                r.log.display(),
                tail(&r.log, 20)
            )));
        }
        let now = match backend.health().await {
            Ok(Health::Ready) => "ready".to_string(),
            Ok(Health::Loading(_)) => "loading".to_string(),
            Err(_) => "starting".to_string(),
        };
        if now != state {
            say(&format!(
                "  {:<12} {now} ({:.1} s)",
                r.model,
                start.elapsed().as_secs_f64()
            ));
            state = now;
        }
        if state == "ready" {
            return Ok(());
        }
        if start.elapsed() > limits.load {
            return Err(ServeError::Failed(format!(
                "model `{}` was not ready after {} s (still {state}); it keeps running: watch its log {} and `lexrun status`, or raise --timeout",
                r.model,
                limits.load.as_secs(),
                r.log.display()
            )));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn preload_ollama(m: &Model, url: &str, limits: &Limits) -> Result<(), ServeError> {
    let Weights::Tag { tag } = &m.weights else {
        return Err(ServeError::Input(format!(
            "model `{}` is on an Ollama pool but names a GGUF file; give it a `tag`",
            m.name
        )));
    };
    let backend = backend::connect(ServerKind::Ollama, url, limits)?;
    backend
        .identity(tag)
        .await
        .map_err(|e| ServeError::Failed(format!("model `{}` on {url}: {e}", m.name)))?;
    let http = backend::Http::new(url, limits)?;
    let body = json!({"model": tag, "prompt": "", "keep_alive": -1, "options": {"num_ctx": m.ctx}});
    http.post(&http.url("/api/generate"), &body)
        .await
        .map_err(|e| {
            ServeError::Failed(format!(
                "model `{}`: preloading on {url} failed: {e}",
                m.name
            ))
        })?;
    say(&format!(
        "  {:<12} loaded on {url} (Ollama, num_ctx {}, kept resident)",
        m.name, m.ctx
    ));
    Ok(())
}

pub fn read_record(path: &Path) -> Option<Record> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Stops what `up` started: SIGTERM, `grace`, then SIGKILL. A record whose process is gone or
/// is now another program is removed without signalling anything.
pub fn down(store: &Path, grace: Duration) -> Result<Vec<String>, ServeError> {
    let dir = servers_dir(store);
    let mut lines = Vec::new();
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Ok(lines);
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for f in files {
        let Some(r) = read_record(&f) else {
            lines.push(format!("  {}: unreadable record removed", f.display()));
            let _ = std::fs::remove_file(&f);
            continue;
        };
        if !is_ours(&r) {
            lines.push(format!(
                "  {:<12} not running (process {} is gone or is another program; not signalled); record removed",
                r.model, r.pid
            ));
            let _ = std::fs::remove_file(&f);
            continue;
        }
        // SAFETY: kill(2) with a PID that is verified to be the server we started.
        unsafe {
            libc::kill(r.pid as i32, libc::SIGTERM);
        }
        let start = Instant::now();
        let mut how = "stopped";
        while is_ours(&r) && !is_zombie(r.pid) {
            if start.elapsed() > grace {
                // SAFETY: as above.
                unsafe {
                    libc::kill(r.pid as i32, libc::SIGKILL);
                }
                how = "killed after the grace period";
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Reap it if it is our child (when `up` and `down` ran in one process).
        // SAFETY: waitpid on a specific pid with WNOHANG has no other effect.
        unsafe {
            libc::waitpid(r.pid as i32, std::ptr::null_mut(), libc::WNOHANG);
        }
        lines.push(format!("  {:<12} {how} (pid {})", r.model, r.pid));
        let _ = std::fs::remove_file(&f);
    }
    Ok(lines)
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
        .unwrap_or(true)
}

/// One line of `status`.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    pub pool: String,
    pub model: String,
    pub server: String,
    pub url: String,
    /// up, loading, down, or wrong model.
    pub state: String,
    pub detail: String,
    pub served: Option<String>,
    pub ctx: Option<u64>,
    pub slots: Option<u32>,
    pub slots_busy: Option<u32>,
    /// tok/s from the last `lexrun bench` of this model.
    pub last_decode: Option<f64>,
}

pub async fn status(
    plan: &Plan,
    store: &Path,
    endpoints: &BTreeMap<String, String>,
    limits: &Limits,
) -> Vec<Status> {
    let benched: Value = std::fs::read(store.join("bench.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let quick = Limits {
        retries: 0,
        ..limits.clone()
    };
    let mut out = Vec::new();
    for m in plan.models.iter() {
        let Some(pool) = plan.pools.iter().find(|p| p.name == m.pool) else {
            continue;
        };
        let url = endpoints.get(&pool.name).unwrap_or(&pool.endpoint).clone();
        let mut st = Status {
            pool: pool.name.clone(),
            model: m.name.clone(),
            server: pool.server.as_str().into(),
            url: url.clone(),
            state: "down".into(),
            detail: String::new(),
            served: None,
            ctx: None,
            slots: None,
            slots_busy: None,
            last_decode: benched[&m.name]["decode_per_second"].as_f64(),
        };
        let Ok(b) = backend::connect(pool.server, &url, &quick) else {
            st.detail = "not a usable URL".into();
            out.push(st);
            continue;
        };
        let served_name = match &m.weights {
            Weights::Tag { tag } => tag.clone(),
            Weights::Gguf { .. } => m.name.clone(),
        };
        match b.health().await {
            Ok(Health::Loading(msg)) => {
                st.state = "loading".into();
                st.detail = msg;
            }
            Err(e) => st.detail = e.to_string(),
            Ok(Health::Ready) => match b.identity(&served_name).await {
                Ok(id) => {
                    st.state = "up".into();
                    st.ctx = id.n_ctx;
                    st.slots = id.slots;
                    if let Weights::Gguf { path, .. } = &m.weights {
                        let want = Path::new(path)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned());
                        if want.is_some_and(|w| !id.model.ends_with(&w)) {
                            st.state = "wrong model".into();
                            st.detail = format!("serves `{}`, not `{path}`", id.model);
                        }
                    }
                    st.served = Some(id.model);
                    if pool.server == ServerKind::LlamaCpp {
                        st.slots_busy = slots_busy(&url, &quick).await;
                    }
                }
                Err(e) => {
                    st.state = if pool.server == ServerKind::Ollama {
                        "wrong model".into()
                    } else {
                        "down".into()
                    };
                    st.detail = e.to_string();
                }
            },
        }
        out.push(st);
    }
    out
}

async fn slots_busy(url: &str, limits: &Limits) -> Option<u32> {
    let http = backend::Http::new(url, limits).ok()?;
    let v = http
        .get_json(&format!("{}/slots", http.origin()))
        .await
        .ok()?;
    Some(
        v.as_array()?
            .iter()
            .filter(|s| s["is_processing"].as_bool() == Some(true))
            .count() as u32,
    )
}

/// One model's measured speeds.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    pub model: String,
    pub pool: String,
    pub runs: usize,
    pub prompt_tokens: u64,
    pub prompt_per_second: f64,
    pub decode_per_second: f64,
    pub min_decode: Option<f64>,
    pub ok: bool,
    pub error: Option<String>,
}

/// The fixed prompt: about 512 tokens of plain English on most tokenizers.
fn bench_prompt(run: usize) -> String {
    let para = "The tenant gave written notice of the broken heating on the third of March, and the landlord did not repair it within the thirty days the lease allows. ";
    format!(
        "Run {run}. {}\nSummarise the paragraph above in one sentence.",
        para.repeat(16)
    )
}

pub async fn bench(
    plan: &Plan,
    store: &Path,
    endpoints: &BTreeMap<String, String>,
    runs: usize,
    limits: &Limits,
) -> Vec<Bench> {
    let mut out = Vec::new();
    for m in plan.models.iter() {
        let Some(pool) = plan.pools.iter().find(|p| p.name == m.pool) else {
            continue;
        };
        let url = endpoints.get(&pool.name).unwrap_or(&pool.endpoint).clone();
        let mut r = Bench {
            model: m.name.clone(),
            pool: pool.name.clone(),
            runs,
            prompt_tokens: 0,
            prompt_per_second: 0.0,
            decode_per_second: 0.0,
            min_decode: m.min_decode,
            ok: false,
            error: None,
        };
        let backend: Box<dyn Backend> = match backend::connect(pool.server, &url, limits) {
            Ok(b) => b,
            Err(e) => {
                r.error = Some(e.to_string());
                out.push(r);
                continue;
            }
        };
        let (mut pp, mut dec) = (Vec::new(), Vec::new());
        for i in 0..runs.max(1) {
            let call = Call {
                stage: "bench".into(),
                model: match &m.weights {
                    Weights::Tag { tag } => tag.clone(),
                    Weights::Gguf { .. } => m.name.clone(),
                },
                prompt: bench_prompt(i),
                schema: None,
                sampling: [
                    ("temperature".to_string(), 0.0),
                    ("max_tokens".to_string(), 128.0),
                ]
                .into(),
                num_ctx: m.ctx,
                slot: None,
                timeout: Duration::from_secs(600),
            };
            match backend::call(backend.as_ref(), &call, limits, &|_| {}, &|_| {}).await {
                Ok((reply, _)) => {
                    let t = reply.timings;
                    r.prompt_tokens = t.prompt_n + t.cache_n;
                    pp.push(t.prompt_per_second);
                    dec.push(t.predicted_per_second);
                }
                Err((e, _)) => {
                    r.error = Some(format!("{e}"));
                    break;
                }
            }
        }
        if r.error.is_none() {
            r.prompt_per_second = median(pp);
            r.decode_per_second = median(dec);
            r.ok = m.min_decode.is_none_or(|f| r.decode_per_second >= f);
        }
        out.push(r);
    }
    // Kept for `status`: the last measured decode speed of each model.
    let mut last: serde_json::Map<String, Value> = std::fs::read(store.join("bench.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    for r in out.iter().filter(|r| r.error.is_none()) {
        last.insert(r.model.clone(), json!({"decode_per_second": r.decode_per_second, "prompt_per_second": r.prompt_per_second}));
    }
    if std::fs::create_dir_all(store).is_ok() {
        let _ = std::fs::write(
            store.join("bench.json"),
            serde_json::to_vec_pretty(&last).unwrap_or_default(),
        );
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_split_is_proportional_and_reduced() {
        let g = 1u64 << 30;
        assert_eq!(tensor_split(&[32 * g, 16 * g]), vec![2, 1]);
        assert_eq!(tensor_split(&[32 * g; 4]), vec![1, 1, 1, 1]);
        assert_eq!(tensor_split(&[24 * g, 16 * g]), vec![3, 2]);
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("-ngl"), "-ngl");
    }

    #[test]
    fn a_process_that_is_not_ours_is_never_claimed() {
        let me = std::process::id();
        let r = Record {
            model: "m".into(),
            pool: "p".into(),
            url: String::new(),
            pid: me,
            start_ticks: proc_start_ticks(me).unwrap(),
            program: "x".into(),
            args: vec!["not-my-args".into()],
            log: PathBuf::new(),
        };
        assert!(!is_ours(&r), "same pid and start, other command line");
        let r2 = Record {
            start_ticks: 1,
            args: proc_cmdline(me)[1..].to_vec(),
            ..r
        };
        assert!(!is_ours(&r2), "same pid and command line, other start time");
    }
}
