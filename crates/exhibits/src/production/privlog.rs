//! The privilege log for what a volume withholds, with the fields Rule 26(b)(5)(A) asks for:
//! date, document type, author, recipients (BCC too), description, privilege asserted and a
//! control number, each entry linked to its slip sheet's Bates number and its family's range
//! and never to where the document was collected; as CSV and as a Word document. The log is itself produced, so every redaction
//! pattern applies to it.

use std::path::Path;

use super::redact::redact_text;
use super::types::{Doc, Pattern, ProductionError, Withhold};
use crate::document::docx;

pub const HEADER: &[&str] = &[
    "Control Number",
    "Bates",
    "Family",
    "Date",
    "Document Type",
    "Author",
    "Recipients",
    "CC",
    "BCC",
    "Description",
    "Privilege Asserted",
];

/// A withheld document, with its slip sheet's number and its family's range (empty for a
/// document alone in its family).
pub(super) struct Entry<'a> {
    pub(super) doc: &'a Doc,
    pub(super) withhold: &'a Withhold,
    pub(super) bates: String,
    pub(super) family: String,
}

/// A header line of a memo or letter (`From: …`), read from its first lines.
fn header(d: &Doc, keys: &[&str]) -> String {
    let first = d.texts.first().map(String::as_str).unwrap_or("");
    for line in first.lines().take(20) {
        if let Some((k, v)) = line.split_once(':') {
            if keys.iter().any(|x| k.trim().eq_ignore_ascii_case(x)) {
                return v.trim().to_string();
            }
        }
    }
    String::new()
}

fn kind_of(d: &Doc) -> String {
    match d.kind {
        crate::sources::Kind::Eml => "Email".into(),
        crate::sources::Kind::Text | crate::sources::Kind::Docx | crate::sources::Kind::Doc => {
            let re = header(d, &["re", "subject"]);
            if d.texts
                .first()
                .is_some_and(|t| t.to_ascii_uppercase().contains("MEMORANDUM"))
            {
                "Memorandum".into()
            } else if re.is_empty() {
                d.kind.describe().into()
            } else {
                "Letter".into()
            }
        }
        k => k.describe().into(),
    }
}

pub(super) fn rows(volume: &str, withheld: &[Entry], patterns: &[Pattern]) -> Vec<Vec<String>> {
    withheld
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (d, w) = (e.doc, e.withhold);
            let or = |a: &str, b: String| if a.is_empty() { b } else { a.to_string() };
            let date = or(&d.meta.date, header(d, &["date"]));
            let author = or(&d.meta.from, header(d, &["from", "author"]));
            let to = or(&d.meta.to, header(d, &["to"]));
            let cc = or(&d.meta.cc, header(d, &["cc"]));
            let bcc = or(&d.meta.bcc, header(d, &["bcc"]));
            let description = w
                .description
                .clone()
                .unwrap_or_else(|| or(&d.meta.subject, header(d, &["re", "subject"])));
            [
                format!("{volume}-PRIV-{:04}", i + 1),
                e.bates.clone(),
                e.family.clone(),
                date,
                kind_of(d),
                author,
                to,
                cc,
                bcc,
                description,
                w.privilege.clone(),
            ]
            .iter()
            .map(|v| redact_text(v, patterns))
            .collect()
        })
        .collect()
}

pub(super) fn write(
    data: &Path,
    volume: &str,
    withheld: &[Entry],
    patterns: &[Pattern],
) -> Result<(), ProductionError> {
    let rows = rows(volume, withheld, patterns);
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(HEADER);
    for r in &rows {
        let _ = w.write_record(r);
    }
    let bytes = w.into_inner().unwrap_or_default();
    let csv_path = data.join(format!("{volume}-privilege-log.csv"));
    crate::atomic::write(&csv_path, &bytes)
        .map_err(|e| ProductionError::Io(csv_path.clone(), e))?;
    let doc = docx::Document {
        title: format!("Privilege log — volume {volume}"),
        body: format!(
            "Documents withheld from production volume {volume} under a claim of privilege, described as Fed. R. Civ. P. 26(b)(5)(A) requires without revealing what is privileged. {} documents are withheld.",
            rows.len()
        ),
        appendix: Some(docx::Table {
            title: "Withheld documents".into(),
            note: String::new(),
            header: HEADER.iter().map(|s| s.to_string()).collect(),
            rows,
        }),
        style: docx::Style {
            line_spacing: 1.0,
            ..docx::Style::default()
        },
        ..docx::Document::default()
    };
    let docx_path = data.join(format!("{volume}-privilege-log.docx"));
    docx::write(&doc, &docx_path)
        .map_err(|e| ProductionError::Io(docx_path.clone(), std::io::Error::other(e.to_string())))
}
