//! lexrun compiles `.lex` legal workflows into checked execution plans.
//!
//! The modules follow the pipeline, and data flows one way: `syntax` (text → AST) →
//! `check` (names, types, stage graph, hardware) → `plan` (the serialisable contract for the
//! runtime) → `run` → `cli`. `diagnostic`, `suggest`, `calendar` and `gguf` are leaves every layer may use;
//! `verify` (claims checked against evidence) needs only text and `exhibits` (PDF work on
//! CPU) only files; both stand beside them.

pub mod calendar;
pub mod check;
pub mod cli;
pub mod diagnostic;
pub mod document;
pub mod editor;
pub mod exhibits;
pub mod gguf;
pub mod plan;
pub mod run;
pub mod serve;
pub mod store;
pub mod suggest;
pub mod syntax;
pub mod testing;
pub mod verify;
