//! Printing units at an indentation: runs of one-setting lines share a value column.

use super::types::Unit;
use crate::syntax::Rule;

/// Prints units at an indentation, aligning runs of one-setting lines.
pub(super) fn render(units: &[Unit], indent: &str, out: &mut String) {
    let mut widths = vec![0usize; units.len()];
    let mut i = 0;
    while i < units.len() {
        let Some(kind) = alignable(&units[i]) else {
            i += 1;
            continue;
        };
        // A run: alignable lines of one kind, with only end-of-line comments between them.
        let mut j = i;
        let mut members = Vec::new();
        while j < units.len() {
            match &units[j] {
                Unit::Trailing(_) => {}
                u if alignable(u) == Some(kind) => members.push(j),
                _ => break,
            }
            j += 1;
        }
        let width = members
            .iter()
            .filter_map(|&m| match &units[m] {
                Unit::Line(e) => Some(e[0].key.chars().count()),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        if members.len() > 1 {
            for m in members {
                widths[m] = width;
            }
        }
        i = j.max(i + 1);
    }
    for (unit, width) in units.iter().zip(widths) {
        match unit {
            Unit::Blank => out.push('\n'),
            Unit::Comment(c) => {
                out.push_str(indent);
                out.push_str(c);
                out.push('\n');
            }
            Unit::Trailing(c) => {
                if out.ends_with('\n') {
                    out.pop();
                }
                out.push_str("  ");
                out.push_str(c);
                out.push('\n');
            }
            Unit::Line(entries) => {
                out.push_str(indent);
                let parts: Vec<String> = entries
                    .iter()
                    .map(|e| e.render(if entries.len() == 1 { width } else { 0 }))
                    .collect();
                out.push_str(&parts.join("  "));
                out.push('\n');
            }
            Unit::Text(t) => {
                out.push_str(indent);
                out.push_str(t);
                out.push('\n');
            }
        }
    }
}

/// The alignment kind of a line that can join a run.
fn alignable(u: &Unit) -> Option<Option<Rule>> {
    match u {
        Unit::Line(e) if e.len() == 1 && e[0].align => Some(e[0].kind),
        _ => None,
    }
}
