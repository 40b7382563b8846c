//! Finding checkable claims in text: case citations (full, short, `Id.`, `supra`), statutes
//! and rules, dates, Bates numbers and ranges, quotations, and money amounts and percentages.
//! The same extractors read the evidence, so both sides are compared in one canonical form.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// Builds a pattern with a small lazy-DFA cache: the verifier runs several patterns over the
/// whole evidence on two threads, and the default cache (2 MiB per pattern and thread) would
/// cost more memory than the evidence itself.
pub(crate) fn re(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).dfa_size_limit(256 << 10).build()
}

use super::{Claim, Key, Kind};

use super::catalogue::{law_key, LawForm, CATALOGUE};
use super::cites::{self, Allowed, Cite};

const PIN: &str = r"[0-9]{1,5}(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]{1,5})?";

static ID_CITE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?:^|[\t\n\x0B\x0C\r (;,])(?P<id>[Ii]d\.|[Ii]bid\.?)(?:,?(?-u:\s)+at(?-u:\s)+(?P<pin>\*?{PIN}))?"
    ))
    .expect("Id. pattern compiles")
});

static SUPRA: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?P<name>[A-Za-z][A-Za-z'’&.-]*[A-Za-z])(?:(?-u:\s)*,(?-u:\s)*|(?-u:\s)+)supra(?P<note>(?-u:\s)+(?:note|n\.|notes|Part|part|Section|§))?(?:,?(?-u:\s)*at(?-u:\s)+(?P<pin>{PIN}))?"
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

/// A statute's section: `1332(a)`, `1910.1000`, `2-1001`, `5/2-1001`, `1983-1985`.
const SECTION: &str = r"[0-9]+[A-Za-z0-9.:/-]*(?:\([A-Za-z0-9]+\))*(?:(?-u:\s)*[-–](?-u:\s)*[0-9]+[A-Za-z0-9.]*(?:\([A-Za-z0-9]+\))*)?";

/// Statutes, regulations and court rules: a run of capitalised words (the law's name, with
/// whatever words precede it), an optional title number before it and a title, chapter,
/// article or part after it, then the section. The pattern is deliberately small — a few
/// hundred names in one alternation would cost the evidence pass dearly — and the name is then
/// looked up among the catalogue's laws word by word ([`find_law`]).
static STATUTE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        concat!(
            r"(?:(?P<title>[0-9]{{1,4}}[A-Z]?)(?-u:\s)+)?",
            r"(?P<code>(?:(?:[A-Z][A-Za-z'’.&-]*|&),?(?-u:\s)*){{1,10}})",
            r"(?:(?P<sub>tit|ch|c|art|arts|pt|part|r|subch|div)\.?(?-u:\s)*(?P<subnum>[0-9]+[A-Za-z]?(?:[.-][0-9]+)*)",
            r"(?:,?(?-u:\s)*(?P<marker>§§?|sec(?:tion)?s?\.?)?(?-u:\s)*(?P<num>{section}))?",
            r"|(?P<marker2>§§?|sec(?:tion)?s?\.?|No\.)?(?-u:\s)*(?P<num2>{section}))"
        ),
        section = SECTION
    ))
    .expect("statute pattern compiles")
});

/// Words after a law's name that introduce its section.
fn is_marker_word(w: &str) -> bool {
    matches!(
        w.trim_end_matches([',', '.']).to_ascii_lowercase().as_str(),
        "section" | "sections" | "sec" | "secs" | "no"
    )
}

/// A law found among the words before a section: the words it spans, its key and forms, and
/// whether it was named by its subject (`Cal. Bus. & Prof. Code`).
struct FoundLaw {
    first: usize,
    key: String,
    forms: Vec<LawForm>,
    by_subject: bool,
}

