//! Prompt assembly. The evidence packet comes first — every source page under a header with
//! its file, page and Bates number — and it is the same bytes for every stage that reads the
//! same sources, so a server's prompt cache evaluates it once per model. Instructions,
//! earlier stages' answers and revision feedback follow it, from the stage's template.

use std::path::Path;

use serde_json::{json, Value};

use crate::sources::{stamp_of, Document, Unreadable};

/// One evidence file: its path as shown to the model, and its text per page.
#[derive(Clone, Debug)]
pub struct EvidenceFile {
    pub source: String,
    pub shown: String,
    pub path: String,
    pub pages: Vec<String>,
    /// An attachment's own bytes (for the intake guard); `None` for a file on disk.
    pub embedded: Option<Vec<u8>>,
}

/// Reads a file's documents (the file, then any attachments), naming the file when it cannot.
pub fn read(path: &Path, ocr_optional: bool) -> Result<Vec<Document>, Unreadable> {
    let opts = crate::sources::Options::default().ocr_optional(ocr_optional);
    crate::sources::read(path, &opts).map_err(|source| Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// The parts of a file that could not be read (an email's damaged attachment), each shown as
/// [`evidence_files`] shows it, with why. They are left out of the evidence and named in
/// the run report and by `lexrun sources`.
pub fn unreadable_parts(shown: &str, docs: &[Document]) -> Vec<(String, String)> {
    docs.iter()
        .filter_map(|d| {
            d.unreadable
                .as_ref()
                .map(|why| (d.shown(shown), why.clone()))
        })
        .collect()
}

/// The evidence files of one source declaration read from one file: one per document, each
/// shown as the file (relative to the matter) or the attachment within it. Parts that could
/// not be read are left out ([`unreadable_parts`] names them).
pub fn evidence_files(
    source: &str,
    shown: &str,
    path: &Path,
    docs: Vec<Document>,
) -> Vec<EvidenceFile> {
    docs.into_iter()
        .filter(|d| d.unreadable.is_none())
        .map(|d| EvidenceFile {
            source: source.to_string(),
            shown: d.shown(shown),
            path: if d.within.is_empty() {
                path.display().to_string()
            } else {
                d.shown(&path.display().to_string())
            },
            pages: d.texts(),
            embedded: d.embedded,
        })
        .collect()
}

/// The packet for a list of files, in order.
pub fn packet(files: &[EvidenceFile]) -> String {
    let mut out = String::new();
    for f in files {
        let stamps: Vec<Option<String>> = f.pages.iter().map(|p| stamp_of(p)).collect();
        let first = stamps.iter().flatten().next();
        let last = stamps.iter().flatten().last();
        let range = match (first, last) {
            (Some(a), Some(b)) if a != b => format!(" · {a}–{b}"),
            (Some(a), _) => format!(" · {a}"),
            _ => String::new(),
        };
        let n = f.pages.len();
        out.push_str(&format!(
            "=== {} · {} · {} page{}{range} ===\n",
            f.source,
            f.shown,
            n,
            if n == 1 { "" } else { "s" }
        ));
        for (i, (page, stamp)) in f.pages.iter().zip(&stamps).enumerate() {
            if n > 1 {
                match stamp {
                    Some(s) => out.push_str(&format!("--- page {} · {s} ---\n", i + 1)),
                    None => out.push_str(&format!("--- page {} ---\n", i + 1)),
                }
            }
            out.push_str(page.trim_end());
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// Renders a stage's template with its variables. Nothing is escaped: the prompt is text.
pub fn render(template: &str, vars: &Value) -> Result<String, handlebars::RenderError> {
    let mut hb = handlebars::Handlebars::new();
    hb.register_escape_fn(handlebars::no_escape);
    hb.render_template(template, vars)
}

/// The variables every stage has.
pub fn base_vars(workflow: (&str, &str), matter: (&str, &str), stage: &str) -> Value {
    json!({
        "workflow": {"name": workflow.0, "description": workflow.1},
        "matter": {"name": matter.0, "dir": matter.1},
        "stage": {"name": stage},
        "revision": {"round": 0, "feedback": ""},
        "inputs": [],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_headers_carry_file_pages_and_bates() {
        let f = EvidenceFile {
            source: "client".into(),
            shown: "intake/lease.pdf".into(),
            path: "/x/intake/lease.pdf".into(),
            pages: vec![
                "Lease page one\nSMITH000002".into(),
                "Page two\nSMITH000003".into(),
            ],
            embedded: None,
        };
        let p = packet(&[f]);
        assert!(p.starts_with("=== client · intake/lease.pdf · 2 pages · SMITH000002–SMITH000003 ===\n--- page 1 · SMITH000002 ---\nLease page one"), "{p}");
        assert!(p.contains("--- page 2 · SMITH000003 ---\nPage two"));
    }

    #[test]
    fn templates_render_without_escaping() {
        let mut v = base_vars(("w", "a <tenant> matter"), ("smith", "/m"), "gate");
        v["evidence"] = json!("E & F");
        let out = render(
            "{{evidence}}\n{{workflow.description}} for {{matter.name}}",
            &v,
        )
        .unwrap();
        assert_eq!(out, "E & F\na <tenant> matter for smith");
    }
}
