//! Editions that reporters-db defines by a pattern rather than a spelling before a page: the
//! public-domain (neutral) citations written as one word (`2006-Ohio-2095`, `2007-NMCERT-008`),
//! the Tax Court's memorandum and summary opinions (`T.C. Memo. 2007-340`, `T.C. Summary
//! Opinion 2019-233`), and loose-leaf services cited by paragraph (`70-1 USTC par. 9373`,
//! `Fed. Sec. L. Rep. (CCH) ¶ 95,123`).
//!
//! Each is read into the same [`Cite::Full`] as a reporter citation: the year (or the
//! loose-leaf volume) as the volume, the decision or paragraph number as the page, under a
//! key of its own, so a source that prints the same citation supports it.

use std::sync::LazyLock;

use regex::Regex;

use super::found::{Cite, Found, Reporter};
use super::parts::{pin_after_comma, words_after, year_parenthetical};

/// The courts whose neutral citations are one dashed word: `YEAR-COURT-NUMBER`.
const DASHED_COURTS: &[(&str, &str)] = &[
    ("Ohio", "ohioneutral"),
    ("NMSC", "nmsc"),
    ("NMCA", "nmca"),
    ("NMCERT", "nmcert"),
    ("NMFS", "nmfs"),
];

/// `2006-Ohio-2095` at the digits `s..e` (the year), or a loose-leaf volume by year and
/// half-year (`70-1 USTC par. 9373`).
pub(super) fn dashed_at(text: &str, s: usize, e: usize) -> Option<Found> {
    if !text[e..].starts_with('-') {
        return None;
    }
    let b = text.as_bytes();
    if matches!(e - s, 2 | 4)
        && b.get(e + 1).is_some_and(u8::is_ascii_digit)
        && b.get(e + 2).is_some_and(u8::is_ascii_whitespace)
    {
        let volume: u32 = text[s..e].parse::<u32>().ok()? * 10 + u32::from(b[e + 1] - b'0');
        let (words, _) = words_after(text, e + 2);
        return loose_leaf(text, s, volume, &words);
    }
    if e - s != 4 {
        return None;
    }
    let year: u16 = text[s..e].parse().ok()?;
    let rest = &text[e + 1..];
    let (court, key) = DASHED_COURTS
        .iter()
        .find(|(c, _)| rest.starts_with(c) && rest[c.len()..].starts_with('-'))?;
    let num_at = e + 1 + court.len() + 1;
    let digits = b[num_at..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if !(1..=7).contains(&digits)
        || b.get(num_at + digits)
            .is_some_and(u8::is_ascii_alphanumeric)
    {
        return None;
    }
    let page: u32 = text[num_at..num_at + digits].parse().ok()?;
    let mut end = num_at + digits;
    let mut pin = None;
    if text[end..].starts_with(',') {
        if let Some((p, pe)) = pin_after_comma(text, end + 1) {
            pin = Some(p);
            end = pe;
        }
    }
    Some(Found {
        start: s,
        end,
        cite: Cite::Full {
            volume: u32::from(year),
            reporter: Reporter::Allowed((*key).to_string()),
            page: Some(page),
            pin,
            year: Some(year),
            suffix: None,
        },
    })
}

/// The Tax Court's memorandum and summary opinions, whose series name comes before the year.
static TAX_COURT: LazyLock<Regex> = LazyLock::new(|| {
    crate::extract::re(
        r"T\.(?-u:\s)?C\.(?-u:\s)+(?:(?P<memo>Memo\.)|(?P<summ>Summ(?:ary|\.)(?-u:\s)+Op(?:inion|\.)))(?-u:\s)+(?P<year>(?:19|20)[0-9]{2})-(?P<num>[0-9]{1,4})",
    )
    .expect("Tax Court pattern compiles")
});

/// Citations that begin with letters, not a volume.
pub(super) fn lettered(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    if !text.contains("T.") {
        return out;
    }
    for c in TAX_COURT.captures_iter(text) {
        let m = c.get(0).expect("match");
        if text[m.end()..]
            .chars()
            .next()
            .is_some_and(|ch| ch.is_ascii_alphanumeric())
        {
            continue;
        }
        let (Ok(year), Ok(page)) = (c["year"].parse::<u16>(), c["num"].parse::<u32>()) else {
            continue;
        };
        let key = if c.name("memo").is_some() {
            "tcmemo"
        } else {
            "tcsummop"
        };
        let mut end = m.end();
        let mut pin = None;
        if text[end..].starts_with(',') {
            if let Some((p, pe)) = pin_after_comma(text, end + 1) {
                pin = Some(p);
                end = pe;
            }
        }
        out.push(Found {
            start: m.start(),
            end,
            cite: Cite::Full {
                volume: u32::from(year),
                reporter: Reporter::Allowed(key.to_string()),
                page: Some(page),
                pin,
                year: Some(year),
                suffix: None,
            },
        });
    }
    out
}

/// Whether words name a loose-leaf service cited by paragraph: the United States Tax Cases,
/// or any service its publisher marks (`(CCH)`, `(RIA)`, `(P-H)`, `(BNA)`).
fn loose_leaf_name(words: &str) -> bool {
    let squashed = crate::catalogue::squash(words);
    matches!(
        squashed.as_str(),
        "ustc" | "ustaxcas" | "aftr" | "aftr2d" | "aftr3d"
    ) || ["(CCH)", "(RIA)", "(P-H)", "(BNA)"]
        .iter()
        .any(|p| words.ends_with(p))
}

/// `70-1 USTC par. 9373`, `2004-2 U.S.T.C. ¶ 50,123`, `Fed. Sec. L. Rep. (CCH) ¶ 95,123`:
/// the volume (`70-1`: the year and the half-year volume), the service, `par.` or `¶`, the
/// paragraph.
pub(super) fn loose_leaf(
    text: &str,
    start: usize,
    volume: u32,
    words: &[(usize, usize)],
) -> Option<Found> {
    let word = |i: usize| &text[words[i].0..words[i].1];
    let k = (1..words.len().min(8)).find(|&k| matches!(word(k), "par." | "¶" | "¶¶" | "para."))?;
    let name = text[words[0].0..words[k - 1].1].trim_end_matches(',');
    if !loose_leaf_name(name) {
        return None;
    }
    let para_word = words.get(k + 1).map(|&(a, b)| &text[a..b])?;
    // A paragraph number may hold a thousands comma (`50,123`).
    let digits: String = para_word
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .collect::<String>()
        .trim_end_matches(',')
        .to_string();
    let page: u32 = digits.replace(',', "").parse().ok()?;
    let mut end = words[k + 1].0 + digits.len();
    let mut year = None;
    if let Some((y, e)) = year_parenthetical(text, end) {
        year = Some(y);
        end = e;
    }
    Some(Found {
        start,
        end,
        cite: Cite::Full {
            volume,
            reporter: Reporter::Allowed(crate::catalogue::squash(name)),
            page: Some(page),
            pin: None,
            year,
            suffix: None,
        },
    })
}