/// The longest run of `words` that names a law and is followed only by words such as
/// `Section`: a catalogue spelling, or a code named by its subject, word by word.
fn find_law(words: &[&str]) -> Option<FoundLaw> {
    let c = &*CATALOGUE;
    let mut end = words.len();
    while end > 0 && is_marker_word(words[end - 1]) {
        end -= 1;
    }
    let squashed: Vec<String> = words[..end]
        .iter()
        .map(|w| super::catalogue::squash(w))
        .collect();
    for first in 0..end {
        let written = words[first..end].join(" ");
        if let Some(l) = c.law(&written) {
            return Some(FoundLaw {
                first,
                key: l.key.clone(),
                forms: l.forms.clone(),
                by_subject: false,
            });
        }
        let run = &squashed[first..end];
        for t in &c.templates {
            let before: Vec<String> = t
                .before
                .split_whitespace()
                .map(super::catalogue::squash)
                .collect();
            let after: Vec<String> = t
                .after
                .split_whitespace()
                .map(super::catalogue::squash)
                .collect();
            // The template's words, as whole words, around at least one subject word.
            let joined_before = before.concat();
            let joined_after = after.concat();
            let mut b = 0;
            let mut acc = String::new();
            while b < run.len() && acc.len() < joined_before.len() {
                acc.push_str(&run[b]);
                b += 1;
            }
            if acc != joined_before {
                continue;
            }
            let mut a = run.len();
            let mut acc_after = String::new();
            while a > b && acc_after.len() < joined_after.len() {
                a -= 1;
                acc_after.insert_str(0, &run[a]);
            }
            if acc_after != joined_after || a <= b {
                continue;
            }
            if run[b..a].iter().all(|w| w.is_empty()) {
                continue;
            }
            return Some(FoundLaw {
                first,
                key: law_key(&written),
                forms: c.law_at(t.law).forms.clone(),
                by_subject: true,
            });
        }
    }
    None
}

fn valid_year(y: u16) -> bool {
    (1600..=2099).contains(&y)
}

const MONTHS: &str = "January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec";

static DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        concat!(
            r"(?P<t>this(?-u:\s)+(?P<td>[0-9]{{1,2}})(?:st|nd|rd|th)?(?-u:\s)+day(?-u:\s)+of(?-u:\s)+(?P<tm>{m}),?(?-u:\s)+(?P<ty>[0-9]{{4}}))",
            r"|(?P<a>(?P<am>{m})\.?(?-u:\s)+(?P<ad>[0-9]{{1,2}})(?:st|nd|rd|th)?,?(?-u:\s)+(?P<ay>[0-9]{{4}}))",
            r"|(?P<b>(?P<bd>[0-9]{{1,2}})(?:st|nd|rd|th)?(?-u:\s)+(?P<bm>{m})\.?,?(?-u:\s)+(?P<by>[0-9]{{4}}))",
            r"|(?P<c>(?P<cm>[0-9]{{1,2}})/(?P<cd>[0-9]{{1,2}})/(?P<cy>[0-9]{{4}}|[0-9]{{2}}))",
            r"|(?P<i>(?P<iy>[0-9]{{4}})-(?P<im>[0-9]{{2}})-(?P<id>[0-9]{{2}}))"
        ),
        m = MONTHS
    ))
    .expect("date pattern compiles")
});

static AMOUNT: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?:\$|USD|US\$)(?-u:\s)?(?P<num>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]{1,2})?|[0-9]+(?:\.[0-9]{1,2})?)(?:(?-u:\s)(?P<scale>million|billion|thousand))?",
        r"|(?P<pct>[0-9]+(?:\.[0-9]+)?)(?-u:\s)?(?:%|percent(?-u:\b))"
    ))
    .expect("amount pattern compiles")
});

/// Anything shaped like a Bates number: a capitalised prefix and at least three digits.
static BATES_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?P<p>[A-Z][A-Z0-9]{1,11}?)[ _-]?(?P<n>[0-9]{3,10})").expect("Bates pattern compiles")
});

static BATES_RANGE_SEP: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?-u:\s)*(?:[-–—]|to|through|thru)(?-u:\s)*").expect("range pattern compiles")
});

const US_STATES: &[&str] = &[
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY",
];

fn month_number(m: &str) -> Option<u32> {
    let m = m.to_ascii_lowercase();
    let names = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    names
        .iter()
        .position(|n| m.starts_with(n))
        .map(|i| i as u32 + 1)
}

pub fn valid_date(y: i32, m: u32, d: u32) -> bool {
    (1600..=2200).contains(&y) && crate::calendar::is_valid(y as i64, m, d)
}

