//! Server command lines: one `llama-server` per model on a `llama_cpp` pool, pinned to the
//! pool's GPUs with the declared context and cache settings, and the program that serves them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::ServeError;
use crate::backend::endpoint::Overrides;
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

pub(super) fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,=@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
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
pub(super) fn models_served_by<'a>(
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
    endpoints: &Overrides,
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

pub(super) fn launch(
    pool: &Pool,
    m: &Model,
    workflow_dir: &Path,
    endpoints: &Overrides,
) -> Result<Launch, ServeError> {
    let url = endpoints
        .get(&pool.name)
        .map_or(&pool.endpoint, |o| &o.url)
        .clone();
    let parsed = url::Url::parse(&url).map_err(|e| {
        ServeError::Input(format!(
            "pool `{}`: `{}` is not a URL: {e}",
            pool.name,
            crate::credentials::url(&url)
        ))
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

/// What `up --dry-run` prints: the environment and command line of every server `up` would
/// start, then the preload request for every model on an Ollama pool.
pub fn dry_run(
    plan: &Plan,
    workflow_dir: &Path,
    only: &[String],
    endpoints: &Overrides,
) -> Result<String, ServeError> {
    let mut out = String::new();
    for l in &launches(plan, workflow_dir, only, endpoints)? {
        out.push_str(&format!(
            "# {} on pool {} at {}\n{}\n\n",
            l.model,
            l.pool,
            l.url,
            l.shell()
        ));
    }
    let chosen = plan
        .models
        .iter()
        .filter(|m| only.is_empty() || only.contains(&m.name));
    for m in chosen {
        let Some(p) = plan.pools.iter().find(|p| p.name == m.pool) else {
            continue;
        };
        if p.server != ServerKind::Ollama {
            continue;
        }
        let url = endpoints.get(&p.name).map_or(&p.endpoint, |o| &o.url);
        let tag = match &m.weights {
            Weights::Tag { tag } => tag,
            Weights::Gguf { path, .. } => path,
        };
        out.push_str(&format!(
            "# {} on pool {} at {url} (Ollama)\nPOST {url}/api/generate {{\"model\": \"{tag}\", \"keep_alive\": -1, \"options\": {{\"num_ctx\": {}}}}}\n\n",
            m.name, p.name, m.ctx
        ));
    }
    Ok(out)
}
