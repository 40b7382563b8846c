//! Model servers from the workflow file: `lexrun up` starts a `llama-server` per model on a
//! `llama_cpp` pool, pinned to the pool's GPUs with the declared context and cache settings,
//! and preloads models on `ollama` pools; `down` stops exactly what `up` started; `status`
//! reports on every pool; `bench` measures prompt and decode speed against `min_decode`.
//!
//! What `up` started is recorded in the store (`.lexrun/servers/` beside the workflow): one
//! JSON file per model with the PID, the process's start time and its command line, and the
//! server's log beside it. A process is signalled only if all three still match, so a stale
//! record can never kill a process lexrun did not start.

use lexrun_backend as backend;
use lexrun_base::{atomic, credentials};
use lexrun_plan as plan;
use lexrun_store as store;

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::backend::endpoint::Overrides;
use crate::backend::{Health, Limits};

mod bench;
mod error;
mod launch;
mod record;
mod served;
mod status;

pub use bench::{bench, speeds, Bench, Speed};
pub use error::ServeError;
pub use launch::{dry_run, launches, llama_server, tensor_split, Launch};
pub use record::servers_dir;
pub use status::{status, Status};

use crate::plan::workflow::{Model, ServerKind, Weights};
use crate::plan::Plan;
use launch::*;
use record::*;

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
    endpoints: &Overrides,
    limits: &Limits,
) -> Result<Vec<Record>, ServeError> {
    let launches = launches(plan, workflow_dir, only, endpoints)?;
    let dir = servers_dir(store);
    std::fs::create_dir_all(&dir)
        .map_err(|e| ServeError::Failed(format!("cannot create `{}`: {e}", dir.display())))?;
    // Check everything before starting anything.
    let programs = preflight(plan, workflow_dir, &dir, &launches)?;
    let mut started = Vec::new();
    for (l, program) in launches.iter().zip(programs) {
        started.push(start(l, &program, &dir)?);
    }
    // Wait for every server, showing each state change.
    for r in &started {
        wait_up(r, limits).await?;
    }
    // A pool that needs a newer llama.cpp than the one just started says so.
    check_builds(plan, &started, limits).await?;
    // Ollama pools: the model must exist; preload it so it stays resident.
    preload_ollama_pools(plan, only, endpoints, limits).await?;
    Ok(started)
}

/// Before anything starts: each launch's llama-server program, once its GGUF file exists,
/// no server of ours already serves the model and its port is free.
fn preflight(
    plan: &Plan,
    workflow_dir: &Path,
    dir: &Path,
    launches: &[Launch],
) -> Result<Vec<PathBuf>, ServeError> {
    let mut program_of = Vec::new();
    for l in launches {
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
    Ok(program_of)
}

/// Starts one server in its own session, logging to its log file, and records it.
fn start(l: &Launch, program: &Path, dir: &Path) -> Result<Record, ServeError> {
    let log = dir.join(format!("{}.log", l.model));
    let logf = std::fs::File::create(&log)
        .map_err(|e| ServeError::Failed(format!("cannot write `{}`: {e}", log.display())))?;
    let mut cmd = Command::new(program);
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
    let child = cmd
        .spawn()
        .map_err(|e| ServeError::Failed(format!("cannot start `{}`: {e}", program.display())))?;
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
    crate::atomic::write(&state, &serde_json::to_vec_pretty(&rec).unwrap_or_default())
        .map_err(|e| ServeError::Failed(format!("cannot write `{}`: {e}", state.display())))?;
    say(&format!(
        "  starting {:<12} {} (pid {pid}, log {})",
        l.model,
        l.url,
        log.display()
    ));
    Ok(rec)
}

/// Refuses a started llama.cpp server older than its pool's `min_build`.
async fn check_builds(plan: &Plan, started: &[Record], limits: &Limits) -> Result<(), ServeError> {
    for r in started {
        let Some(min) = plan
            .pools
            .iter()
            .find(|p| p.name == r.pool)
            .and_then(|p| p.min_build.as_ref())
        else {
            continue;
        };
        let backend = backend::connect(ServerKind::LlamaCpp, &r.url, limits)?;
        let build = backend.identity(&r.model).await.ok().and_then(|i| i.build);
        if let Some(why) = backend::endpoint::build_refusal(min, &r.pool, &r.url, build.as_deref())
        {
            return Err(ServeError::Failed(format!(
                "{why}; the servers started are still running (`lexrun down` stops them)"
            )));
        }
    }
    Ok(())
}

/// Preloads each Ollama pool's models, which must exist there, so that they stay resident.
async fn preload_ollama_pools(
    plan: &Plan,
    only: &[String],
    endpoints: &Overrides,
    limits: &Limits,
) -> Result<(), ServeError> {
    for (pool, m) in models_served_by(plan, only, ServerKind::Ollama) {
        // A pool given another kind of server on the command line has no Ollama to preload.
        if endpoints
            .get(&pool.name)
            .and_then(|o| o.server)
            .is_some_and(|k| k != ServerKind::Ollama)
        {
            continue;
        }
        let url = endpoints.get(&pool.name).map_or(&pool.endpoint, |o| &o.url);
        preload_ollama(m, url, limits).await?;
    }
    Ok(())
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
    backend.identity(tag).await.map_err(|e| {
        ServeError::Failed(format!(
            "model `{}` on {}: {e}",
            m.name,
            crate::credentials::url(url)
        ))
    })?;
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