fn preceded_by_digit_or_letter(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric())
}

fn followed_by_digit(text: &str, at: usize) -> bool {
    text[at..]
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
}

fn pin_of(s: Option<regex::Match>) -> Option<String> {
    s.map(|m| {
        m.as_str()
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| if c == '–' || c == '—' { '-' } else { c })
            .collect()
    })
}

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
            Cite::Unknown { abbreviation } => Key::Unrecognized(format!(
                "`{abbreviation}` is not a reporter, journal or code in lexrun's catalogue ({}); \
                 check the citation, or accept the abbreviation with `allow reporter \"{abbreviation}\"`",
                CATALOGUE.source
            )),
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
        let earlier = fulls
            .iter()
            .rev()
            .find(|f| f.start < m.start() && f.name.to_lowercase().contains(&lower));
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
        return String::new();
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

/// Statutes, regulations and rules, with `Id.` and `Ibid.` resolved to whatever citation
/// (case or statute) precedes them.
pub fn statutes_and_ids(text: &str, cases: &[Claim]) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    let mut from = 0;
    while let Some(c) = STATUTE.captures_at(text, from) {
        let m = c.get(0).expect("match");
        let code = c.name("code").expect("code");
        // Where to look next if this is no statute: after the match's first word, so that a
        // title number that an earlier capitalised word hid (`Under 28 U.S.C.`) is seen.
        let retry = {
            let first = code.as_str().split_whitespace().next().unwrap_or("");
            let at = c
                .name("title")
                .map_or(code.start() + first.len(), |t| t.end());
            at.max(from + 1).min(text.len())
        };
        let mut at_boundary = retry;
        while !text.is_char_boundary(at_boundary) {
            at_boundary += 1;
        }
        from = at_boundary;
        let marker = c.name("marker").or_else(|| c.name("marker2"));
        let num_m = c.name("num").or_else(|| c.name("num2"));
        // The words of the name, with their offsets.
        let mut words: Vec<(usize, &str)> = Vec::new();
        let mut at = code.start();
        for w in code.as_str().split_whitespace() {
            let off = text[at..].find(w).map_or(at, |i| at + i);
            words.push((off, w));
            at = off + w.len();
        }
        let plain: Vec<&str> = words.iter().map(|(_, w)| *w).collect();
        let Some(found) = find_law(&plain) else {
            continue;
        };
        from = m.end().max(from);
        let marker_words = plain.iter().rev().take_while(|w| is_marker_word(w)).count() > 0;
        // A code named by its subject is a statute only with its section sign: the subject
        // words are free, the sign is what marks them as a code's name.
        if found.by_subject && marker.is_none() && !marker_words && c.name("sub").is_none() {
            continue;
        }
        let name_start = words[found.first].0;
        // A title number belongs to laws cited that way, and only right before the name.
        let takes_title = found
            .forms
            .iter()
            .any(|f| matches!(f, LawForm::Title | LawForm::Act | LawForm::Volume));
        let (title, start) = match c.name("title") {
            Some(t) if takes_title && found.first == 0 => (t.as_str().to_string(), t.start()),
            _ => (String::new(), name_start),
        };
        if preceded_by_digit_or_letter(text, start) {
            continue;
        }
        let sub = c
            .name("sub")
            .map(|s| format!("{}{}", sub_word(s.as_str()), &c["subnum"]));
        let num = num_m.map(|n| section(n.as_str()));
        let Some(section_key) = num.clone().or_else(|| sub.clone()) else {
            continue;
        };
        let law = &found.key;
        let code_key = match (&sub, &num) {
            (Some(s), Some(_)) => format!("{title}{law}{s}"),
            _ => format!("{title}{law}"),
        };
        // A sentence's full stop after the section is not part of the citation.
        let end = m.start()
            + m.as_str()
                .trim_end_matches(['.', ',', ';', ':', ' ', '\n'])
                .len();
        out.push(Claim::new(
            Kind::Statute,
            text,
            start,
            end.max(code.end()),
            Key::Statute {
                code: code_key,
                section: section_key,
            },
        ));
    }
    // `Id.` repeats the citation just before it, whichever kind.
    let mut ids = Vec::new();
    for c in ID_CITE.captures_iter(text) {
        let id = c.name("id").expect("id group");
        let end = c.get(0).expect("match").end();
        let prev = cases
            .iter()
            .chain(out.iter())
            .filter(|x| {
                x.end <= id.start() && !matches!(x.key, Key::Unresolved(_) | Key::Unrecognized(_))
            })
            .max_by_key(|x| x.end);
        let (kind, key) = match prev {
            Some(p) => (p.kind, p.key.with_pin(pin_of(c.name("pin")))),
            None => (
                Kind::Citation,
                Key::Unresolved(format!("`{}` with no citation before it", id.as_str())),
            ),
        };
        ids.push(Claim::new(kind, text, id.start(), end, key));
    }
    out.extend(ids);
    out.sort_by_key(|c| c.start);
    out
}

