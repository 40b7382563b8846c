//! A run's index page: every verification of the run, linked to its review page.

use std::fmt::Write as _;

use super::marks::marker;
use crate::escape;

/// One verification listed on a run's index page.
pub struct IndexEntry {
    pub matter: String,
    pub stage: String,
    pub round: u32,
    /// What it found, e.g. `12 claims, 2 unsupported: blocked`.
    pub summary: String,
    pub problems: bool,
    /// The review page, relative to the index.
    pub href: String,
}

/// A run's index page: every verification of the run, linked to its review page.
pub fn index_page(run: &str, provenance: &[(String, String)], entries: &[IndexEntry]) -> String {
    let mut s = String::new();
    let title = format!("Verifications of run {run}");
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{}\n<meta name=\"generator\" content=\"lexrun\">\n<title>{t}</title>\n<style>\n{}</style>\n</head>\n<body class=\"index\">\n<header>\n<h1>{t}</h1>\n<dl class=\"prov\">",
        marker(provenance),
        include_str!("review.css"),
        t = escape::html(&title),
    );
    for (k, v) in provenance {
        let _ = write!(
            s,
            "<dt>{}</dt><dd>{}</dd>",
            escape::html(k),
            escape::html(v)
        );
    }
    s.push_str("</dl>\n</header>\n<main class=\"index\">\n");
    if entries.is_empty() {
        s.push_str("<p>This run verified no stage.</p>\n");
    } else {
        s.push_str("<table class=\"plist\"><caption>Verified stages</caption><thead><tr><th scope=\"col\">matter</th><th scope=\"col\">stage</th><th scope=\"col\">round</th><th scope=\"col\">result</th><th scope=\"col\">review</th></tr></thead><tbody>\n");
        for e in entries {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{} {}</td><td><a href=\"{}\">open the review</a></td></tr>",
                escape::html(&e.matter),
                escape::html(&e.stage),
                e.round,
                if e.problems { "<span aria-hidden=\"true\">✗</span>" } else { "<span aria-hidden=\"true\">✓</span>" },
                escape::html(&e.summary),
                escape::html(&e.href)
            );
        }
        s.push_str("</tbody></table>\n");
    }
    s.push_str("</main>\n</body>\n</html>\n");
    s
}
