//! Names, imports, types, the stage graph and the hardware: everything that makes a parsed
//! file a workflow lexrun can run, or a list of diagnostics saying why not.
//!
//! All checks run even after errors, so one pass reports every problem in a file. This file
//! runs the checks in order; what they share is in `context.rs`.

use lexrun_base::{calendar, claim_kind, confine, credentials, diagnostic, gguf, suggest};
use lexrun_plan as plan;
use lexrun_syntax as syntax;

mod checked;
mod conditions;
mod context;
mod evidence;
mod hardware;
mod header;
mod ledger;
mod load;
mod matter;
mod models;
mod names;
mod outputs;
mod pools;
mod production;
mod speed;
pub mod stdlib;
mod step_graph;
mod step_info;
mod steps;
mod template_syntax;
mod templates;
mod test_file;
mod tools;
mod verify_reads;
mod verify_rules;

use std::collections::{BTreeMap, HashMap};

use camino::Utf8Path;

use crate::diagnostic::{Code, Diagnostic, SourceMap};
use crate::plan::workflow::Workflow;
pub use checked::Checked;
use context::Cx;
pub use context::Kind;
pub use load::{discover, Origin, Overlay};
pub use test_file::{check_test_bytes, check_test_path};

/// Checks a `.lex` file and everything it imports.
pub fn check_path(path: &Utf8Path) -> Checked {
    match std::fs::read(path) {
        Ok(bytes) => check_bytes(path, bytes),
        Err(e) => Checked::unreadable(path, &e),
    }
}

/// Checks the text of a `.lex` file as if it were at `path` (imports and relative paths
/// resolve against its folder). Never panics, whatever the bytes.
pub fn check_bytes(path: &Utf8Path, bytes: Vec<u8>) -> Checked {
    check_bytes_with(path, bytes, &|_| None)
}

/// [`check_bytes`], reading imported files through `open` first.
pub fn check_bytes_with(path: &Utf8Path, bytes: Vec<u8>, open: Overlay) -> Checked {
    check_inner(path, bytes, open, None)
}

/// [`check_bytes_with`], reusing the parse of the declarations an earlier check through
/// `reuse` read in the same words (an editor checks after every edit); the result is the
/// same.
pub fn check_bytes_reusing(
    path: &Utf8Path,
    bytes: Vec<u8>,
    open: Overlay,
    reuse: &mut crate::syntax::Reuse,
) -> Checked {
    reuse.begin();
    check_inner(path, bytes, open, Some(reuse))
}

fn check_inner(
    path: &Utf8Path,
    bytes: Vec<u8>,
    open: Overlay,
    reuse: Option<&mut crate::syntax::Reuse>,
) -> Checked {
    let mut sources = SourceMap::default();
    let mut diags = Vec::new();
    let (modules, library) = load::load(path, bytes, open, &mut sources, &mut diags, reuse);
    let mut cx = Cx {
        modules: &modules,
        sources: &mut sources,
        diags,
        names: BTreeMap::new(),
        templates: HashMap::new(),
        library: Some(library),
    };
    let workflow = run(&mut cx);
    let mut diagnostics = cx.diags;
    // "Unused" means nothing while declarations have errors: the broken one may be the user.
    if diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.retain(|d| d.code != Code::UnusedPool);
    }
    diagnostics.sort_by_key(|d| d.position());
    diagnostics.dedup();
    let failed = diagnostics.iter().any(Diagnostic::is_error);
    Checked {
        sources,
        diagnostics,
        workflow: if failed { None } else { workflow },
        unreadable: false,
    }
}

/// Runs every check in order, building the workflow's parts as it goes.
fn run(cx: &mut Cx) -> Option<Workflow> {
    let header = header::header(cx);
    names::collect(cx);
    let pools = pools::pools(cx);
    let models = models::models(cx, &pools);
    hardware::fit(cx, &pools, &models);
    let sources = evidence::sources(cx);
    let steps = steps::steps(cx, &models);
    let verify = verify_rules::verify(cx, &steps);
    verify_reads::check(cx, &steps, &verify);
    matter::matter(cx);
    let ledger = ledger::ledger(cx);
    let outputs = outputs::outputs(cx, &steps, &verify);
    let (name, description, matter) = header?;
    Some(Workflow {
        name,
        description,
        matter,
        ledger,
        pools,
        models,
        sources,
        steps,
        verify,
        outputs,
    })
}