/// `tit.` → `tit`, `c.`/`ch.` → `ch`, `part` → `pt`, `arts.` → `art`.
fn sub_word(s: &str) -> &'static str {
    match s.trim_end_matches('.').to_ascii_lowercase().as_str() {
        "tit" => "tit",
        "ch" | "c" => "ch",
        "art" | "arts" => "art",
        "pt" | "part" => "pt",
        "r" => "r",
        "subch" => "subch",
        _ => "div",
    }
}

/// `1332(a)` → `1332(a)`; `1983 - 1985` → `1983-1985`; trailing punctuation dropped.
fn section(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '–' { '-' } else { c })
        .collect::<String>()
        .trim_end_matches(['.', ',', ';', ':', '-'])
        .to_string()
}

/// Dates in every common form, as calendar dates.
pub fn dates(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    for c in DATE.captures_iter(text) {
        let m = c.get(0).expect("match");
        if preceded_by_digit_or_letter(text, m.start()) && c.name("t").is_none()
            || followed_by_digit(text, m.end())
        {
            continue;
        }
        let (y, mo, d) = if c.name("t").is_some() {
            (
                c["ty"].parse().ok(),
                month_number(&c["tm"]),
                c["td"].parse().ok(),
            )
        } else if c.name("a").is_some() {
            (
                c["ay"].parse().ok(),
                month_number(&c["am"]),
                c["ad"].parse().ok(),
            )
        } else if c.name("b").is_some() {
            (
                c["by"].parse().ok(),
                month_number(&c["bm"]),
                c["bd"].parse().ok(),
            )
        } else if c.name("c").is_some() {
            let y: Option<i32> = c["cy"]
                .parse()
                .ok()
                .map(|y: i32| if y < 100 { 2000 + y } else { y });
            (y, c["cm"].parse().ok(), c["cd"].parse().ok())
        } else {
            (
                c["iy"].parse().ok(),
                c["im"].parse().ok(),
                c["id"].parse().ok(),
            )
        };
        let (Some(y), Some(mo), Some(d)) = (y, mo, d) else {
            continue;
        };
        if !valid_date(y, mo, d) {
            continue;
        }
        out.push(Claim::new(
            Kind::Date,
            text,
            m.start(),
            m.end(),
            Key::Date {
                year: y,
                month: mo,
                day: d,
            },
        ));
    }
    out
}

/// Money amounts in cents and percentages in thousandths of a percent.
pub fn amounts(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    for c in AMOUNT.captures_iter(text) {
        let m = c.get(0).expect("match");
        if let Some(p) = c.name("pct") {
            if preceded_by_digit_or_letter(text, m.start()) {
                continue;
            }
            let v: f64 = p.as_str().parse().unwrap_or(0.0);
            out.push(Claim::new(
                Kind::Amount,
                text,
                m.start(),
                m.end(),
                Key::Percent {
                    thousandths: (v * 1000.0).round() as i64,
                },
            ));
            continue;
        }
        let num: f64 = c["num"].replace(',', "").parse().unwrap_or(0.0);
        let scale = match c.name("scale").map(|s| s.as_str()) {
            Some("thousand") => 1e3,
            Some("million") => 1e6,
            Some("billion") => 1e9,
            _ => 1.0,
        };
        let cents = (num * scale * 100.0).round() as i64;
        out.push(Claim::new(
            Kind::Amount,
            text,
            m.start(),
            m.end(),
            Key::Money { cents },
        ));
    }
    out
}

