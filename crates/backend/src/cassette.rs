//! Cassettes: every model exchange of a run, recorded once against real servers and replayed
//! with no server at all. One JSON object per line: a header line, the servers' identities,
//! then the exchanges sorted by stage and request hash, so a re-recording diffs cleanly.
//! Requests are keyed by the blake3 of their content (model, prompt, schema, sampling,
//! context). lexrun sends no credentials, and none are ever written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::{Answer, Backend, Call, CallError, Health, Identity, OnToken, Reply, Timings};
use lexrun_base::server_kind::ServerKind;

/// Bumped when the meaning of a cassette's fields changes.
pub const FORMAT: u32 = 1;

/// How a replay that asks what the cassette does not hold is said (`lexrun test` looks for it).
pub const MISS: &str = "this request is not in cassette";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Call the servers and write every exchange.
    Record,
    /// Serve every call from the cassette; a call not in it is an error.
    Replay,
    /// Serve what the cassette has; call the servers for the rest and add them.
    ReplayOrRecord,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Request {
    pub model: String,
    pub prompt: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub schema: Option<Value>,
    pub sampling: BTreeMap<String, f64>,
    pub num_ctx: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Response {
    pub text: String,
    pub tokens: u64,
    pub finish: Option<String>,
    pub timings: Timings,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exchange {
    pub key: String,
    /// The same request's earlier occurrences in the run (a reviewer asked twice about the
    /// same text): each is answered in the order recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub n: u32,
    pub stage: String,
    pub pool: String,
    pub server: String,
    pub request: Request,
    pub response: Response,
}

#[derive(Serialize, Deserialize)]
struct Header {
    cassette: u32,
    note: String,
    /// The workflow it was recorded for (older cassettes do not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    workflow: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct IdentityLine {
    pool: String,
    identity: Identity,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

pub struct Cassette {
    pub path: PathBuf,
    pub mode: Mode,
    note: String,
    /// The workflow it was recorded for: from its header, then the run's.
    workflow: Mutex<Option<String>>,
    exchanges: Mutex<BTreeMap<(String, u32), Exchange>>,
    /// How many times each request has been asked in this run.
    seen: Mutex<BTreeMap<String, u32>>,
    identities: Mutex<BTreeMap<String, Identity>>,
}

#[derive(Debug, thiserror::Error)]
#[error("cassette `{path}`, line {line}: {message}")]
pub struct CassetteError {
    pub path: String,
    pub line: usize,
    pub message: String,
}

pub fn key(r: &Request) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"lexrun-cassette-request\0");
    let _ = serde_json::to_writer(&mut h, r);
    h.finalize().to_hex()[..32].to_string()
}

impl Cassette {
    /// Opens a cassette: read for replay, empty for a new recording.
    pub fn open(path: &Path, mode: Mode) -> Result<Cassette, CassetteError> {
        let c = Cassette {
            path: path.to_path_buf(),
            mode,
            note: "Recorded by lexrun against live model servers.".into(),
            workflow: Mutex::new(None),
            exchanges: Mutex::new(BTreeMap::new()),
            seen: Mutex::new(BTreeMap::new()),
            identities: Mutex::new(BTreeMap::new()),
        };
        if mode == Mode::Record {
            return Ok(c);
        }
        let err = |line: usize, message: String| CassetteError {
            path: path.display().to_string(),
            line,
            message,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && mode == Mode::ReplayOrRecord => {
                return Ok(c);
            }
            Err(e) => {
                return Err(err(
                    0,
                    format!("cannot read it: {e}; record one with --record"),
                ))
            }
        };
        let mut c = c;
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).map_err(|e| {
                err(
                    n,
                    format!("not JSON ({e}); a cassette has one JSON object per line"),
                )
            })?;
            if n == 1 {
                let h: Header = serde_json::from_value(v).map_err(|_| {
                    err(
                        n,
                        "the first line should be the header {\"cassette\": 1, \"note\": …}".into(),
                    )
                })?;
                if h.cassette != FORMAT {
                    return Err(err(n, format!("cassette format {} is not the {FORMAT} this lexrun reads; record it again", h.cassette)));
                }
                c.note = h.note;
                *c.workflow
                    .get_mut()
                    .map_err(|_| err(n, "poisoned".into()))? = h.workflow;
            } else if v.get("identity").is_some() {
                let id: IdentityLine = serde_json::from_value(v)
                    .map_err(|e| err(n, format!("a bad identity line: {e}")))?;
                c.identities
                    .get_mut()
                    .map_err(|_| err(n, "poisoned".into()))?
                    .insert(id.pool, id.identity);
            } else {
                let ex: Exchange = serde_json::from_value(v)
                    .map_err(|e| err(n, format!("a bad exchange: {e}")))?;
                if key(&ex.request) != ex.key {
                    return Err(err(n, format!("the exchange of stage `{}` was edited: its key no longer matches its request", ex.stage)));
                }
                c.exchanges
                    .get_mut()
                    .map_err(|_| err(n, "poisoned".into()))?
                    .insert((ex.key.clone(), ex.n), ex);
            }
        }
        if c.exchanges.get_mut().map(|e| e.is_empty()).unwrap_or(true) && mode == Mode::Replay {
            return Err(err(
                1,
                "it holds no exchanges; record it again against live servers: `lexrun run FILE.lex --record PATH`".into(),
            ));
        }
        Ok(c)
    }

    pub fn note(&self) -> &str {
        &self.note
    }

    /// Ties the cassette to the workflow that runs with it. A cassette recorded for another
    /// workflow (its header says so, or none of its exchanges is of one of `stages`) is an
    /// error before anything is asked; a recording is saved with the workflow's name.
    pub fn bind(&self, workflow: &str, stages: &[&str]) -> Result<(), CassetteError> {
        let err = |message: String| CassetteError {
            path: self.path.display().to_string(),
            line: 1,
            message,
        };
        let Ok(mut bound) = self.workflow.lock() else {
            return Ok(());
        };
        let fix = format!(
            "name the cassette recorded for workflow `{workflow}`, or record one: `lexrun run FILE.lex --record {}`",
            self.path.display()
        );
        if let Some(other) = bound.as_deref().filter(|w| *w != workflow) {
            return Err(err(format!(
                "it was recorded for workflow `{other}`, not `{workflow}`; {fix}"
            )));
        }
        if bound.is_none() {
            let ex = self.exchanges.lock().map_err(|_| err("poisoned".into()))?;
            let recorded: std::collections::BTreeSet<&str> =
                ex.values().map(|e| e.stage.as_str()).collect();
            if !recorded.is_empty() && !recorded.iter().any(|s| stages.contains(s)) {
                return Err(err(format!(
                    "it answers stages {} and workflow `{workflow}` has none of them: it was recorded for another workflow; {fix}",
                    recorded
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        *bound = Some(workflow.to_string());
        Ok(())
    }

    /// Writes the cassette (when anything was recorded), sorted, through a temporary file.
    pub fn save(&self, note: Option<&str>) -> std::io::Result<()> {
        if self.mode == Mode::Replay {
            return Ok(());
        }
        let mut out = String::new();
        let header = Header {
            cassette: FORMAT,
            note: note
                .map(str::to_string)
                .unwrap_or_else(|| self.note.clone()),
            workflow: self.workflow.lock().ok().and_then(|w| w.clone()),
        };
        out.push_str(&serde_json::to_string(&header).unwrap_or_default());
        out.push('\n');
        if let Ok(ids) = self.identities.lock() {
            for (pool, identity) in ids.iter() {
                let line = IdentityLine {
                    pool: pool.clone(),
                    identity: identity.clone(),
                };
                out.push_str(&serde_json::to_string(&line).unwrap_or_default());
                out.push('\n');
            }
        }
        if let Ok(ex) = self.exchanges.lock() {
            let mut all: Vec<&Exchange> = ex.values().collect();
            all.sort_by(|a, b| (&a.stage, &a.key, a.n).cmp(&(&b.stage, &b.key, b.n)));
            for e in all {
                out.push_str(&serde_json::to_string(e).unwrap_or_default());
                out.push('\n');
            }
        }
        if let Some(d) = self.path.parent() {
            std::fs::create_dir_all(d)?;
        }
        // It holds the prompts, evidence and all: its owner's to read.
        crate::atomic::write_private(&self.path, out.as_bytes())
    }

    /// The occurrence number of this request in the run so far (0 for the first).
    fn occurrence(&self, k: &str) -> u32 {
        let Ok(mut seen) = self.seen.lock() else {
            return 0;
        };
        let n = seen.entry(k.to_string()).or_insert(0);
        *n += 1;
        *n - 1
    }

    /// The answer to the `n`th asking of a request; past the last recorded, the last.
    fn lookup(&self, k: &str, n: u32) -> Option<Exchange> {
        let all = self.exchanges.lock().ok()?;
        all.get(&(k.to_string(), n)).cloned().or_else(|| {
            all.range((k.to_string(), 0)..=(k.to_string(), u32::MAX))
                .next_back()
                .map(|(_, e)| e.clone())
        })
    }

    /// Why a request is not in the cassette: the nearest recorded request and how it differs.
    fn missing(&self, stage: &str, r: &Request) -> String {
        let ex = self
            .exchanges
            .lock()
            .map(|e| e.values().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let nearest = ex.iter().max_by_key(|e| {
            let likeness = similar::TextDiff::from_lines(&e.request.prompt, &r.prompt).ratio();
            (e.stage == stage, likeness.to_bits())
        });
        let mut msg = format!("stage `{stage}`: {MISS} `{}`", self.path.display());
        if !ex.is_empty() && !ex.iter().any(|e| e.stage == stage) {
            msg.push_str(&format!(
                "; it holds no answer of stage `{stage}` at all (was the stage answered from lexrun's cache while it was recorded, or added since?)"
            ));
        }
        match nearest {
            None => msg.push_str(" (it holds no exchanges)"),
            Some(e) => {
                msg.push_str(&format!(
                    "; the nearest recorded request (stage `{}`) differs",
                    e.stage
                ));
                let mut parts = Vec::new();
                if e.request.model != r.model {
                    parts.push(format!("model: `{}` → `{}`", e.request.model, r.model));
                }
                if e.request.sampling != r.sampling {
                    parts.push(format!(
                        "sampling: {:?} → {:?}",
                        e.request.sampling, r.sampling
                    ));
                }
                if e.request.schema != r.schema {
                    parts.push("the answer's schema".into());
                }
                if e.request.num_ctx != r.num_ctx {
                    parts.push(format!("context: {} → {}", e.request.num_ctx, r.num_ctx));
                }
                if !parts.is_empty() {
                    msg.push_str(&format!(" in {}", parts.join("; ")));
                }
                if e.request.prompt != r.prompt {
                    let diff = similar::TextDiff::from_lines(&e.request.prompt, &r.prompt);
                    let text = diff
                        .unified_diff()
                        .context_radius(2)
                        .header("recorded prompt", "this prompt")
                        .to_string();
                    let lines: Vec<&str> = text.lines().collect();
                    let shown = lines.len().min(60);
                    msg.push_str(" in the prompt:\n");
                    msg.push_str(&lines[..shown].join("\n"));
                    if lines.len() > shown {
                        msg.push_str(&format!("\n… {} more lines of diff", lines.len() - shown));
                    }
                }
            }
        }
        msg.push_str("\nrecord it against live servers with --replay-or-record (or --record)");
        msg
    }
}

impl Cassette {
    /// Records an exchange (the `n`th asking of its request) unless it is already there.
    fn keep(&self, ex: Exchange) {
        if let Ok(mut all) = self.exchanges.lock() {
            all.entry((ex.key.clone(), ex.n)).or_insert(ex);
        }
    }
}

/// A backend that plays from, and records to, a cassette.
pub struct Taped {
    pub inner: Box<dyn Backend>,
    pub cassette: Arc<Cassette>,
    pub pool: String,
    pub server: ServerKind,
}

impl Taped {
    fn exchange(
        &self,
        call: &Call,
        key: String,
        n: u32,
        request: Request,
        reply: &Reply,
    ) -> Exchange {
        Exchange {
            key,
            n,
            stage: call.stage.clone(),
            pool: self.pool.clone(),
            server: self.server.as_str().into(),
            request,
            response: Response {
                text: reply.text.clone(),
                tokens: reply.timings.predicted_n,
                finish: reply.finish.clone(),
                timings: reply.timings.clone(),
            },
        }
    }
}

fn request_of(call: &Call) -> Request {
    Request {
        model: call.model.clone(),
        prompt: call.prompt.clone(),
        schema: call.schema.clone(),
        sampling: call.sampling.clone(),
        num_ctx: call.num_ctx,
    }
}

impl Backend for Taped {
    fn chat<'a>(&'a self, call: &'a Call, on_token: OnToken<'a>) -> Answer<'a, Reply> {
        Box::pin(async move {
            let req = request_of(call);
            let k = key(&req);
            let n = self.cassette.occurrence(&k);
            if self.cassette.mode != Mode::Record {
                if let Some(ex) = self.cassette.lookup(&k, n) {
                    on_token(ex.response.tokens);
                    return Ok(Reply {
                        text: ex.response.text,
                        timings: ex.response.timings,
                        finish: ex.response.finish,
                    });
                }
                if self.cassette.mode == Mode::Replay {
                    return Err(CallError::NotRecorded(
                        self.cassette.missing(&call.stage, &req),
                    ));
                }
            }
            let reply = self.inner.chat(call, on_token).await?;
            if let Ok(mut all) = self.cassette.exchanges.lock() {
                all.insert((k.clone(), n), self.exchange(call, k, n, req, &reply));
            }
            Ok(reply)
        })
    }

    fn answered_elsewhere(&self, call: &Call, reply: &Reply) {
        if self.cassette.mode == Mode::Replay {
            return;
        }
        let req = request_of(call);
        let k = key(&req);
        let n = self.cassette.occurrence(&k);
        self.cassette.keep(self.exchange(call, k, n, req, reply));
    }

    fn health(&self) -> Answer<'_, Health> {
        Box::pin(async move {
            if self.cassette.mode == Mode::Replay {
                Ok(Health::Ready)
            } else {
                self.inner.health().await
            }
        })
    }

    fn identity<'a>(&'a self, model: &'a str) -> Answer<'a, Identity> {
        Box::pin(async move {
            let recorded = self
                .cassette
                .identities
                .lock()
                .ok()
                .and_then(|ids| ids.get(&self.pool).cloned());
            if self.cassette.mode == Mode::Replay {
                return Ok(recorded.unwrap_or_default());
            }
            let id = self.inner.identity(model).await?;
            if let Ok(mut ids) = self.cassette.identities.lock() {
                ids.insert(self.pool.clone(), id.clone());
            }
            Ok(id)
        })
    }

    fn count_tokens<'a>(&'a self, text: &'a str) -> Answer<'a, Option<u64>> {
        Box::pin(async move {
            if self.cassette.mode == Mode::Replay {
                Ok(None)
            } else {
                self.inner.count_tokens(text).await
            }
        })
    }
}
