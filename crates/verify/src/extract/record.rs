//! Record citations: cites to the case's own record rather than to an authority — a pleading's
//! or a statement of facts' paragraphs (`(Compl. ¶ 59)`, `SUF ¶ 4`, `Suppl. Compl. (DE 65)
//! ¶ 5`), a declaration's (`Decl. of Lee ¶ 7`, `Lee Decl. ¶ 7`), a transcript's page and
//! lines (`Tr. 45:12–18`, `Lee Dep. 12:3`), an excerpt of record (`2-ER-145`, `SER 12`) and
//! the record on appeal (`R. 12`).
//!
//! A record cite is a claim of its own kind: an `Id.` after one repeats it, never an
//! authority cited further back.

use std::sync::LazyLock;

use regex::Regex;

use super::pattern::{followed_by_digit, preceded_by_digit_or_letter, re};
use crate::claim::{Claim, Key, Kind};

/// The words that name a filing of the record, before its paragraphs.
const PARAGRAPH_DOC: &str = r"Compl\.|Complaint|Countercl\.|Counterclaim|Ans\.|Answer|Pet\.|Petition|SUF|SUMF|SOF|SSUF|PSUF|DSUF|RSOF|JSUF|SMF|Stip\.|Decl\.|Declaration|Aff\.|Affidavit";

static RECORD: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        concat!(
            // A filing's paragraphs: up to three capitalised words before the filing's name
            // (`Fourth Am. Compl.`, `Lee Decl.`, `Pl.'s SUF`), `of NAME` after it, a docket
            // entry in parentheses, then `¶` and the paragraphs.
            r"(?P<p>(?P<pdoc>(?:(?:[A-Z][A-Za-z.'’-]*|of)(?-u:\s)+){{0,3}}(?:{docs})(?:(?-u:\s)+of(?-u:\s)+[A-Z][A-Za-z.'’-]+(?:(?-u:\s)+[A-Z][A-Za-z.'’-]+){{0,2}})?)",
            r"(?:(?-u:\s)*\((?:DE|D\.E\.|Doc\.|ECF|Dkt\.)(?-u:\s)*(?:No\.(?-u:\s)*)?[0-9]+\))?,?(?-u:\s)*(?:at(?-u:\s)+)?",
            r"(?P<ppin>¶¶?(?-u:\s)*[0-9]+(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]+)?(?:,(?-u:\s)*[0-9]+(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]+)?)*))",
            // A transcript's page and lines.
            r"|(?P<t>(?P<tdoc>(?:[A-Z][A-Za-z.'’-]*(?-u:\s)+){{0,2}}(?:Tr\.|Dep\.|Depo\.|Transcript))(?-u:\s)*(?:at(?-u:\s)+)?",
            r"(?P<tpin>[0-9]{{1,4}}:[0-9]{{1,2}}(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]{{1,4}}(?::[0-9]{{1,2}})?)?))",
            // An excerpt of record with its volume: `2-ER-145`.
            r"|(?P<e>(?P<evol>[0-9]{{1,2}})-(?P<edoc>ER|SER|FER|CER|AER|ACR)-(?P<epin>[0-9]{{1,5}}(?:[-–][0-9]{{1,5}})?))",
            // An appendix, excerpts or the record on appeal after an opening bracket or a signal.
            r"|(?P<a>(?:\(|\[|;(?-u:\s)|[Ss]ee(?-u:\s)(?:also(?-u:\s))?)(?P<adoc>ER|SER|CT|RT|AA|JA|App\.|R\.)(?-u:\s)?(?P<apin>[0-9]{{1,5}}(?:[-–][0-9]{{1,5}})?))"
        ),
        docs = PARAGRAPH_DOC
    ))
    .expect("record pattern compiles")
});

/// Signals and words that may open a record cite's match without being part of its name.
const LEADING: &[&str] = &[
    "See", "see", "Cf.", "cf.", "Accord", "also", "of", "E.g.,", "And", "and",
];

