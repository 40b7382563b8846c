//! Statutes, regulations and court rules, named by the catalogue's laws; `Id.` after any
//! citation.

use std::sync::LazyLock;

use regex::Regex;

use super::pattern::{pin_of, preceded_by_digit_or_letter, re, ID_CITE};
use crate::catalogue::{law_key, LawForm, CATALOGUE};
use crate::claim::{Claim, Key, Kind};

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

/// A section after a part named in capitals: `, § 261.4`.
static PART_SECTION: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"^,?(?-u:\s)*(?:§§?|[Ss]ec(?:tion)?s?\.?)(?-u:\s)*(?P<num>{SECTION})"
    ))
    .expect("part section pattern compiles")
});

/// An edition year after a code's name (`26 U.S. Code, 1940 Ed., § 811`): the section follows it.
static EDITION: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"^(?-u:\s)*(?:[Ee]d\.|[Ee]dition)(?:,?(?-u:\s)*(?:§§?|[Ss]ec(?:tion)?s?\.?)(?-u:\s)*(?P<num>{SECTION}))?"
    ))
    .expect("edition pattern compiles")
});

/// Words after a law's name that introduce its section.
fn is_marker_word(w: &str) -> bool {
    matches!(
        w.trim_end_matches([',', '.']).to_ascii_lowercase().as_str(),
        "section" | "sections" | "sec" | "secs" | "no"
    )
}

/// Words after a law's name that name a part of it before its number (`40 C.F.R. Part 261`,
/// `Cal. Code Regs. Title 22`): as `sub_word` keys them.
fn is_part_word(w: &str) -> bool {
    matches!(
        w.trim_end_matches([',', '.']).to_ascii_lowercase().as_str(),
        "part"
            | "pt"
            | "title"
            | "tit"
            | "chapter"
            | "ch"
            | "article"
            | "art"
            | "subchapter"
            | "subch"
    )
}

/// A law found among the words before a section: the words it spans, its key and forms, and
/// whether it was named by its subject (`Cal. Bus. & Prof. Code`).
struct FoundLaw {
    first: usize,
    /// A part named after the law in capitals (`Part`, `Title`), before the number.
    part: Option<String>,
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
    let part = (end > 1 && is_part_word(words[end - 1])).then(|| {
        end -= 1;
        words[end].to_string()
    });
    let squashed: Vec<String> = words[..end]
        .iter()
        .map(|w| crate::catalogue::squash(w))
        .collect();
    for first in 0..end {
        // Most capitalised words before a number begin no law's name: skip them at once.
        // A name printed without spaces (`Fed.R.Civ.P.`) begins as its first word would.
        let piece = words[first].split('.').next().unwrap_or("");
        if !c.may_begin_law(&squashed[first]) && !c.may_begin_law(&crate::catalogue::squash(piece))
        {
            continue;
        }
        let written = words[first..end].join(" ");
        if let Some(l) = c.law(&written) {
            return Some(FoundLaw {
                first,
                part,
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
                .map(crate::catalogue::squash)
                .collect();
            let after: Vec<String> = t
                .after
                .split_whitespace()
                .map(crate::catalogue::squash)
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
                part,
                key: law_key(&written),
                forms: c.law_at(t.law).forms.clone(),
                by_subject: true,
            });
        }
    }
    None
}

/// Statutes, regulations and rules, with `Id.` and `Ibid.` resolved to whatever citation
/// (case or statute) precedes them.
pub fn statutes_and_ids(text: &str, cases: &[Claim]) -> Vec<Claim> {
    let mut out = statutes(text);
    let ids = ids(text, cases, &out);
    out.extend(ids);
    out.sort_by_key(|c| c.start);
    out
}

