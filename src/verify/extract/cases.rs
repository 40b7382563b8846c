//! Case citations: full citations from the catalogue scanner, short forms, `supra`.

use std::sync::LazyLock;

use regex::Regex;

use super::pattern::{pin_of, re, valid_year, PIN};
use crate::verify::catalogue::CATALOGUE;
use crate::verify::cites::{self, Allowed, Cite};
use crate::verify::claim::{Claim, Key, Kind};

static SUPRA: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?P<name>[A-Za-z][A-Za-z'’&.-]*[A-Za-z])(?:(?-u:\s)*,(?-u:\s)*|(?-u:\s)+)(?:(?P<vol>[0-9]{{1,4}})(?:(?-u:\s)+[A-Z][A-Za-z0-9.'’ ]{{0,24}}?)?,?(?-u:\s)+)?supra(?-u:\b)(?P<note>(?-u:\s)+(?:note|n\.|notes|Part|part|Section|§))?(?:,?(?-u:\s)*at(?-u:\s)+(?P<pin>{PIN}))?"
    ))
    .expect("supra pattern compiles")
});

/// Words before `supra` that are not a case's name: signals and cross-references.
const NOT_SUPRA_NAMES: &[&str] = &[
    "see",
    "also",
    "cf",
    "accord",
    "but",
    "and",
    "the",
    "e.g",
    "discussed",
    "cited",
    "noted",
    "explained",
    "quoted",
    "as",
    "in",
    "compare",
    "with",
    "contra",
];

