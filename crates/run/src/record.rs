//! What a run records: per step, per verification, per output and per matter, written
//! as `run.json`; and what a step leaves for the steps after it.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::Serialize;

use crate::backend::Timings;

/// Why a `run.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is not a run record: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// How a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Done,
    /// Done, and its `stop when` held: everything downstream is skipped.
    Stopped,
    Skipped,
    Failed,
    /// Verification found unsupported content under a `block` policy.
    Blocked,
    Cancelled,
    /// Answered, but not finished: cut (the model repeating itself, the token limit) or
    /// holding blanks to fill (`[Date]`, `____`). It feeds later steps; what is made of it is
    /// written only as a marked draft, and the run exits [`INCOMPLETE_EXIT`].
    Incomplete,
}

/// The exit code of a run in which every step finished but some answer is incomplete, so
/// that its outputs were written only as marked drafts.
pub const INCOMPLETE_EXIT: u8 = 4;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StepRecord {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model as the server identified it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// Where the identity came from when the server was not asked (the ledger, offline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity_note: Option<String>,
    pub node_hash: String,
    pub round: u32,
    pub status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Prompt tokens counted before sending (by the server's tokenizer when it has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub waited_for_load_ms: u64,
    /// Milliseconds from the start of the run.
    pub started_ms: u64,
    pub duration_ms: u64,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub summary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Answered from lexrun's cache: no model was called.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VerifyRecord {
    pub stage: String,
    pub round: u32,
    pub claims: usize,
    pub unsupported: usize,
    pub decision: crate::claim_kind::Decision,
    pub report: String,
    /// What the decision does not say: a pass of a long text with almost nothing to check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OutputRecord {
    pub path: String,
    pub from: String,
    /// `written`, or why not.
    pub status: String,
    /// Not written though its stage ran (a write error, a missing tool): the run failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatterRecord {
    pub name: String,
    pub dir: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    pub steps: Vec<StepRecord>,
    pub verifications: Vec<VerifyRecord>,
    pub outputs: Vec<OutputRecord>,
}

impl MatterRecord {
    /// The steps whose latest answer is incomplete (a later round that finished its answer
    /// makes its step complete again), in plan order.
    pub fn incomplete_steps(&self) -> Vec<&StepRecord> {
        let mut latest: Vec<&StepRecord> = Vec::new();
        for s in &self.steps {
            match latest.iter_mut().find(|l| l.name == s.name) {
                Some(l) if s.round >= l.round => *l = s,
                Some(_) => {}
                None => latest.push(s),
            }
        }
        latest.retain(|s| s.status == Some(Status::Incomplete));
        latest
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub workflow: String,
    pub plan_hash: String,
    pub run_id: String,
    pub duration_ms: u64,
    pub cancelled: bool,
    pub matters: Vec<MatterRecord>,
}

impl RunRecord {
    /// Reads a `run.json`.
    pub fn read(path: &Path) -> Result<RunRecord, RecordError> {
        let bytes = std::fs::read(path).map_err(|source| RecordError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_slice(&bytes).map_err(|source| RecordError::Parse {
            path: path.to_path_buf(),
            source,
        })
    }

    /// 0: every output produced; 1: a step failed or was blocked; 4 ([`INCOMPLETE_EXIT`]):
    /// an answer is incomplete, and what was made of it was written only as a marked draft;
    /// 3: a gate stopped the workflow by design; 130: cancelled.
    pub fn exit_code(&self) -> u8 {
        if self.cancelled {
            return 130;
        }
        let all = || self.matters.iter().flat_map(|m| &m.steps);
        let missing = self
            .matters
            .iter()
            .flat_map(|m| &m.outputs)
            .any(|o| o.missing);
        if missing || all().any(|s| matches!(s.status, Some(Status::Failed | Status::Blocked))) {
            1
        } else if self
            .matters
            .iter()
            .any(|m| !m.incomplete_steps().is_empty())
        {
            INCOMPLETE_EXIT
        } else if self.matters.iter().any(|m| m.stopped_by.is_some()) {
            3
        } else {
            0
        }
    }
}