/// Bates numbers and ranges with a declared prefix, and anything shaped like a Bates number
/// whose prefix is not declared (a model's invention, e.g. `RTX 3060`).
pub fn bates(text: &str, prefixes: &[String], skip: &[(usize, usize)]) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    let mut taken_until = 0;
    for c in BATES_LIKE.captures_iter(text) {
        let m = c.get(0).expect("match");
        if m.start() < taken_until
            || preceded_by_digit_or_letter(text, m.start())
            || text[m.end()..]
                .chars()
                .next()
                .is_some_and(|ch| ch.is_alphanumeric())
            || skip.iter().any(|(s, e)| m.start() < *e && *s < m.end())
        {
            continue;
        }
        let (prefix, digits) = (&c["p"], &c["n"]);
        let declared = prefixes.iter().find(|p| p.eq_ignore_ascii_case(prefix));
        let Some(declared) = declared else {
            if looks_incidental(prefix, digits, &text[m.end()..]) {
                continue;
            }
            out.push(Claim::new(
                Kind::Bates,
                text,
                m.start(),
                m.end(),
                Key::Unresolved(format!("`{prefix}` is not a Bates prefix of these sources")),
            ));
            continue;
        };
        let from: u64 = digits.parse().unwrap_or(0);
        let mut end = m.end();
        let mut key = Key::Bates {
            prefix: declared.clone(),
            number: from,
        };
        // A range: `SMITH000123–SMITH000130`, `… to …`.
        if let Some(sep) = BATES_RANGE_SEP.find(&text[m.end()..]) {
            let rest_at = m.end() + sep.end();
            if let Some(c2) = BATES_LIKE.captures(&text[rest_at..]) {
                let m2 = c2.get(0).expect("match");
                if m2.start() == 0 && c2["p"].eq_ignore_ascii_case(declared) {
                    let to: u64 = c2["n"].parse().unwrap_or(0);
                    end = rest_at + m2.end();
                    key = Key::BatesRange {
                        prefix: declared.clone(),
                        from,
                        to,
                    };
                }
            }
        }
        taken_until = end;
        out.push(Claim::new(Kind::Bates, text, m.start(), end, key));
    }
    out
}

/// Prefix-and-number pairs that are not Bates numbers: ZIP codes after a state, years,
/// everyday units and model numbers of documents.
fn looks_incidental(prefix: &str, digits: &str, after: &str) -> bool {
    let zip = US_STATES.contains(&prefix) && (digits.len() == 5 || after.starts_with('-'));
    let year = digits.len() == 4
        && (1900..=2099).contains(&digits.parse::<u32>().unwrap_or(0))
        && prefix.len() <= 3;
    let common = matches!(
        prefix,
        "ISO" | "ANSI" | "RFC" | "PO" | "ZIP" | "TX" | "ECF" | "DKT" | "NO"
    );
    zip || year || common
}

static EXHIBIT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:^|[^A-Za-z])(?P<cite>(?:Exhibit|Exh\.|Ex\.)(?-u:\s)+(?P<label>[A-Z]{1,2}|[0-9]{1,3})(?:,?(?-u:\s)+at(?-u:\s)+(?:pp?\.(?-u:\s)*)?(?P<from>[0-9]{1,4})(?:(?-u:\s)*[-–—](?-u:\s)*(?P<to>[0-9]{1,4}))?)?)(?:[^A-Za-z0-9]|$)")
        .expect("exhibit pattern compiles")
});

/// Cites to exhibits: `Ex. B`, `Exhibit 3`, `Ex. B at 2`, `Exh. C, at 4–5`.
pub fn exhibits(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(c) = EXHIBIT.captures_at(text, at) {
        let m = c.name("cite").expect("cite group");
        at = m.end();
        let from: Option<u32> = c.name("from").and_then(|f| f.as_str().parse().ok());
        let to: Option<u32> = c.name("to").and_then(|t| t.as_str().parse().ok());
        let pages = from.map(|f| (f, to.unwrap_or(f)));
        out.push(Claim::new(
            Kind::Bates,
            text,
            m.start(),
            m.end(),
            Key::Exhibit {
                label: c["label"].to_string(),
                pages,
            },
        ));
    }
    out
}

