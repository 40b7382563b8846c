//! Finding reporter citations by the catalogue: `VOL REPORTER PAGE[, PIN] [(… YEAR)]` and the
//! short form `VOL REPORTER[,] at PIN`, for every edition and variant spelling reporters-db
//! lists, Westlaw and Lexis cites and law journals included.
//!
//! Scanned by hand rather than by one pattern per spelling: after a volume, the words up to
//! the first page number are the reporter, and they must be a catalogue spelling *as a
//! whole*. A series marker is therefore never read as a page (`190 Wash. App. 2d 3790` is
//! `Wash. App. 2d`, page 3790, never `Wash. App.`, page 2), and where a spelling itself holds
//! a number (`La.App. 1 Cir.`) the longer reading wins. Words shaped like a reporter that the
//! catalogue does not know come back as [`Cite::Unknown`], so the verifier can fail closed.

mod editions;
mod found;
mod parts;
mod shape;

pub use found::{Cite, Found, Reporter};
pub use shape::citation_shaped;

use super::catalogue::{squash, CATALOGUE};
use parts::{pin_after_comma, pin_at, words_after, year_parenthetical};

/// Reporter spellings a workflow accepts beyond the catalogue (`allow reporter "…"`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowed {
    squashed: Vec<String>,
}

impl Allowed {
    pub fn new<S: AsRef<str>>(spellings: &[S]) -> Allowed {
        Allowed {
            squashed: spellings
                .iter()
                .map(|s| squash(s.as_ref()))
                .filter(|s| !s.is_empty())
                .collect(),
        }
    }

    fn has(&self, squashed: &str) -> bool {
        self.squashed.iter().any(|s| s == squashed)
    }

    pub fn is_empty(&self) -> bool {
        self.squashed.is_empty()
    }
}

/// Every citation in `text`, in order.
pub fn scan(text: &str, allowed: &Allowed) -> Vec<Found> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = b[i..].iter().position(u8::is_ascii_digit) {
        let s = i + off;
        let mut e = s;
        while e < b.len() && b[e].is_ascii_digit() {
            e += 1;
        }
        i = e;
        if e - s > 4 || !volume_may_start(text, s) {
            continue;
        }
        if let Some(found) = editions::dashed_at(text, s, e) {
            i = found.end;
            out.push(found);
            continue;
        }
        // Most numbers in prose are followed by punctuation or an ordinary word: a reporter
        // starts with a capital, a bracket, or one of the catalogue's few lower-case spellings.
        let next = b[e..]
            .iter()
            .skip_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
            .copied()
            .next();
        let plausible = e < b.len()
            && b[e].is_ascii_whitespace()
            && next.is_some_and(|c| {
                c.is_ascii_uppercase()
                    || matches!(c, b'(' | b'[')
                    || CATALOGUE.lowercase_starts(c)
                    || !c.is_ascii()
            });
        if !plausible {
            continue;
        }
        let Ok(volume) = text[s..e].parse::<u32>() else {
            continue;
        };
        let (words, broken) = words_after(text, e);
        if words.len() < 2 {
            continue;
        }
        if let Some(found) = read_cite(text, s, volume, &words, &broken, allowed) {
            // A recognised citation is consumed whole; anything else may still hold one.
            if !matches!(found.cite, Cite::Unknown { .. }) {
                i = found.end.max(e);
            }
            out.push(found);
        }
    }
    out.extend(editions::lettered(text));
    out.sort_by_key(|f| f.start);
    out
}

/// A volume starts a citation only after a space, a bracket or a signal's punctuation — not
/// inside a number (`1.5`, `12/3`, `2-3`), an amount or a section.
fn volume_may_start(text: &str, s: usize) -> bool {
    match text[..s].chars().next_back() {
        None => true,
        Some(c) => {
            !(c.is_alphanumeric()
                || matches!(
                    c,
                    '.' | ',' | '-' | '/' | ':' | '$' | '§' | '¶' | '#' | '*' | '–'
                ))
        }
    }
}

/// A page number (with the punctuation that may follow it) or a blank placeholder.
enum PageWord {
    Number(u32, usize),
    Blank(usize),
}

