//! How each layer's errors end a command: the message a person reads and the exit code, in
//! one place. Every error keeps its cause (`source`); the message already says it, so only
//! the top is printed.

use crate::run::RunError;
use crate::serve::ServeError;

/// An error a command can end with.
pub(super) trait Failure: std::error::Error {
    /// `exit::USAGE` (2) when lexrun could not do what was asked; `exit::ERRORS` (1) when it
    /// did, and found something wrong.
    fn exit_code(&self) -> u8;
}

impl Failure for RunError {
    fn exit_code(&self) -> u8 {
        match self {
            // The run refused the client's evidence: a finding, not a usage error.
            RunError::Refused(_) => exit::ERRORS,
            _ => exit::USAGE,
        }
    }
}

impl Failure for ServeError {
    fn exit_code(&self) -> u8 {
        match self {
            ServeError::Failed(_) => exit::ERRORS,
            ServeError::Input(_) | ServeError::Connect(_) => exit::USAGE,
        }
    }
}

impl Failure for crate::store::StoreError {
    fn exit_code(&self) -> u8 {
        exit::USAGE
    }
}

impl Failure for crate::verify::evidence::LoadError {
    fn exit_code(&self) -> u8 {
        exit::USAGE
    }
}

impl Failure for super::draft::DraftError {
    fn exit_code(&self) -> u8 {
        exit::USAGE
    }
}

/// Prints `e` and gives its exit code.
pub(super) fn fail(e: &dyn Failure) -> u8 {
    eprintln!("error: {e}");
    tracing::debug!(error = ?e, "command failed");
    e.exit_code()
}

use super::output::exit;
