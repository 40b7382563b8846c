//! What the tasks of a run share: the run-wide state, each pool's server, each matter in
//! flight, and what a step leaves for later steps.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::{OnceCell, Semaphore};

use crate::backend::{self, Backend, Identity, Limits};
use crate::events::Events;
use crate::failure;
use crate::plan::workflow::{Bates, Pool};
use crate::plan::Plan;
use crate::prompt::EvidenceFile;

/// What one step left for later steps.
#[derive(Default, Clone, Debug)]
pub(super) struct Produced {
    pub(super) files: Vec<PathBuf>,
    /// Text per page (file, pages), when the step extracted it.
    pub(super) pages: Vec<(String, Vec<String>)>,
    /// The file a declared `output` of each extension copies.
    pub(super) primary: BTreeMap<String, PathBuf>,
    /// A model stage's text.
    pub(super) text: Option<String>,
    /// A model stage's parsed answer, when it declares `returns`.
    pub(super) answer: Option<Value>,
}

/// One matter in flight.
pub(super) struct Matter {
    pub(super) name: String,
    pub(super) dir: PathBuf,
    pub(super) run_dir: PathBuf,
    pub(super) out_dir: PathBuf,
    /// Source name → its files with text per page (read once, shared by every stage).
    pub(super) evidence: BTreeMap<String, Vec<EvidenceFile>>,
    /// Fingerprints of all the matter's evidence: what an output quotes is not its own.
    pub(super) evidence_fps: HashSet<u64>,
    /// Parts of its files that could not be read (shown as the evidence is), with why.
    pub(super) unreadable_parts: Vec<(String, String)>,
    /// Its own record (`matter.toml` or `matter.json`): the fields templates read as
    /// `{{matter.FIELD}}`.
    pub(super) record: serde_json::Map<String, serde_json::Value>,
}

/// What every task shares.
pub(super) struct Shared {
    pub(super) plan: Plan,
    pub(super) limits: Limits,
    pub(super) events: Arc<Events>,
    pub(super) started: Instant,
    pub(super) pools: BTreeMap<String, Arc<PoolRt>>,
    pub(super) bates_of: BTreeMap<String, Bates>,
    pub(super) prefixes: Vec<String>,
    pub(super) multi: bool,
    pub(super) run_id: String,
    pub(super) store: Option<Arc<crate::store::Store>>,
    pub(super) cache: bool,
    pub(super) refresh: Vec<String>,
    pub(super) offline: bool,
    pub(super) workflow_file: String,
    /// The workflow library: where a `verify-draft` tool may read its draft from, beside
    /// its matter.
    pub(super) library: crate::confine::Library,
}

pub(super) struct PoolRt {
    pub(super) pool: Pool,
    pub(super) endpoint: String,
    pub(super) backend: Box<dyn Backend>,
    pub(super) slots: Arc<Semaphore>,
    /// Identity per model, asked once.
    pub(super) identity: BTreeMap<String, OnceCell<Result<Identity, failure::CallFailure>>>,
    /// Whether the server accepts connections at all, asked once.
    pub(super) reachable: OnceCell<bool>,
}

impl PoolRt {
    /// False when nothing listens at the pool's endpoint (asked once, without retries), so a
    /// fully cached stage need not wait out the retries of a server that is down.
    pub(super) async fn reachable(&self) -> bool {
        *self
            .reachable
            .get_or_init(|| async {
                !matches!(
                    self.backend.health().await,
                    Err(backend::CallError::Refused(_))
                )
            })
            .await
    }
}
