//! The execution plan: the contract between compile time and run time.
//!
//! A plan is a checked workflow lowered into run order, with a blake3 hash on every node and
//! on the whole. Hashes chain: a model's hash covers its pool, a stage's covers its model, so a
//! change anywhere below a stage changes the stage's hash. The same file always gives the same
//! plan, byte for byte.

use lexrun_base::{claim_kind, compare, credentials, server_kind};

mod condition;
mod dot;
mod graph;
pub mod production;
mod text;
mod types;
pub mod workflow;

pub use graph::Unit;
pub use types::{Header, Node, Plan, FORMAT};

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use serde::Serialize;

use workflow::{Model, Output, Pool, Sources, Step, StepKind, Verify, Workflow};

/// Hashes a node's canonical JSON together with the hashes it depends on.
fn hash_node<T: Serialize>(item: &T, deps: &[&str]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"lexrun-plan-node\0");
    h.update(&FORMAT.to_le_bytes());
    // Streamed straight into the hasher. Serialising plain data cannot fail.
    let _ = serde_json::to_writer(&mut h, item);
    for d in deps {
        h.update(b"\0");
        h.update(d.as_bytes());
    }
    h.finalize().to_hex().to_string()
}

fn node<T: Serialize>(item: T, deps: &[&str]) -> Node<T> {
    let hash = hash_node(&item, deps);
    Node { item, hash }
}

/// Lowers a checked workflow into its plan.
pub fn lower(w: &Workflow) -> Plan {
    let pools: Vec<Node<Pool>> = w.pools.iter().map(|p| node(p.clone(), &[])).collect();
    let pool_hash: BTreeMap<&str, &str> = pools
        .iter()
        .map(|p| (p.name.as_str(), p.hash.as_str()))
        .collect();
    let models: Vec<Node<Model>> = w
        .models
        .iter()
        .map(|m| {
            let dep = pool_hash.get(m.pool.as_str()).copied().unwrap_or("");
            node(m.clone(), &[dep])
        })
        .collect();
    let model_hash: BTreeMap<&str, &str> = models
        .iter()
        .map(|m| (m.name.as_str(), m.hash.as_str()))
        .collect();
    let sources: Vec<Node<Sources>> = w.sources.iter().map(|s| node(s.clone(), &[])).collect();
    let steps: Vec<Node<Step>> = order(&w.steps)
        .into_iter()
        .map(|s| {
            let dep = match &s.kind {
                StepKind::Model(m) => model_hash.get(m.model.as_str()).copied().unwrap_or(""),
                StepKind::Tool(_) => "",
            };
            node(s.clone(), &[dep])
        })
        .collect();
    let verify: Vec<Node<Verify>> = w.verify.iter().map(|v| node(v.clone(), &[])).collect();
    let outputs: Vec<Node<Output>> = w.outputs.iter().map(|o| node(o.clone(), &[])).collect();
    let header = Header {
        name: w.name.clone(),
        description: w.description.clone(),
        matter: w.matter.clone(),
        ledger: w.ledger.clone(),
    };
    let all: Vec<&str> = pools
        .iter()
        .map(|n| n.hash.as_str())
        .chain(models.iter().map(|n| n.hash.as_str()))
        .chain(sources.iter().map(|n| n.hash.as_str()))
        .chain(steps.iter().map(|n| n.hash.as_str()))
        .chain(verify.iter().map(|n| n.hash.as_str()))
        .chain(outputs.iter().map(|n| n.hash.as_str()))
        .collect();
    let hash = hash_node(&header, &all);
    Plan {
        format: FORMAT,
        workflow: header,
        hash,
        pools,
        models,
        sources,
        steps,
        verify,
        outputs,
    }
}

/// Kahn's algorithm, taking the earliest-declared ready step first.
fn order(steps: &[Step]) -> Vec<&Step> {
    let index: BTreeMap<&str, usize> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let mut waiting: Vec<usize> = vec![0; steps.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); steps.len()];
    for (i, s) in steps.iter().enumerate() {
        for a in &s.after {
            if let Some(&j) = index.get(a.as_str()) {
                waiting[i] += 1;
                dependents[j].push(i);
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..steps.len())
        .filter(|&i| waiting[i] == 0)
        .map(Reverse)
        .collect();
    let mut out = Vec::with_capacity(steps.len());
    while let Some(Reverse(i)) = ready.pop() {
        out.push(&steps[i]);
        for &d in &dependents[i] {
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.push(Reverse(d));
            }
        }
    }
    out
}

impl Plan {
    /// The plan as a paralegal reads it, like `terraform plan`.
    pub fn to_text(&self) -> String {
        text::render(self)
    }

    /// Graphviz DOT of sources, steps and what feeds what.
    pub fn to_dot(&self) -> String {
        dot::render(self)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
