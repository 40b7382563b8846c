//! How the page marks what it shows: the icon beside a status, and lexrun's provenance
//! marker, which the intake guard recognises.

use crate::verify::Status;

/// The icon beside a status, so the status never depends on colour.
pub(crate) fn icon(status: Status) -> &'static str {
    match status {
        Status::Supported => "✓",
        Status::Unsupported => "✗",
        Status::Miscited => "≠",
        Status::Unrecognized => "?",
    }
}

/// The provenance as lexrun's marker: an HTML comment the intake guard recognises.
pub(super) fn marker(provenance: &[(String, String)]) -> String {
    let clean = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join("_")
            .replace("--", "-")
            .replace('>', "")
    };
    let fields: Vec<String> = provenance
        .iter()
        .map(|(k, v)| format!("{}={}", clean(k), clean(v)))
        .collect();
    format!(
        "<!-- lexrun:provenance kind=review {} -->",
        fields.join(" ")
    )
}
