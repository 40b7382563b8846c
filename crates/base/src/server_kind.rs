//! The families of model server lexrun speaks to, and the oldest llama.cpp build a pool accepts:
//! what a workflow names, and what the backends and the plan both read.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    LlamaCpp,
    Ollama,
    Openai,
}

impl ServerKind {
    pub const ALL: [ServerKind; 3] = [ServerKind::LlamaCpp, ServerKind::Ollama, ServerKind::Openai];

    pub fn as_str(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "llama_cpp",
            ServerKind::Ollama => "ollama",
            ServerKind::Openai => "openai",
        }
    }

    /// The kind a workflow or the command line names: `llama_cpp`, `ollama` or `openai`.
    pub fn parse(s: &str) -> Option<ServerKind> {
        ServerKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The server family's name for people.
    pub fn label(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "llama.cpp",
            ServerKind::Ollama => "Ollama",
            ServerKind::Openai => "an OpenAI-compatible server",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct MinBuild {
    pub build: u64,
    /// Why, as the workflow says it.
    pub because: Option<String>,
}