fn page_word(w: &str) -> Option<PageWord> {
    let digits = w.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &w[digits..];
    let trailing_ok = |r: &str| {
        r.chars()
            .all(|c| matches!(c, ',' | ';' | '.' | ':' | ')' | ']'))
    };
    // An unpublished or lettered slip number (`51192(U)`, `134[A]`, `143684-B`) is part of
    // its page; a pin cite written without a space after the comma (`461,472`) follows it.
    let suffix = ["(U)", "[U]", "(A)", "[A]", "-U", "-B"]
        .iter()
        .find(|s| rest.starts_with(**s))
        .map_or(0, |s| s.len());
    let rest = &rest[suffix..];
    let pin_follows = rest.starts_with(',') && rest[1..].starts_with(|c: char| c.is_ascii_digit());
    // Eight digits only for a database's document number (`2012 WL 12873819`), which
    // `read_cite` holds to the databases.
    if (1..=8).contains(&digits) && (trailing_ok(rest) || pin_follows) {
        return w[..digits]
            .parse()
            .ok()
            .map(|n| PageWord::Number(n, digits + suffix));
    }
    let blank = w.bytes().take_while(|c| matches!(c, b'_' | b'-')).count();
    if blank >= 2 && (w.starts_with("__") || blank >= 3) && trailing_ok(&w[blank..]) {
        return Some(PageWord::Blank(blank));
    }
    None
}

fn lookup(spelling: &str, allowed: &Allowed) -> Option<Reporter> {
    let k = squash(spelling.trim_end_matches(','));
    if k.is_empty() {
        return None;
    }
    if let Some(e) = CATALOGUE.edition_written(spelling, &k) {
        return Some(Reporter::Known(e));
    }
    allowed.has(&k).then_some(Reporter::Allowed(k))
}

fn read_cite(
    text: &str,
    start: usize,
    volume: u32,
    words: &[(usize, usize)],
    broken: &[bool],
    allowed: &Allowed,
) -> Option<Found> {
    let word = |i: usize| &text[words[i].0..words[i].1];
    let span = |from: usize, to: usize| &text[words[from].0..words[to - 1].1];
    // A number before a parenthesis is a pin cite or a chapter before its court and year
    // (`771 n.1 (Alaska 1982)`, `Ch. 799 (S.B. 519)`), never a volume: no reporter's name
    // begins with a bracket.
    if word(0).starts_with(['(', '[']) {
        return None;
    }
    if let Some(f) = editions::loose_leaf(text, start, volume, words) {
        return Some(f);
    }
    // The first page number or `at` after at least one word of reporter.
    let k = (1..words.len()).find(|&k| page_word(word(k)).is_some() || word(k) == "at")?;
    if word(k) == "at" {
        let (pin, end) = pin_at(text, words[k].1)?;
        let Some(reporter) = lookup(span(0, k), allowed) else {
            // A short form in a reporter no catalogue knows is unrecognised, like its full
            // citation: never passed over.
            let abbreviation = span(0, k)
                .trim_end_matches(',')
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let shaped = !broken[..=k].iter().any(|&b| b) && citation_shaped(&abbreviation);
            return shaped.then_some(Found {
                start,
                end,
                cite: Cite::Unknown {
                    abbreviation,
                    volume,
                    short: true,
                },
            });
        };
        return Some(Found {
            start,
            end,
            cite: Cite::Short {
                volume,
                reporter,
                pin,
            },
        });
    }
    // Only Westlaw and Lexis number their documents past seven digits.
    let digits = word(k).bytes().take_while(u8::is_ascii_digit).count();
    if digits > 7 {
        let reporter = lookup(span(0, k), allowed)?;
        return is_database(reporter.key())
            .then(|| full(text, start, volume, reporter, words[k], word(k)));
    }
    // A spelling that holds a number itself (`La.App. 1 Cir.`) is preferred when it reads on.
    for m in (k + 1..words.len().min(k + 3)).rev() {
        if page_word(word(m)).is_some() && word(k).bytes().all(|c| c.is_ascii_digit()) {
            if let Some(reporter) = lookup(span(0, m), allowed) {
                return Some(full(text, start, volume, reporter, words[m], word(m)));
            }
        }
    }
    match lookup(span(0, k), allowed) {
        Some(reporter) => Some(full(text, start, volume, reporter, words[k], word(k))),
        None => {
            let abbreviation = span(0, k).trim_end_matches(',').to_string();
            // Across a page break only a reporter the catalogue knows is rejoined; and a
            // street address's town, state and ZIP code (`Suite 420 Oakland, CA 94612`) is no
            // citation.
            if broken[..=k].iter().any(|&b| b) || shape::is_address(&abbreviation, word(k)) {
                return None;
            }
            let abbreviation = abbreviation
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            // In the full case form (`Hadley v. Baxendale, 9 Exch 341 (1854)`) any
            // capitalised words between the volume and the page are a reporter's name.
            let shaped = citation_shaped(&abbreviation)
                || shape::case_form(text, start, words[k].0)
                    && shape::reporter_words(&abbreviation);
            shaped.then(|| Found {
                start,
                end: words[k].0
                    + word(k)
                        .trim_end_matches([',', ';', '.', ':', ')', ']'])
                        .len(),
                cite: Cite::Unknown {
                    abbreviation,
                    volume,
                    short: false,
                },
            })
        }
    }
}

