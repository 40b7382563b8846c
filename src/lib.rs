//! lexrun compiles `.lex` legal workflows into checked execution plans and runs them.
//!
//! The modules follow the pipeline, and data flows one way: `syntax` (text → AST) →
//! `check` (names, types, stage graph, hardware) → `plan` (the checked workflow lowered into
//! the serialisable contract for the runtime) → `run` (and `serve`, for the servers a plan
//! names) → `cli`. `run` and `serve` read only the plan, never the checker or the syntax tree.
//!
//! Beneath them, leaves any layer may use: `diagnostic`, `suggest`, `calendar`, `gguf`,
//! `atomic` and `redact`; `sources` (every kind of source as text per page, Bates stamps);
//! `verify` (claims checked against evidence, needing only text), `exhibits` (PDF work on
//! CPU) and `document` (DOCX and PDF), which read pages through `sources`; `backend` (the
//! model servers) and `store` (content-addressed artifacts and the ledger).
//! `review` (the HTML page an attorney reads the verification on) sits above `verify` and
//! `exhibits`; `run` and `cli` use it.

pub mod atomic;
pub mod backend;
pub mod calendar;
pub mod check;
pub mod claim_kind;
pub mod cli;
pub mod compare;
pub mod confine;
pub mod diagnostic;
pub mod document;
pub mod editor;
pub mod escape;
pub mod exhibits;
pub mod gguf;
pub mod plan;
pub mod redact;
pub mod review;
pub mod run;
pub mod serve;
pub mod sources;
pub mod store;
pub mod suggest;
pub mod syntax;
mod testing;
pub mod verify;
