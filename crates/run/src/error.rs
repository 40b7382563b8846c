//! The errors that stop a run before it starts.

use std::path::Path;

use crate::backend::{self, cassette};
use crate::intake;

/// Errors that stop a run before it starts: exit 2.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the matter folder `{0}` does not exist; give one with --matter DIR")]
    NoMatter(String),
    #[error("sources `{0}` match no files in `{1}`")]
    NoFiles(String, String),
    #[error("cannot write `{0}`: {1}")]
    Write(String, #[source] std::io::Error),
    #[error("cannot read the evidence: {0}")]
    Evidence(crate::sources::Unreadables),
    #[error("--endpoint {0}: the workflow has no pool `{0}`; its pools: {1}")]
    UnknownPool(String, String),
    #[error("pool `{0}`: {1}")]
    Endpoint(String, #[source] backend::ConnectError),
    #[error("{0}")]
    Cassette(#[from] cassette::CassetteError),
    #[error("cannot write the cassette `{0}`: {1}")]
    CassetteWrite(String, #[source] std::io::Error),
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
    #[error("{0}")]
    Confined(#[source] crate::confine::ConfineError),
    /// A matter's record (`matter.toml`, `matter.json`) that does not parse.
    #[error("the matter's record `{path}` cannot be read: line {line}: {why}; fix that line (`matter.toml` holds lines such as `client = \"Bright Dental LLC\"`, `matter.json` one JSON object)")]
    MatterRecord {
        path: String,
        line: usize,
        why: String,
    },
    /// Sources that are lexrun's own outputs: the run does not start (exit 1).
    #[error("{}", intake::describe(.0))]
    Refused(Vec<intake::Verdict>),
}

/// A file that could not be written, as the error that stops the run.
pub(super) fn write_error(p: &Path, e: std::io::Error) -> RunError {
    RunError::Write(p.display().to_string(), e)
}
