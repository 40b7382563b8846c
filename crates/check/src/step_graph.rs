//! The order steps run in: which waits for which, cycles in `after`, and each step's
//! ancestors (what a `when` may test).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::context::{Cx, Decl, Entry};
use super::step_info::Info;
use crate::diagnostic::{Code, Diagnostic, FileId, Span};

/// Which steps run before which: a bitset of ancestors per step, built once in run order.
pub(crate) struct Ancestors {
    pub(crate) index: HashMap<String, usize>,
    pub(crate) bits: Vec<Vec<u64>>,
}

/// The ancestors of one step.
pub(crate) struct Anc<'a> {
    pub(crate) index: &'a HashMap<String, usize>,
    pub(crate) bits: Option<&'a [u64]>,
}

impl Anc<'_> {
    pub(crate) fn contains(&self, name: &str) -> bool {
        match (self.bits, self.index.get(name)) {
            (Some(bits), Some(&i)) => bits[i / 64] & (1 << (i % 64)) != 0,
            _ => false,
        }
    }
}

impl Ancestors {
    pub(crate) fn new(
        order: &[String],
        edges: &BTreeMap<String, Vec<(String, Span, FileId)>>,
    ) -> Self {
        let index: HashMap<String, usize> = order
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let words = order.len().div_ceil(64);
        let mut bits = vec![vec![0u64; words]; order.len()];
        for (i, name) in order.iter().enumerate() {
            for (dep, ..) in edges.get(name).into_iter().flatten() {
                let Some(&d) = index.get(dep) else { continue };
                bits[i][d / 64] |= 1 << (d % 64);
                // In run order a dependency's own ancestors are complete (cycles aside).
                if d < i {
                    let (done, rest) = bits.split_at_mut(i);
                    for (w, x) in rest[0].iter_mut().zip(&done[d]) {
                        *w |= x;
                    }
                }
            }
        }
        Ancestors { index, bits }
    }

    pub(crate) fn of(&self, name: &str) -> Anc<'_> {
        Anc {
            index: &self.index,
            bits: self.index.get(name).map(|&i| self.bits[i].as_slice()),
        }
    }

    pub(crate) fn none(&self) -> Anc<'_> {
        Anc {
            index: &self.index,
            bits: None,
        }
    }
}

pub(crate) fn span_of(e: &Entry) -> Span {
    match e.decl {
        Decl::Stage(s) => s.span,
        Decl::Tool(t) => t.span,
        _ => Span::default(),
    }
}

/// Steps in an order where each comes after what it waits for (cycles broken arbitrarily).
pub(crate) fn topo_names(
    infos: &BTreeMap<String, Info>,
    edges: &BTreeMap<String, Vec<(String, Span, FileId)>>,
) -> Vec<String> {
    let mut done = BTreeSet::new();
    let mut order = Vec::new();
    pub(crate) fn visit(
        n: &str,
        edges: &BTreeMap<String, Vec<(String, Span, FileId)>>,
        done: &mut BTreeSet<String>,
        order: &mut Vec<String>,
        onstack: &mut BTreeSet<String>,
    ) {
        if done.contains(n) || !onstack.insert(n.to_string()) {
            return;
        }
        let mut stack = vec![(n.to_string(), 0usize)];
        while let Some((cur, i)) = stack.pop() {
            let deps = edges.get(&cur).map(Vec::as_slice).unwrap_or(&[]);
            if i < deps.len() {
                stack.push((cur.clone(), i + 1));
                let d = &deps[i].0;
                if !done.contains(d) && onstack.insert(d.clone()) {
                    stack.push((d.clone(), 0));
                }
            } else if done.insert(cur.clone()) {
                order.push(cur);
            }
        }
    }
    let mut onstack = BTreeSet::new();
    for n in infos.keys() {
        visit(n, edges, &mut done, &mut order, &mut onstack);
    }
    // An edge may name what is not a step (a source, or a name already reported as unknown).
    order.retain(|n| infos.contains_key(n));
    order
}

/// Reports each cycle in the `after` graph once; returns the steps on cycles.
pub(crate) fn cycles(
    cx: &mut Cx,
    infos: &BTreeMap<String, Info>,
    edges: &BTreeMap<String, Vec<(String, Span, FileId)>>,
) -> BTreeSet<String> {
    // Iterative DFS with colours; a grey target closes a cycle.
    let mut colour: BTreeMap<&str, u8> = BTreeMap::new();
    let mut on_cycle = BTreeSet::new();
    for start in infos.keys() {
        if colour.get(start.as_str()).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut path: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
        colour.insert(start.as_str(), 1);
        while let Some(&(node, i)) = path.last() {
            let deps = edges.get(node).map(Vec::as_slice).unwrap_or(&[]);
            if i >= deps.len() {
                colour.insert(node, 2);
                path.pop();
                continue;
            }
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            let (dep, span, file) = &deps[i];
            match colour.get(dep.as_str()).copied().unwrap_or(0) {
                0 => {
                    colour.insert(dep.as_str(), 1);
                    path.push((dep.as_str(), 0));
                }
                1 => {
                    let from = path
                        .iter()
                        .position(|(n, _)| *n == dep.as_str())
                        .unwrap_or(0);
                    let mut ring: Vec<&str> = path[from..].iter().map(|(n, _)| *n).collect();
                    for n in &ring {
                        on_cycle.insert(n.to_string());
                    }
                    ring.reverse();
                    ring.push(ring[0]);
                    cx.error(
                        Diagnostic::new(
                            Code::StageCycle,
                            "these stages wait for each other in a circle",
                        )
                        .in_file(*file)
                        .label(*span, format!("`{node}` waits for `{dep}` here"))
                        .help(format!(
                            "{} — nothing in the circle can start; remove one `after`",
                            ring.join(" runs before ")
                        )),
                    );
                }
                _ => {}
            }
        }
    }
    on_cycle
}
