//! lexrun compiles `.lex` legal workflows into checked execution plans and runs them.
//!
//! This crate is the command line (`cli`) and `lexrun test` (`testing`); each layer beneath it
//! is a crate of its own under `crates/`, and Cargo keeps them in order: a lower crate cannot
//! name a higher one. They are re-exported here under the names the command line uses.

pub use lexrun_backend as backend;
pub use lexrun_base::{
    atomic, calendar, claim_kind, compare, confine, credentials, decision, diagnostic, escape,
    fingerprint, gguf, server_kind, suggest,
};
pub use lexrun_check as check;
pub use lexrun_document as document;
pub use lexrun_editor as editor;
pub use lexrun_exhibits as exhibits;
pub use lexrun_plan as plan;
pub use lexrun_review as review;
pub use lexrun_run as run;
pub use lexrun_serve as serve;
pub use lexrun_sources as sources;
pub use lexrun_store as store;
pub use lexrun_syntax as syntax;
pub use lexrun_verify as verify;

pub mod cli;
mod testing;
