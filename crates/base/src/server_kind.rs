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

    /// The words a workflow and the command line name them by, in the order of [`Self::ALL`]:
    /// the one list the checker, the language server and every hint read.
    pub const NAMES: [&'static str; 3] = ["llama_cpp", "ollama", "openai"];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_named_by_its_word_and_read_back_from_it() {
        for k in ServerKind::ALL {
            assert_eq!(ServerKind::parse(k.as_str()), Some(k));
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::String(k.as_str().into())
            );
        }
    }
}
