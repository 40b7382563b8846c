//! Why one call of a model stage failed: each step of the call has its own failure, which
//! keeps its cause and becomes the step's `why` in `run.json`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::CallError;

/// Why one call of a model stage failed; recorded as the step's `why`.
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum CallFailure {
    #[error("model `{0}` is not in the plan")]
    NoModel(String),
    #[error("pool `{0}` is not in the plan")]
    NoPool(String),
    #[error("cannot create `{}`: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("cannot render the prompt ({origin}): {source}")]
    Render {
        origin: String,
        #[source]
        source: Arc<handlebars::RenderError>,
    },
    /// The server failed; says which pool and where, and what to try.
    #[error("{server} server for pool `{pool}` at {endpoint}: {source}{}", hint(.source))]
    Server {
        server: &'static str,
        pool: String,
        endpoint: String,
        #[source]
        source: CallError,
    },
    /// The server speaks another protocol than the pool's.
    #[error("{} server for pool `{pool}` at {endpoint}: {why}", declared.label())]
    Protocol {
        declared: crate::plan::workflow::ServerKind,
        pool: String,
        endpoint: String,
        why: String,
    },
    /// The server's llama.cpp build is older than the pool requires.
    #[error("{0}")]
    OldBuild(String),
    /// Offline, a stage whose answer is not in the cache.
    #[error("offline: {0}; run without --offline so the model can be asked")]
    Offline(String),
    /// A replayed cassette does not hold this request.
    #[error("{0}")]
    NotRecorded(String),
    #[error("the prompt is {tokens} tokens ({counted}){} but model `{model}` has a context of {ctx} tokens{}; read fewer sources in this stage, or raise the model's `ctx`",
        if *reserve > 0 { format!(" + {reserve} for the answer") } else { String::new() },
        match slot_ctx { Some(n) => format!(" (the server gives each slot {n})"), None => String::new() })]
    TooLong {
        tokens: u64,
        counted: &'static str,
        reserve: u64,
        model: String,
        ctx: u64,
        /// The server's context per slot, when it is less than the model's.
        slot_ctx: Option<u64>,
    },
    /// The answer could not be read, twice: kept in `file`.
    #[error("the answer {rejected_as} after a corrective retry: {why} (the answer is in {})", file.display())]
    Rejected {
        rejected_as: &'static str,
        why: String,
        file: PathBuf,
    },
    /// The template uses a field of the matter's record that the matter does not have.
    #[error("the prompt uses `{{{{matter.{field}}}}}`, but the matter's record has no `{field}`: add `{field} = \"…\"` to `{}` (or the field to its `matter.json`)", dir.join("matter.toml").display())]
    MatterField { field: String, dir: PathBuf },
    /// The model answered with no text, twice.
    #[error("the model answered with no text twice ({tokens} tokens, finish `{finish}`), so the stage has no answer; check the model's chat template and the stage's prompt (does it place the evidence and ask for the text?)")]
    Empty { tokens: u64, finish: String },
    /// Not sent, because another call of the same step had failed.
    #[error("not sent: another call of this step failed first")]
    NotSent,
    /// The ledger was lost: no model is asked anything more (the run's error says how to
    /// bring the ledger back).
    #[error("{}", if *.0 { "the model answered, but the ledger was lost before the answer could be entered: the answer is kept in the store and the next run takes it from the cache" } else { "not sent: the ledger was lost" })]
    LedgerLost(bool),
}

pub(super) fn write_failure(path: &Path) -> impl FnOnce(std::io::Error) -> CallFailure + '_ {
    move |e| CallFailure::Write {
        path: path.to_path_buf(),
        source: Arc::new(e),
    }
}

fn hint(e: &CallError) -> &'static str {
    match e {
        CallError::Refused(_) => {
            "; is the server running? Start it, or point the pool elsewhere with --endpoint POOL=URL"
        }
        CallError::Hang(_) => "; the server stopped sending; check its log",
        _ => "",
    }
}