/// Statutes, regulations and rules, in text order.
fn statutes(text: &str) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    let mut from = 0;
    while let Some(c) = STATUTE.captures_at(text, from) {
        let m = c.get(0).expect("match");
        let code = c.name("code").expect("code");
        from = next_from(text, &c, from);
        let marker = c.name("marker").or_else(|| c.name("marker2"));
        let num_m = c.name("num").or_else(|| c.name("num2"));
        let words = name_words(text, code);
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
        let mut sub = c
            .name("sub")
            .map(|s| format!("{}{}", sub_word(s.as_str()), &c["subnum"]));
        let mut num = num_m.map(|n| section(n.as_str()));
        let mut end_at = m.end();
        // `40 C.F.R. Part 261` is `40 C.F.R. pt. 261`, and a section may follow it.
        if let (Some(part), None, Some(n)) = (&found.part, &sub, num_m) {
            sub = Some(format!("{}{}", sub_word(part), section(n.as_str())));
            num = None;
            if let Some(after) = PART_SECTION.captures(&text[m.end()..]) {
                num = Some(section(&after["num"]));
                end_at = m.end() + after.get(0).expect("match").end();
            }
            from = end_at.max(from);
        }
        // `26 U.S. Code, 1940 Ed., § 811`: the number before `Ed.` is the edition, not the
        // section; without a section after it, the whole edition is cited and there is no claim.
        if let (None, None, Some(n)) = (marker, &sub, num_m) {
            if let Some(after) = EDITION.captures(&text[n.end()..]) {
                let Some(sec) = after.name("num") else {
                    continue;
                };
                num = Some(section(sec.as_str()));
                end_at = n.end() + sec.end();
                from = end_at.max(from);
            }
        }
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
            + text[m.start()..end_at]
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
    out
}

/// Where to look next if a match is no statute: after the match's first word, so that a
/// title number that an earlier capitalised word hid (`Under 28 U.S.C.`) is seen.
#[inline]
fn next_from(text: &str, c: &regex::Captures, from: usize) -> usize {
    let code = c.name("code").expect("code");
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
    at_boundary
}

/// The words of a law's name, with their offsets.
#[inline]
fn name_words<'t>(text: &'t str, code: regex::Match<'t>) -> Vec<(usize, &'t str)> {
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut at = code.start();
    for w in code.as_str().split_whitespace() {
        let off = text[at..].find(w).map_or(at, |i| at + i);
        words.push((off, w));
        at = off + w.len();
    }
    words
}

/// `Id.` and `Ibid.`: each repeats the citation just before it, whichever kind, among
/// `cases` and `statutes`.
fn ids(text: &str, cases: &[Claim], statutes: &[Claim]) -> Vec<Claim> {
    let mut ids = Vec::new();
    // The citations an `Id.` may repeat, by where they end (stable: of two ending at the same
    // place, the later listed is taken), so each `Id.` finds its own by binary search.
    let mut before: Vec<&Claim> = cases
        .iter()
        .chain(statutes.iter())
        // A citation in a reporter no catalogue knows is repeated too: its `Id.` is as
        // unrecognised as it is, never bound to an authority cited further back.
        .filter(|x| {
            !matches!(x.key, Key::Unresolved(_))
                && (!matches!(x.key, Key::Unrecognized(_)) || x.kind == Kind::Citation)
        })
        .collect();
    before.sort_by_key(|x| x.end);
    for c in ID_CITE.captures_iter(text) {
        let id = c.name("id").expect("id group");
        let end = c.get(0).expect("match").end();
        let prev = before
            .partition_point(|x| x.end <= id.start())
            .checked_sub(1)
            .map(|i| before[i]);
        let para = c.name("para").or_else(|| c.name("lines")).map(|m| {
            m.as_str()
                .split_whitespace()
                .collect::<String>()
                .replace(['–', '—'], "-")
        });
        let (kind, key) = match prev {
            // `Id. ¶ 54` after a statute repeats no statute: statutes have no paragraphs, so it
            // is a record cite whose filing is not named (most likely the complaint, cited in a
            // form not read as a record cite).
            Some(p) if p.kind == Kind::Statute && c.name("para").is_some() => (
                Kind::Record,
                Key::Record {
                    document: String::new(),
                    pin: para.clone().unwrap_or_default(),
                },
            ),
            Some(p) if p.kind == Kind::Record => (
                p.kind,
                p.key.with_pin(para.clone().or(pin_of(c.name("pin")))),
            ),
            Some(p) => (
                p.kind,
                p.key.with_pin(pin_of(c.name("pin")).or(para.clone())),
            ),
            None => (
                Kind::Citation,
                Key::Unresolved(format!("`{}` with no citation before it", id.as_str())),
            ),
        };
        ids.push(Claim::new(kind, text, id.start(), end, key));
    }
    ids
}

/// `tit.` → `tit`, `c.`/`ch.` → `ch`, `part` → `pt`, `arts.` → `art`.
fn sub_word(s: &str) -> &'static str {
    match s.trim_end_matches('.').to_ascii_lowercase().as_str() {
        "tit" | "title" => "tit",
        "ch" | "c" | "chapter" => "ch",
        "art" | "arts" | "article" => "art",
        "pt" | "part" => "pt",
        "r" => "r",
        "subch" | "subchapter" => "subch",
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