/// Case citations (reporters, Westlaw and Lexis cites, journals), in text order, with short
/// forms resolved to the full citation they name. Citation-shaped text whose reporter no
/// catalogue knows is a claim of its own, never passed over.
pub fn citations(text: &str, allowed: &Allowed) -> Vec<Claim> {
    struct Full {
        start: usize,
        key: Key,
        name: String,
    }
    let mut found: Vec<(usize, Claim)> = Vec::new();
    let mut fulls: Vec<Full> = Vec::new();
    // Full citations in reporters no catalogue knows: volume, squashed reporter, as written.
    let mut unknown: Vec<(u32, String, String)> = Vec::new();
    for f in cites::scan(text, allowed) {
        let written = text[f.start..f.end].trim();
        let key = match f.cite {
            Cite::Full {
                volume,
                reporter,
                page,
                pin,
                year,
            } => {
                let outside = match (&reporter, year) {
                    (cites::Reporter::Known(e), Some(y)) if valid_year(y) => {
                        e.start.is_some_and(|s| y < s) || e.end.is_some_and(|end| y > end)
                    }
                    _ => false,
                };
                // A repeated citation without its year (`2019 WL 123456, at *3`) takes the
                // year of the same citation given in full earlier.
                let year = year.or_else(|| {
                    fulls.iter().rev().find_map(|f| match &f.key {
                        Key::Case {
                            volume: v,
                            reporter: r,
                            page: p,
                            year: Some(y),
                            ..
                        } if *v == volume && r == reporter.key() && Some(*p) == page => Some(*y),
                        _ => None,
                    })
                });
                let key = Key::Case {
                    volume,
                    reporter: reporter.key().to_string(),
                    page: page.unwrap_or(0),
                    pin,
                    year,
                };
                let mut from = f.start.saturating_sub(120);
                while !text.is_char_boundary(from) {
                    from += 1;
                }
                fulls.push(Full {
                    start: f.start,
                    key: key.clone(),
                    name: case_name(&text[from..f.start]),
                });
                match (&reporter, page) {
                    (cites::Reporter::Known(e), Some(_)) if outside => {
                        let span = match (e.start, e.end) {
                            (Some(s), Some(end)) => format!("from {s} to {end}"),
                            (Some(s), None) => format!("from {s} on"),
                            (None, Some(end)) => format!("until {end}"),
                            (None, None) => String::new(),
                        };
                        Key::Unresolved(format!(
                            "`{}` was published {span}, so no case it reports is from {}",
                            e.name,
                            year.unwrap_or(0)
                        ))
                    }
                    (_, None) => Key::Unresolved(format!(
                        "`{written}` leaves its page blank; cite the page, or the slip opinion"
                    )),
                    _ => key,
                }
            }
            Cite::Short {
                volume,
                reporter,
                pin,
            } => {
                let rep = reporter.key();
                let earlier = fulls.iter().rev().find(|f| {
                    matches!(&f.key, Key::Case { volume: v, reporter: r, .. } if *v == volume && r == rep)
                });
                match earlier {
                    Some(f) => f.key.with_pin(Some(pin)),
                    None => Key::Unresolved(format!(
                        "`{written}` is a short form, but no full citation to volume {volume} of that reporter comes before it"
                    )),
                }
            }
            Cite::Unknown {
                abbreviation,
                volume,
                short,
            } => {
                let squashed = crate::verify::catalogue::squash(&abbreviation);
                let why = format!(
                    "`{abbreviation}` is not a reporter, journal or code in lexrun's catalogue ({}); \
                     check the citation, or accept the abbreviation with `allow reporter \"{abbreviation}\"`",
                    CATALOGUE.source
                );
                if short {
                    let full = unknown
                        .iter()
                        .rev()
                        .find(|(v, r, _)| *v == volume && *r == squashed);
                    Key::Unrecognized(match full {
                        Some((_, _, of)) => format!("a short form of `{of}`: {why}"),
                        None => why,
                    })
                } else {
                    let mut from = f.start.saturating_sub(120);
                    while !text.is_char_boundary(from) {
                        from += 1;
                    }
                    let key = Key::Unrecognized(why);
                    // Its short forms, `supra` and `Id.` follow it, unrecognised as it is.
                    fulls.push(Full {
                        start: f.start,
                        key: key.clone(),
                        name: case_name(&text[from..f.start]),
                    });
                    unknown.push((volume, squashed, written.to_string()));
                    key
                }
            }
        };
        found.push((
            f.start,
            Claim::new(Kind::Citation, text, f.start, f.start + written.len(), key),
        ));
    }
    for c in SUPRA.captures_iter(text) {
        let m = c.get(0).expect("match");
        let name = &c["name"];
        if c.name("note").is_some()
            || NOT_SUPRA_NAMES.contains(&name.to_lowercase().trim_end_matches('.'))
        {
            continue;
        }
        let lower = name.to_lowercase();
        let volume: Option<u32> = c.name("vol").and_then(|v| v.as_str().parse().ok());
        let earlier = fulls.iter().rev().find(|f| {
            f.start < m.start()
                && f.name.to_lowercase().contains(&lower)
                && volume.is_none_or(|v| {
                    matches!(f.key, Key::Case { volume, .. } if volume == v)
                        || matches!(f.key, Key::Unrecognized(_))
                })
        });
        let key = match earlier {
            Some(f) => f.key.with_pin(pin_of(c.name("pin"))),
            None => Key::Unresolved(format!(
                "`{name}, supra` refers to no earlier citation of that name"
            )),
        };
        let start = c.name("name").expect("name").start();
        found.push((start, Claim::new(Kind::Citation, text, start, m.end(), key)));
    }
    found.sort_by_key(|(s, _)| *s);
    found.into_iter().map(|(_, c)| c).collect()
}

/// The case name just before a citation: `Celotex Corp. v. Catrett, ` → `Celotex Corp. v. Catrett`.
fn case_name(before: &str) -> String {
    let b = before.trim_end().trim_end_matches(',');
    let Some(v) = b.rfind(" v. ") else {
        // `In re Marriage of Smith`: the name after `In re`.
        return b
            .rfind("In re ")
            .map(|i| b[i + "In re ".len()..].trim().to_string())
            .unwrap_or_default();
    };
    // The first party: the capitalised words (and joining words) just before ` v. `.
    let words: Vec<&str> = b[..v].split_whitespace().collect();
    let keep = words
        .iter()
        .rev()
        .take(6)
        .take_while(|w| {
            // `Celotex Corp.`, `eBay Inc.`, `de Soto`.
            w.chars().any(char::is_uppercase)
                || matches!(
                    **w,
                    "&" | "of" | "the" | "and" | "de" | "van" | "von" | "la" | "du"
                )
        })
        .count();
    format!("{}{}", words[words.len() - keep..].join(" "), &b[v..])
}
