//! What every layer of lexrun may use and that knows nothing of workflows, models or runs:
//! diagnostics and their codes, the claim-kind table, the model-server kinds, confinement of
//! paths, atomic writes, escaping, calendar dates, text fingerprints and reviewers' decisions
//! as data.

pub mod atomic;
pub mod calendar;
pub mod claim_kind;
pub mod compare;
pub mod confine;
pub mod credentials;
pub mod decision;
pub mod diagnostic;
pub mod escape;
pub mod fingerprint;
pub mod gguf;
pub mod server_kind;
pub mod suggest;

/// Milliseconds since the epoch: the time the ledger and claim taint keep.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
