//! The cache key of a model call: everything that decides the answer. The same key gives the
//! same answer without calling the model; `lexrun why` reads the stored keys back to say what
//! changed between two runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bumped whenever what goes into a key changes, so old entries miss.
pub const CACHE_FORMAT: u32 = 1;

/// The key's components. Fields are in alphabetical order: the key is the blake3 of this
/// struct's JSON, which keeps the hash of keys written before the struct existed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheKey {
    pub format: u32,
    /// Each input the stage reads → the blake3 of its text (`None` for a source or a step
    /// without text).
    pub inputs: BTreeMap<String, Option<String>>,
    /// The model the server reports it serves.
    pub model_identity: String,
    /// The stage's plan node hash: its declaration, model and pool.
    pub node: String,
    /// The store hash of the rendered prompt.
    pub prompt: String,
    pub round: u32,
    pub sampling: BTreeMap<String, f64>,
    /// The JSON schema the answer must follow.
    pub schema: Option<Value>,
}

/// One difference between two keys of a stage, as `lexrun why` reports it.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    Node {
        before: String,
        now: String,
    },
    ModelIdentity {
        before: String,
        now: String,
    },
    Sampling {
        before: String,
        now: String,
    },
    Schema {
        before: String,
        now: String,
    },
    /// Store hashes of the two rendered prompts.
    Prompt {
        before: String,
        now: String,
    },
    Input {
        name: String,
        before: Option<String>,
        now: Option<String>,
    },
    Round {
        before: u32,
        now: u32,
    },
    Format {
        before: u32,
        now: u32,
    },
}

impl CacheKey {
    /// The key itself: blake3 of the components' canonical JSON.
    pub fn hash(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        blake3::hash(json.as_bytes()).to_hex().to_string()
    }

    /// What differs from `before`, in the order a reader should look at it.
    pub fn changes_since(&self, before: &CacheKey) -> Vec<Change> {
        let mut out = Vec::new();
        if before.node != self.node {
            out.push(Change::Node {
                before: before.node.clone(),
                now: self.node.clone(),
            });
        }
        if before.model_identity != self.model_identity {
            out.push(Change::ModelIdentity {
                before: before.model_identity.clone(),
                now: self.model_identity.clone(),
            });
        }
        if before.sampling != self.sampling {
            out.push(Change::Sampling {
                before: json(&before.sampling),
                now: json(&self.sampling),
            });
        }
        if before.schema != self.schema {
            out.push(Change::Schema {
                before: json(&before.schema),
                now: json(&self.schema),
            });
        }
        if before.prompt != self.prompt {
            out.push(Change::Prompt {
                before: before.prompt.clone(),
                now: self.prompt.clone(),
            });
        }
        if before.inputs != self.inputs {
            for (name, now) in &self.inputs {
                let was = before.inputs.get(name).cloned().flatten();
                if was != *now {
                    out.push(Change::Input {
                        name: name.clone(),
                        before: was,
                        now: now.clone(),
                    });
                }
            }
        }
        if before.round != self.round {
            out.push(Change::Round {
                before: before.round,
                now: self.round,
            });
        }
        if before.format != self.format {
            out.push(Change::Format {
                before: before.format,
                now: self.format,
            });
        }
        out
    }
}

/// Compact JSON, as `why` shows a changed value.
fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> CacheKey {
        CacheKey {
            format: CACHE_FORMAT,
            inputs: [
                ("client".to_string(), None),
                ("gate".to_string(), Some("ab".repeat(32))),
            ]
            .into(),
            model_identity: "tiny.gguf".into(),
            node: "cd".repeat(32),
            prompt: "ef".repeat(32),
            round: 1,
            sampling: [("temperature".to_string(), 0.0), ("seed".to_string(), 7.0)].into(),
            schema: Some(json!({"type": "object"})),
        }
    }

    #[test]
    fn the_hash_is_that_of_the_components_as_an_untyped_object() {
        let k = key();
        let untyped = json!({
            "format": k.format,
            "node": k.node,
            "model_identity": k.model_identity,
            "sampling": k.sampling,
            "schema": k.schema,
            "prompt": k.prompt,
            "inputs": k.inputs,
            "round": k.round,
        });
        assert_eq!(
            k.hash(),
            blake3::hash(untyped.to_string().as_bytes())
                .to_hex()
                .to_string()
        );
        let back: CacheKey = serde_json::from_value(untyped).unwrap();
        assert_eq!(back, k);
    }

    #[test]
    fn changes_name_each_component_that_differs() {
        let before = key();
        assert!(key().changes_since(&before).is_empty());
        let mut now = key();
        now.inputs.insert("gate".into(), Some("00".repeat(32)));
        now.sampling.insert("temperature".into(), 0.5);
        assert_eq!(
            now.changes_since(&before),
            vec![
                Change::Sampling {
                    before: r#"{"seed":7.0,"temperature":0.0}"#.into(),
                    now: r#"{"seed":7.0,"temperature":0.5}"#.into(),
                },
                Change::Input {
                    name: "gate".into(),
                    before: Some("ab".repeat(32)),
                    now: Some("00".repeat(32)),
                },
            ]
        );
    }
}