fn squashed(s: &str) -> String {
    crate::catalogue::squash(s)
}

fn pin_text(s: &str) -> String {
    s.split_whitespace()
        .collect::<String>()
        .replace(['–', '—'], "-")
}

/// Every record cite in `text`, in order.
pub fn records(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    if !text.contains(['¶', ':', '-', '(', ';']) {
        return out;
    }
    for c in RECORD.captures_iter(text) {
        let (doc_m, pin, whole) = if let Some(w) = c.name("p") {
            (c.name("pdoc"), c["ppin"].to_string(), w)
        } else if let Some(w) = c.name("t") {
            (c.name("tdoc"), c["tpin"].to_string(), w)
        } else if let Some(w) = c.name("e") {
            (c.name("edoc"), format!("{}-{}", &c["evol"], &c["epin"]), w)
        } else if let Some(w) = c.name("a") {
            (c.name("adoc"), c["apin"].to_string(), w)
        } else {
            continue;
        };
        let Some(doc_m) = doc_m else { continue };
        // The name starts after any signal the match took in.
        // An excerpt of record starts at its volume (`2-ER-145`).
        let mut start = if c.name("e").is_some() {
            whole.start()
        } else {
            doc_m.start()
        };
        let mut doc = doc_m.as_str();
        loop {
            let first = doc.split_whitespace().next().unwrap_or("");
            if LEADING.contains(&first) && doc.len() > first.len() {
                let rest = doc[first.len()..].trim_start();
                start += doc.len() - rest.len();
                doc = rest;
            } else {
                break;
            }
        }
        if preceded_by_digit_or_letter(text, start)
            || followed_by_digit(text, whole.end())
            || text[whole.end()..].starts_with(|c: char| c.is_ascii_alphabetic())
        {
            continue;
        }
        let document = squashed(doc);
        if document.is_empty() {
            continue;
        }
        out.push(Claim::new(
            Kind::Record,
            text,
            start,
            whole.end(),
            Key::Record {
                document,
                pin: pin_text(&pin),
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(t: &str) -> Vec<String> {
        records(t)
            .into_iter()
            .map(|c| format!("{} = {}", c.text, c.key))
            .collect()
    }

    #[test]
    fn every_record_form() {
        assert_eq!(
            found(
                "voted since 2014. (Compl. (DE 2) ¶ 9). Later (Suppl. Compl. (DE 65) ¶¶ 5, 7-9)."
            ),
            [
                "Compl. (DE 2) ¶ 9 = compl ¶9",
                "Suppl. Compl. (DE 65) ¶¶ 5, 7-9 = supplcompl ¶¶5,7-9"
            ]
        );
        assert_eq!(
            found("See SUF ¶ 4; Lee Decl. ¶ 7; Decl. of Ann Lee ¶ 3."),
            [
                "SUF ¶ 4 = suf ¶4",
                "Lee Decl. ¶ 7 = leedecl ¶7",
                "Decl. of Ann Lee ¶ 3 = declofannlee ¶3"
            ]
        );
        assert_eq!(
            found("(Tr. 45:12–18); (Lee Dep. 12:3-13:4); 2-ER-145; (SER 12); (R. 12)."),
            [
                "Tr. 45:12–18 = tr 45:12-18",
                "Lee Dep. 12:3-13:4 = leedep 12:3-13:4",
                "2-ER-145 = er 2-145",
                "SER 12 = ser 12",
                "R. 12 = r 12"
            ]
        );
    }

    #[test]
    fn authorities_are_not_record_cites() {
        for t in [
            "Fed. R. Civ. P. 12(b)(6)",
            "Sup. Ct. R. 10",
            "at 10:30 a.m.",
            "Cal. App. 4th 12",
            "No. 5:24-CV-481-FL",
        ] {
            assert!(found(t).is_empty(), "{t}: {:?}", found(t));
        }
    }
}
