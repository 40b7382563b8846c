//! The layers are crates (`crates/`), so Cargo already refuses a cycle. What it does not refuse
//! is a new arrow that runs up or across: a verifier that starts to depend on the ledger, a
//! plan that reaches back into the checker. The order and the rules below are the design; a
//! `Cargo.toml` that breaks them fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

/// The crates from the bottom up: each may depend only on crates before it.
const ORDER: &[&str] = &[
    "base", "syntax", "plan", "check", "editor", "sources", "document", "backend", "store",
    "verify", "exhibits", "review", "serve", "run",
];

/// Crates that must never be reached from a crate, directly or through another: what keeps
/// each layer to what it needs.
const NEVER: &[(&str, &[&str], &str)] = &[
    (
        "plan",
        &["syntax", "check", "backend"],
        "the plan is the contract between compile time and run time",
    ),
    (
        "run",
        &["syntax", "check", "editor"],
        "the runtime reads only the plan",
    ),
    (
        "serve",
        &["syntax", "check", "editor"],
        "serving reads only the plan",
    ),
    (
        "verify",
        &["store", "backend", "plan", "run"],
        "the verifier needs only text: taint reads the ledger through a trait",
    ),
    (
        "sources",
        &["verify", "store", "backend"],
        "sources are text per page",
    ),
];

/// The outside crates a layer must not pull in, even through another crate.
const NEVER_EXTERNAL: &[(&str, &[&str])] = &[
    ("verify", &["rusqlite", "postgres", "reqwest", "tokio"]),
    (
        "syntax",
        &["rusqlite", "postgres", "reqwest", "tokio", "lopdf"],
    ),
    ("plan", &["rusqlite", "postgres", "reqwest", "tokio"]),
];

/// Each crate's dependencies as its `Cargo.toml` names them: (lexrun crates, other crates).
fn manifests() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir("crates").unwrap() {
        let dir = e.unwrap().path();
        let Ok(text) = fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let (mut ours, mut theirs) = (BTreeSet::new(), BTreeSet::new());
        let mut section = String::new();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                section = line.to_string();
                continue;
            }
            if section != "[dependencies]" || line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((dep, _)) = line.split_once('=') else {
                continue;
            };
            let dep = dep.trim();
            match dep.strip_prefix("lexrun-") {
                Some(inner) => ours.insert(inner.to_string()),
                None => theirs.insert(dep.to_string()),
            };
        }
        out.insert(name, (ours, theirs));
    }
    out
}

/// Every lexrun crate `name` reaches, itself left out.
fn reach(
    all: &BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>,
    name: &str,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![name.to_string()];
    while let Some(n) = stack.pop() {
        for d in all.get(&n).map(|m| m.0.clone()).unwrap_or_default() {
            if seen.insert(d.clone()) {
                stack.push(d);
            }
        }
    }
    seen
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let all = manifests();
    let mut wrong = Vec::new();
    for (name, (ours, _)) in &all {
        let Some(at) = ORDER.iter().position(|c| c == name) else {
            wrong.push(format!(
                "crates/{name} has no place in the layer order of tests/layers.rs"
            ));
            continue;
        };
        for d in ours {
            match ORDER.iter().position(|c| c == d) {
                Some(i) if i < at => {}
                _ => wrong.push(format!(
                    "lexrun-{name} depends on lexrun-{d}, which is not below it"
                )),
            }
        }
    }
    for c in ORDER {
        if !all.contains_key(*c) {
            wrong.push(format!(
                "the layer order names `{c}`, which crates/ does not hold"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_layer_reaches_what_it_must_not() {
    let all = manifests();
    let mut wrong = Vec::new();
    for (name, never, why) in NEVER {
        let reached = reach(&all, name);
        for n in *never {
            if reached.contains(*n) {
                wrong.push(format!("lexrun-{name} reaches lexrun-{n}: {why}"));
            }
        }
    }
    for (name, never) in NEVER_EXTERNAL {
        let mut crates = reach(&all, name);
        crates.insert(name.to_string());
        for c in &crates {
            for n in *never {
                if all[c].1.contains(*n) {
                    wrong.push(format!("lexrun-{name} pulls in `{n}` through lexrun-{c}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_binary_is_the_only_crate_above_the_runtime() {
    // The command line sits on top: no crate under crates/ may name `lexrun` itself.
    for (name, (_, theirs)) in manifests() {
        assert!(
            !theirs.contains("lexrun"),
            "lexrun-{name} depends on the binary crate"
        );
    }
    let root = fs::read_to_string("Cargo.toml").unwrap();
    for c in ORDER {
        assert!(
            root.contains(&format!("lexrun-{c} = {{ path = \"crates/{c}\" }}")),
            "the binary crate does not name lexrun-{c}"
        );
    }
}
