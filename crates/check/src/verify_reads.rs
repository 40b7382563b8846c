//! A `verify STAGE against SOURCES` is meaningful only when the stage has seen those sources:
//! read them itself, or through the stages and evidence tools it reads. Otherwise every claim
//! of the stage would be checked against evidence it was never given.

use std::collections::BTreeSet;

use super::context::{and_list, Cx, Kind};
use crate::diagnostic::{Code, Diagnostic};
use crate::plan::workflow::{Step, Verify};

pub(crate) fn check(cx: &mut Cx, steps: &[Step], verify: &[Verify]) {
    let decls = cx.verify_decls();
    for v in verify {
        let Some((f, decl)) = decls.iter().find(|(_, d)| d.target.node == v.stage) else {
            continue;
        };
        // A stage with errors of its own is not in the plan; what it reads is unknown.
        if !steps.iter().any(|s| s.name == v.stage) {
            continue;
        }
        let seen = underlying(cx, steps, &v.stage, &mut BTreeSet::new());
        for a in &decl.against {
            let wanted = underlying(cx, steps, &a.node, &mut BTreeSet::new());
            if wanted.is_empty() || !wanted.is_disjoint(&seen) {
                continue;
            }
            let reads: Vec<&String> = seen.iter().collect();
            let help = if reads.is_empty() {
                format!("add `reads {}` to `{}`, so the model drafts from the evidence it is checked against", a.node, v.stage)
            } else {
                format!(
                    "add `{}` to the `reads` of `{}`, or verify against what it reads: {}",
                    a.node,
                    v.stage,
                    and_list(&reads)
                )
            };
            cx.error(
                Diagnostic::new(
                    Code::VerifyUnread,
                    format!(
                        "`{}` never reads `{}`, so its claims cannot be proven by them",
                        v.stage, a.node
                    ),
                )
                .in_file(*f)
                .label(a.span, format!("`{}` does not read this", v.stage))
                .help(help),
            );
        }
    }
}

/// The `sources` behind a name: itself for sources; for a step, the sources it reads, directly
/// or through the steps it reads.
fn underlying(
    cx: &Cx,
    steps: &[Step],
    name: &str,
    visiting: &mut BTreeSet<String>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if !visiting.insert(name.to_string()) {
        return out;
    }
    if matches!(
        cx.names.get(name).map(|e| e.decl.kind()),
        Some(Kind::Sources)
    ) {
        out.insert(name.to_string());
        return out;
    }
    if let Some(step) = steps.iter().find(|s| s.name == name) {
        for r in &step.reads {
            out.extend(underlying(cx, steps, r, visiting));
        }
    }
    out
}