/// Whether a reporter is a database's (Westlaw's `WL`, Lexis's `… LEXIS`), whose pages are
/// document numbers and whose pin cites are star pages.
pub fn is_database(key: &str) -> bool {
    key == "wl" || key.ends_with("lexis")
}

fn full(
    text: &str,
    start: usize,
    volume: u32,
    reporter: Reporter,
    page_span: (usize, usize),
    page_text: &str,
) -> Found {
    let (page, len) = match page_word(page_text) {
        Some(PageWord::Number(n, len)) => (Some(n), len),
        Some(PageWord::Blank(len)) => (None, len),
        None => (None, 0),
    };
    // An unpublished or lettered decision (`210454-U`, `51192(U)`, `134[A]`) is another
    // decision than the one its number alone names.
    let digits = page_text.bytes().take_while(u8::is_ascii_digit).count();
    let suffix = page_text[digits.min(len)..len]
        .chars()
        .find(char::is_ascii_alphabetic)
        .map(|c| c.to_ascii_lowercase());
    let mut end = page_span.0 + len;
    let mut pin = None;
    if text[end..].starts_with(',') {
        if let Some((p, e)) = pin_after_comma(text, end + 1) {
            pin = Some(p);
            end = e;
        }
    }
    let mut year = None;
    if let Some((y, e)) = year_parenthetical(text, end) {
        year = Some(y);
        end = e;
    }
    Found {
        start,
        end,
        cite: Cite::Full {
            volume,
            reporter,
            page,
            pin,
            year,
            suffix,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cites(t: &str) -> Vec<String> {
        scan(t, &Allowed::default())
            .into_iter()
            .map(|f| match f.cite {
                Cite::Full {
                    volume,
                    reporter,
                    page,
                    pin,
                    year,
                    suffix,
                } => format!(
                    "{volume} {}{} {}{}{}",
                    reporter.key(),
                    suffix.map(|s| format!("-{s}")).unwrap_or_default(),
                    page.map_or("___".into(), |p| p.to_string()),
                    pin.map(|p| format!(", {p}")).unwrap_or_default(),
                    year.map(|y| format!(" ({y})")).unwrap_or_default()
                ),
                Cite::Short {
                    volume,
                    reporter,
                    pin,
                } => format!("{volume} {} at {pin}", reporter.key()),
                Cite::Unknown {
                    abbreviation,
                    short,
                    ..
                } => format!("? {abbreviation}{}", if short { " at" } else { "" }),
            })
            .collect()
    }

    proptest::proptest! {
        /// Any text, any encoding damage: spans on character boundaries, never a panic.
        #[test]
        fn any_text_scans_without_panicking(t in "(?s)[0-9 A-Za-z.,'’&()\\[\\]_*§é\u{a0}\n-]{0,80}") {
            for f in scan(&t, &Allowed::new(&["Zz."])) {
                proptest::prop_assert!(t.is_char_boundary(f.start) && t.is_char_boundary(f.end));
                proptest::prop_assert!(f.start <= f.end);
            }
        }
    }

    #[test]
    fn a_series_marker_is_never_a_page() {
        assert_eq!(cites("190 Wash. App. 2d 3790"), ["190 washapp2d 3790"]);
        assert_eq!(cites("12 So. 2d. 345"), ["12 so2d 345"]);
        assert_eq!(cites("12 So. 2nd 345"), ["12 so2d 345"]);
        assert_eq!(cites("5 F.Supp. 3D 10"), ["5 fsupp3d 10"]);
        assert_eq!(
            cites("140 Wn.2d 568, 570 (2000)"),
            ["140 wash2d 568, 570 (2000)"]
        );
    }

    #[test]
    fn short_forms_placeholders_and_services() {
        assert_eq!(cites("477 U.S., at 322"), ["477 us at 322"]);
        assert_eq!(cites("477 U.S. at 322-23"), ["477 us at 322-23"]);
        assert_eq!(cites("597 U.S. ___ (2022)"), ["597 us ___ (2022)"]);
        assert_eq!(cites("2019 WL 123456, at *3"), ["2019 wl 123456, *3"]);
        assert_eq!(
            cites("2019 U.S. Dist. LEXIS 1096"),
            ["2019 usdistlexis 1096"]
        );
    }

    #[test]
    fn pattern_defined_editions_and_loose_leaf_services() {
        assert_eq!(
            cites("Smith v. Comm'r, T.C. Memo. 2007-340."),
            ["2007 tcmemo 340 (2007)"]
        );
        assert_eq!(
            cites("T.C.\nMemo. 1989-142, at 5"),
            ["1989 tcmemo 142, 5 (1989)"]
        );
        assert_eq!(
            cites("T.C. Summary Opinion 2019-233"),
            ["2019 tcsummop 233 (2019)"]
        );
        assert_eq!(
            cites("State v. Roe, 2006-Ohio-2095, ¶ 12"),
            ["2006 ohioneutral 2095, ¶12 (2006)"]
        );
        assert_eq!(cites("2007-NMCERT-008"), ["2007 nmcert 8 (2007)"]);
        assert_eq!(
            cites("affd. 70-1 USTC par. 9373 (9th Cir. 1970)"),
            ["701 ustc 9373 (1970)"]
        );
        assert_eq!(cites("2004-2 U.S.T.C. ¶ 50,123"), ["20042 ustc 50123"]);
        assert_eq!(
            cites("Fed. Sec. L. Rep. (CCH) ¶ 95,123"),
            Vec::<String>::new(),
            "no volume, no citation"
        );
        assert_eq!(
            cites("4 Fed. Sec. L. Rep. (CCH) ¶ 95,123"),
            ["4 fedseclrepcch 95123"]
        );
        assert_eq!(
            cites("2017 IL App (1st) 143684-B"),
            ["2017 ilapp1st-b 143684"]
        );
        assert_eq!(
            cites("2024 N.Y. Slip Op. 51192(U)"),
            ["2024 nyslipop-u 51192"]
        );
        assert_eq!(cites("11 Misc 3d 134[A]"), ["11 misc3d-a 134"]);
        // Docket numbers are no neutral citations.
        assert!(cites("No. 2020-CV-12345").is_empty());
    }

    #[test]
    fn pin_cites_without_a_space_and_citations_across_page_breaks() {
        assert_eq!(
            cites("377 Mass. 461,472 (1979)"),
            ["377 mass 461, 472 (1979)"]
        );
        assert_eq!(cites("434\n\n\n\nA.2d 1372, 1374"), ["434 a2d 1372, 1374"]);
        assert_eq!(cites("902\n\nF.2d\n\n1028"), ["902 f2d 1028"]);
        // Across a blank line only a known reporter is rejoined.
        assert!(cites("in 2019\n\nI. BACKGROUND 5").is_empty());
    }

    #[test]
    fn a_number_before_a_parenthesis_is_no_volume() {
        for t in [
            "645 P.2d 767, 771 n.1 (Alaska 1982)",
            "1979 N.C. Sess. Laws Ch. 799 (S.B. 519)",
            "434 A.2d 1372, 1374 (D.C. 1981)",
            "on January 3, 2024 (RTX 3060)",
        ] {
            let c = cites(t);
            assert!(
                c.len() <= 1 && !c.iter().any(|c| c.contains('(') && !c.contains(" (")),
                "{t}: {c:?}"
            );
        }
        assert!(cites("on January 3, 2024 (RTX 3060)").is_empty());
        assert!(cites("Ch. 799 (S.B. 519)").is_empty());
    }

    #[test]
    fn unknown_reporters_in_the_full_case_form_and_their_short_forms() {
        assert_eq!(
            cites("Hadley v. Baxendale, 156 Eng. Rep. 145 (1854)"),
            ["? Eng. Rep."]
        );
        // Without periods, only in the full case form.
        assert_eq!(cites("Marsh v. Quill, 9 Exch 341 (1853)"), ["? Exch"]);
        assert_eq!(
            cites("In re Calder, 12 Lloyd Rep 77, 79 (1902)"),
            ["? Lloyd Rep"]
        );
        assert!(cites("the team scored 9 Goals 341 (1853)").is_empty());
        assert!(cites("Smith v. Jones, 12 Main Street 45 (2001)").is_empty());
        assert!(
            cites("Smith v. Jones, 9 Exch 341").is_empty(),
            "no year: no case form"
        );
        assert_eq!(cites("156 Eng. Rep. at 151"), ["? Eng. Rep. at"]);
        assert!(cites("paid 5 times at 3").is_empty());
    }

    #[test]
    fn unknown_reporters_fail_closed_and_addresses_are_no_citations() {
        for t in [
            "Suite 420\nOakland, CA 94612",
            "Room 2304 Raleigh, NC 27601.",
            "401 Sky Gap Court\nAntioch, TN 37013",
        ] {
            assert!(cites(t).is_empty(), "{t}: {:?}", cites(t));
        }
        assert_eq!(cites("12 Zzq. Rptr. 3d 45 (2001)"), ["? Zzq. Rptr. 3d"]);
        for t in [
            "111 S.W. 12th St. 4",
            "1200 S.W. 3rd Ave., Portland, OR 97201",
            "100 N.E. 2nd Street, Suite 300",
            "on 5 Jan. 2024",
            "Section 2 Art. 3",
            "call (415) 555-1212 today",
            "paid 3 times in 2019",
        ] {
            assert!(cites(t).is_empty(), "{t}: {:?}", cites(t));
        }
    }
}
