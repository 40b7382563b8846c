//! Case citations: full citations from the catalogue scanner, short forms, `supra`.

use std::sync::LazyLock;

use regex::Regex;

use super::pattern::{pin_of, re, valid_year, PIN};
use crate::catalogue::CATALOGUE;
use crate::cites::{self, Allowed, Cite};
use crate::claim::{Claim, Key, Kind};

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

/// A full citation met earlier in the text: where it starts, its key, and the case name
/// before it (for `supra`).
struct Full {
    start: usize,
    key: Key,
    name: String,
}

/// The citations met so far, which short forms, `supra` and repeated citations refer to.
#[derive(Default)]
struct Earlier {
    fulls: Vec<Full>,
    /// Full citations in reporters no catalogue knows: volume, squashed reporter, as written.
    unknown: Vec<(u32, String, String)>,
}

/// Case citations (reporters, Westlaw and Lexis cites, journals), in text order, with short
/// forms resolved to the full citation they name. Citation-shaped text whose reporter no
/// catalogue knows is a claim of its own, never passed over.
pub fn citations(text: &str, allowed: &Allowed) -> Vec<Claim> {
    let mut found: Vec<(usize, Claim)> = Vec::new();
    let mut earlier = Earlier::default();
    for f in cites::scan(text, allowed) {
        let written = text[f.start..f.end].trim();
        let key = match f.cite {
            Cite::Full {
                volume,
                reporter,
                page,
                pin,
                year,
                suffix,
            } => earlier.full(
                text,
                f.start,
                written,
                (volume, reporter, page, pin, year),
                suffix,
            ),
            Cite::Short {
                volume,
                reporter,
                pin,
            } => earlier.short(written, volume, &reporter, pin),
            Cite::Unknown {
                abbreviation,
                volume,
                short,
            } => earlier.unknown(text, f.start, written, &abbreviation, volume, short),
        };
        found.push((
            f.start,
            Claim::new(Kind::Citation, text, f.start, f.start + written.len(), key),
        ));
    }
    earlier.supras(text, &mut found);
    found.sort_by_key(|(s, _)| *s);
    found.into_iter().map(|(_, c)| c).collect()
}

impl Earlier {
    /// Keeps a full citation at `start`, with the case name in the 120 bytes before it.
    fn push_full(&mut self, text: &str, start: usize, key: Key) {
        let mut from = start.saturating_sub(120);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        self.fulls.push(Full {
            start,
            key,
            name: case_name(&text[from..start]),
        });
    }

    /// The key of a full citation: unresolved when its reporter was not published in its
    /// year, or its page is blank. A repeated citation without its year (`2019 WL 123456,
    /// at *3`) takes the year of the same citation given in full earlier.
    fn full(
        &mut self,
        text: &str,
        start: usize,
        written: &str,
        (volume, reporter, page, pin, year): (
            u32,
            cites::Reporter,
            Option<u32>,
            Option<String>,
            Option<u16>,
        ),
        suffix: Option<char>,
    ) -> Key {
        // A lettered decision (`210454-U`) is keyed apart from the one its number alone
        // names: a citation matches only whole.
        let rep = match suffix {
            Some(s) => format!("{}-{s}", reporter.key()),
            None => reporter.key().to_string(),
        };
        let outside = match (&reporter, year) {
            (cites::Reporter::Known(e), Some(y)) if valid_year(y) => {
                e.start.is_some_and(|s| y < s) || e.end.is_some_and(|end| y > end)
            }
            _ => false,
        };
        let year = year.or_else(|| {
            self.fulls.iter().rev().find_map(|f| match &f.key {
                Key::Case {
                    volume: v,
                    reporter: r,
                    page: p,
                    year: Some(y),
                    ..
                } if *v == volume && *r == rep && Some(*p) == page => Some(*y),
                _ => None,
            })
        });
        let key = Key::Case {
            volume,
            reporter: rep,
            page: page.unwrap_or(0),
            pin,
            year,
        };
        self.push_full(text, start, key.clone());
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

    /// The key of a short form: the last full citation to its volume of its reporter.
    fn short(&self, written: &str, volume: u32, reporter: &cites::Reporter, pin: String) -> Key {
        let rep = reporter.key();
        let earlier = self.fulls.iter().rev().find(|f| {
            matches!(&f.key, Key::Case { volume: v, reporter: r, .. } if *v == volume && r == rep)
        });
        match earlier {
            Some(f) => f.key.with_pin(Some(pin)),
            None => Key::Unresolved(format!(
                "`{written}` is a short form, but no full citation to volume {volume} of that reporter comes before it"
            )),
        }
    }

    /// The key of a citation in a reporter no catalogue knows: unrecognised, and a short
    /// form names the full citation it shortens. A full one is kept: its short forms,
    /// `supra` and `Id.` follow it, unrecognised as it is.
    fn unknown(
        &mut self,
        text: &str,
        start: usize,
        written: &str,
        abbreviation: &str,
        volume: u32,
        short: bool,
    ) -> Key {
        let squashed = crate::catalogue::squash(abbreviation);
        let why = format!(
            "`{abbreviation}` is not a reporter, journal or code in lexrun's catalogue ({}); \
             check the citation, or accept the abbreviation with `allow reporter \"{abbreviation}\"`",
            CATALOGUE.source
        );
        if short {
            let full = self
                .unknown
                .iter()
                .rev()
                .find(|(v, r, _)| *v == volume && *r == squashed);
            return Key::Unrecognized(match full {
                Some((_, _, of)) => format!("a short form of `{of}`: {why}"),
                None => why,
            });
        }
        let key = Key::Unrecognized(why);
        self.push_full(text, start, key.clone());
        self.unknown.push((volume, squashed, written.to_string()));
        key
    }

    /// `Name, supra` (with a volume or a pin cite, perhaps): the last full citation before
    /// it whose case name holds the name.
    fn supras(&self, text: &str, found: &mut Vec<(usize, Claim)>) {
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
            let earlier = self.fulls.iter().rev().find(|f| {
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
    }
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
