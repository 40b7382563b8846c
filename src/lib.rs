//! lexrun compiles `.lex` legal workflows into checked execution plans.
//!
//! The modules follow the pipeline, and data flows one way: `syntax` (text → AST) →
//! `check` (names, types, stage graph, hardware) → `plan` (the serialisable contract for the
//! runtime) → `run` → `cli`. `diagnostic`, `suggest`, `calendar` and `gguf` are leaves every layer may use;
//! `verify` (claims checked against evidence) needs only text and `exhibits` (PDF work on
//! CPU) only files; both stand beside them. `review` (the HTML page an attorney reads the
//! verification on) sits above `verify` and `exhibits`, and `run` and `cli` use it.

pub mod calendar;
pub mod check;
pub mod cli;
pub mod diagnostic;
pub mod document;
pub mod exhibits;
pub mod gguf;
pub mod plan;
pub mod review;
pub mod run;
pub mod serve;
pub mod store;
pub mod suggest;
pub mod syntax;
pub mod testing;
pub mod verify;