/// The longest quotation looked for, in characters.
const QUOTE_MAX: usize = 4000;

/// Spans `(start, end)` of quotations between `open` and `close`: each opening mark pairs
/// with the nearest following mark if that is a closing one, at most [`QUOTE_MAX`] characters
/// on; an opening mark followed by another opening mark starts nothing. Scanned by hand: as a
/// pattern, the bounded repetition costs tens of milliseconds and megabytes to compile.
fn delimited(text: &str, open: char, close: char) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find(open).map(|i| pos + i) {
        let inner = i + open.len_utf8();
        let Some(j) = text[inner..].find([open, close]).map(|j| inner + j) else {
            break;
        };
        let body = &text[inner..j];
        let fits = body.len() <= QUOTE_MAX || body.chars().count() <= QUOTE_MAX;
        if text[j..].starts_with(close) && !body.is_empty() && fits {
            out.push((i, j + close.len_utf8()));
            pos = j + close.len_utf8();
        } else {
            pos = inner;
        }
    }
    out
}

/// Quotations of two words or more: straight and curly quotes, and Markdown block quotes.
pub fn quotes(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut push = |start: usize, end: usize, inner: &str| {
        // A blank line inside is two paragraphs, not one quotation.
        if inner.split_whitespace().count() < 2 || inner.contains("\n\n") {
            return;
        }
        out.push(Claim::new(
            Kind::Quote,
            text,
            start,
            end,
            Key::Quote {
                text: inner.to_string(),
            },
        ));
    };
    for (open, close) in [('“', '”'), ('"', '"')] {
        for (start, end) in delimited(text, open, close) {
            push(
                start,
                end,
                &text[start + open.len_utf8()..end - close.len_utf8()],
            );
        }
    }
    // Block quotes: consecutive lines starting with `>`.
    let mut block: Option<(usize, usize, String)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(body) = trimmed.strip_prefix('>') {
            let b = block.get_or_insert((offset, offset, String::new()));
            b.1 = offset + line.trim_end().len();
            b.2.push_str(body.trim());
            b.2.push(' ');
        } else if let Some((s, e, q)) = block.take() {
            push(s, e, q.trim());
        }
        offset += line.len();
    }
    if let Some((s, e, q)) = block.take() {
        push(s, e, q.trim());
    }
    out.sort_by_key(|c| c.start);
    // A quotation inside a block quote is checked as part of the block.
    let blocks: Vec<(usize, usize)> = out
        .iter()
        .filter(|c| {
            text[c.start..].starts_with('>') || text[c.start..].trim_start().starts_with('>')
        })
        .map(|c| (c.start, c.end))
        .collect();
    out.retain(|c| {
        !blocks
            .iter()
            .any(|(s, e)| (c.start, c.end) != (*s, *e) && c.start >= *s && c.end <= *e)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: Vec<Claim>) -> Vec<String> {
        v.into_iter().map(|c| format!("{}", c.key)).collect()
    }

    #[test]
    fn full_citations_in_all_spacings() {
        let t = "See Bush v. Gore, 531 U.S. 98, 99-100 (2000); Doe v. Roe, 123 F. 3d 456 (9th Cir. 1999); 12 F.Supp.2d 34; 7 F. App’x 9.";
        assert_eq!(
            keys(citations(t, &Allowed::default())),
            vec![
                "531 us 98, 99-100 (2000)",
                "123 f3d 456 (1999)",
                "12 fsupp2d 34",
                "7 fappx 9"
            ]
        );
    }

    #[test]
    fn citation_split_across_lines() {
        let t = "Anderson v. Liberty Lobby, Inc., 477\nU.S. 242, 248\n(1986).";
        assert_eq!(
            keys(citations(t, &Allowed::default())),
            vec!["477 us 242, 248 (1986)"]
        );
    }

    #[test]
    fn short_forms_resolve_to_their_full_citation() {
        let t = "Celotex Corp. v. Catrett, 477 U.S. 317 (1986). Later: 477 U.S. at 322. Again, Celotex, supra, at 323. Id. at 324.";
        let c = citations(t, &Allowed::default());
        let s = statutes_and_ids(t, &c);
        assert_eq!(
            keys(c),
            vec![
                "477 us 317 (1986)",
                "477 us 317, 322 (1986)",
                "477 us 317, 323 (1986)"
            ]
        );
        assert_eq!(keys(s), vec!["477 us 317, 324 (1986)"]);
        assert!(matches!(
            citations("999 U.S. at 5", &Allowed::default())[0].key,
            Key::Unresolved(_)
        ));
        assert!(matches!(
            citations("Nobody, supra, at 5", &Allowed::default())[0].key,
            Key::Unresolved(_)
        ));
    }

    #[test]
    fn statutes_rules_and_id_after_a_statute() {
        let t = "Under 28 U.S.C. § 1332(a) and 42 U.S.C. §§ 1983-1985, 29 C.F.R. § 1910.1000, Cal. Civ. Code § 1942.4, Fed. R. Civ. P. 12(b)(6) and Fed. R. Evid. 803(6). Id.";
        let s = statutes_and_ids(t, &[]);
        assert_eq!(
            keys(s),
            vec![
                "28usc § 1332(a)",
                "42usc § 1983-1985",
                "29cfr § 1910.1000",
                "calcivcode § 1942.4",
                "fedrcivp § 12(b)(6)",
                "fedrevid § 803(6)",
                "fedrevid § 803(6)",
            ]
        );
    }

    #[test]
    fn every_date_form_and_not_citation_years() {
        let t = "January 5, 2024; Jan. 5, 2024; Sept. 5, 2024; 5 January 2024; 01/05/2024; 2024-01-05; this 5th day of January, 2024. Bush v. Gore, 531 U.S. 98 (2000). February 30, 2024.";
        let d = keys(dates(t));
        assert_eq!(
            d,
            vec![
                "2024-01-05",
                "2024-01-05",
                "2024-09-05",
                "2024-01-05",
                "2024-01-05",
                "2024-01-05",
                "2024-01-05"
            ]
        );
    }

    #[test]
    fn bates_numbers_ranges_and_inventions() {
        let p = vec!["SMITH".to_string()];
        let t = "See SMITH000123–SMITH000130, SMITH 000140 and RTX 3060. Oakland, CA 94612.";
        let b = bates(t, &p, &[]);
        let k = keys(b);
        assert_eq!(k[0], "SMITH000123–SMITH000130");
        assert_eq!(k[1], "SMITH000140");
        assert!(k[2].contains("`RTX` is not a Bates prefix"), "{k:?}");
        assert_eq!(k.len(), 3, "the ZIP code is not a Bates number: {k:?}");
    }

    #[test]
    fn amounts_and_percentages() {
        let t = "$12,500.00, USD 12,500, $ 3,875, 12.5%, $1.2 million and 8 percent";
        assert_eq!(
            keys(amounts(t)),
            vec![
                "$12500.00",
                "$12500.00",
                "$3875.00",
                "12.5%",
                "$1200000.00",
                "8%"
            ]
        );
    }

    #[test]
    fn quotations_straight_curly_and_block() {
        let t = "He wrote “Landlord shall repair” and \"one\" and \"two words\".\n\n> Block quoted\n> text here.\n";
        let q: Vec<String> = quotes(t)
            .into_iter()
            .map(|c| format!("{}", c.key))
            .collect();
        assert_eq!(
            q,
            vec![
                "Landlord shall repair",
                "two words",
                "Block quoted text here."
            ]
        );
    }

    #[test]
    fn quotation_marks_pair_as_written() {
        // An opening mark followed by another opening mark starts nothing; an unclosed
        // quotation is no claim.
        let t = "“stray “two words” then \"three more words\" and “never closed";
        let spans: Vec<&str> = quotes(t).iter().map(|c| &t[c.start..c.end]).collect();
        assert_eq!(spans, vec!["“two words”", "\"three more words\""]);
        let long = format!("\"{} end\"", "word ".repeat(900));
        assert!(
            quotes(&long).is_empty(),
            "over 4,000 characters is no quotation"
        );
        let fits = format!("\"{} end\"", "word ".repeat(700));
        assert_eq!(quotes(&fits).len(), 1);
    }
}
