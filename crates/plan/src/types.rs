//! What a plan is made of: its header, and each item of the workflow as a node that carries
//! its hash.

use serde::Serialize;

use super::workflow::{Model, Output, Pool, Sources, Step, Verify};

/// Bumped whenever the meaning of a plan's fields changes.
pub const FORMAT: u32 = 1;

#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub format: u32,
    pub workflow: Header,
    /// Hash of the whole plan.
    pub hash: String,
    pub pools: Vec<Node<Pool>>,
    pub models: Vec<Node<Model>>,
    pub sources: Vec<Node<Sources>>,
    /// Stages and tools in the order they run: every step after the steps it waits for,
    /// ties broken by the order of the file.
    pub steps: Vec<Node<Step>>,
    pub verify: Vec<Node<Verify>>,
    pub outputs: Vec<Node<Output>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Header {
    pub name: String,
    pub description: String,
    pub matter: Option<String>,
    /// The shared ledger the workflow names (`LEXRUN_LEDGER` takes precedence over it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Node<T> {
    #[serde(flatten)]
    pub item: T,
    pub hash: String,
}

impl<T> std::ops::Deref for Node<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.item
    }
}
