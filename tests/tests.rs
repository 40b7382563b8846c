//! lexrun's integration tests, one binary: a module per feature (ripgrep's layout), so a change
//! links one test program, not one per file. Helpers shared by them and the benchmarks are in
//! `support/`.

mod support;

mod bad_answers;
mod blocked_draft;
mod citations;
mod cli;
mod concurrency;
mod confinement;
mod contract;
mod decisions;
mod diagnostics;
mod documents;
mod encoding;
mod exhibits;
mod filings;
mod fmt;
mod gguf;
mod hardware;
mod intake;
mod integrity;
mod layers;
mod ledger_postgres;
mod limits;
mod live;
mod live_prompts;
mod lsp;
mod mcp;
mod pinpoints;
mod plan;
mod production;
mod production_vector;
mod propositions;
mod replay;
mod review;
mod robustness;
mod run;
mod runs;
mod runtime;
mod secrets;
mod servers;
mod shell;
mod store;
mod taint;
mod verify;
