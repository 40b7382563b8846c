//! The plan as a Graphviz graph: sources and steps as nodes, what feeds what as edges.

use std::fmt::Write;

use super::types::Plan;
use super::workflow::StepKind;

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

pub(super) fn render(p: &Plan) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph {} {{", quote(&p.workflow.name));
    let _ = writeln!(s, "  rankdir=LR;");
    let _ = writeln!(s, "  node [fontname=\"Helvetica\"];");
    for src in &p.sources {
        let _ = writeln!(
            s,
            "  {} [shape=folder, label={}];",
            quote(&src.name),
            quote(&format!("{}\n(evidence)", src.name))
        );
    }
    for st in &p.steps {
        let (shape, label) = match &st.kind {
            StepKind::Model(m) => {
                let pool = p
                    .models
                    .iter()
                    .find(|x| x.name == m.model)
                    .map_or("", |x| x.pool.as_str());
                ("box", format!("{}\n{} on {pool}", st.name, m.model))
            }
            StepKind::Tool(t) => ("component", format!("{}\n{} (CPU)", st.name, t.tool)),
        };
        let _ = writeln!(
            s,
            "  {} [shape={shape}, label={}];",
            quote(&st.name),
            quote(&label)
        );
    }
    for st in &p.steps {
        for a in &st.after {
            let _ = writeln!(s, "  {} -> {};", quote(a), quote(&st.name));
        }
        for r in st.reads.iter().filter(|r| !st.after.contains(r)) {
            let _ = writeln!(
                s,
                "  {} -> {} [style=dashed, label=\"reads\"];",
                quote(r),
                quote(&st.name)
            );
        }
        if let StepKind::Model(m) = &st.kind {
            if let Some(r) = &m.revise {
                let _ = writeln!(
                    s,
                    "  {} -> {} [style=dotted, label={}];",
                    quote(&st.name),
                    quote(&r.target),
                    quote(&format!("revise until {}", r.until))
                );
            }
        }
    }
    for o in &p.outputs {
        let id = format!("output:{}", o.path);
        let _ = writeln!(
            s,
            "  {} [shape=note, label={}];",
            quote(&id),
            quote(&o.path)
        );
        let _ = writeln!(s, "  {} -> {};", quote(&o.from), quote(&id));
    }
    s.push_str("}\n");
    s
}
