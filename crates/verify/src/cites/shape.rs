//! Whether words the catalogue does not know still look like a reporter's abbreviation, so
//! that a cite to an unknown reporter is reported as unrecognised rather than passed over.

use super::parts::{pin_after_comma, year_parenthetical};
use crate::catalogue::CATALOGUE;

/// Words that never name a reporter: months, street words, the draft's own numbering, units.
const NOT_REPORTER_WORDS: &[&str] = &[
    "jan",
    "january",
    "feb",
    "february",
    "mar",
    "march",
    "apr",
    "april",
    "may",
    "jun",
    "june",
    "jul",
    "july",
    "aug",
    "august",
    "sep",
    "sept",
    "september",
    "oct",
    "october",
    "nov",
    "november",
    "dec",
    "december",
    "st",
    "street",
    "ave",
    "avenue",
    "blvd",
    "boulevard",
    "rd",
    "road",
    "dr",
    "drive",
    "ln",
    "lane",
    "suite",
    "ste",
    "fl",
    "floor",
    "apt",
    "unit",
    "room",
    "rm",
    "hwy",
    "highway",
    "pkwy",
    "parkway",
    "way",
    "pl",
    "place",
    "sq",
    "square",
    "bldg",
    "building",
    "no",
    "nos",
    "number",
    "sec",
    "secs",
    "section",
    "sections",
    "art",
    "article",
    "ch",
    "chap",
    "chapter",
    "pt",
    "part",
    "para",
    "paras",
    "par",
    "paragraph",
    "ex",
    "exh",
    "exhibit",
    "vol",
    "volume",
    "p",
    "pp",
    "page",
    "pages",
    "fig",
    "figure",
    "tbl",
    "table",
    "id",
    "ibid",
    "doc",
    "docs",
    "dkt",
    "ecf",
    "att",
    "tab",
    "am",
    "pm",
    "a.m",
    "p.m",
    "hrs",
    "hr",
    "min",
    "mins",
    "sq",
    "ft",
    "lbs",
    "oz",
    "mi",
    "km",
    "kg",
    "cm",
    "mm",
    "in",
    "yrs",
    "mo",
    "mos",
    "wk",
    "wks",
    "days",
    "tel",
    "fax",
    "ph",
    "ext",
    "po",
    "box",
    "rule",
    "rules",
    "line",
    "lines",
    "item",
    "items",
    "step",
    "steps",
    "count",
    "counts",
    "claim",
    "claims",
];

/// Whether words the catalogue does not know still look like a reporter: one to six
/// capitalised abbreviations (at least one with a period or an apostrophe, or in capitals),
/// series markers like `2d` or `4th`, `&` — and none of the words that never name one.
pub fn citation_shaped(abbreviation: &str) -> bool {
    let words: Vec<&str> = abbreviation.split_whitespace().collect();
    if words.is_empty() || words.len() > 6 || abbreviation.len() > 40 {
        return false;
    }
    if CATALOGUE.law(abbreviation).is_some() {
        return false;
    }
    let mut abbreviated = false;
    for w in &words {
        let w = w.trim_end_matches(',');
        if w == "&" {
            continue;
        }
        let bare: String = w
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '.')
            .collect::<String>()
            .trim_end_matches('.')
            .to_lowercase();
        if NOT_REPORTER_WORDS.contains(&bare.as_str()) {
            return false;
        }
        let digits = w.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            // A series marker (`2d`, `3d.`, `4th`, `2nd`), never a street's `12th`.
            let rest = w[digits..].trim_end_matches('.').to_lowercase();
            let n: u32 = w[..digits].parse().unwrap_or(0);
            if !(2..=9).contains(&n) || !matches!(rest.as_str(), "d" | "nd" | "rd" | "th") {
                return false;
            }
            continue;
        }
        let core = w.trim_start_matches(['(', '[']);
        if !core.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            || !w.chars().all(|c| {
                c.is_ascii_alphabetic()
                    || matches!(c, '.' | '\'' | '’' | '&' | '(' | ')' | '[' | ']')
            })
        {
            return false;
        }
        let letters: Vec<char> = w.chars().filter(char::is_ascii_alphabetic).collect();
        if w.contains(['.', '\'', '’'])
            || (2..=6).contains(&letters.len()) && letters.iter().all(char::is_ascii_uppercase)
        {
            abbreviated = true;
        }
    }
    abbreviated
}

const US_STATES: &[&str] = &[
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY",
];

/// Whether words and the number after them are the end of a mailing address: a town, a
/// state's postal code and a ZIP code (`Oakland, CA 94612`, `Antioch, TN 37013-1234`).
pub fn is_address(words: &str, number: &str) -> bool {
    let last = words.split_whitespace().last().unwrap_or("");
    let digits = number.bytes().take_while(u8::is_ascii_digit).count();
    let zip = digits == 5 && !number[5..].starts_with(|c: char| c.is_ascii_alphanumeric());
    zip && US_STATES.contains(&last.trim_end_matches(['.', ',']))
}

/// Whether a volume at `start` and a page at `page` stand in the full case form: after a
/// case's name and its comma (`Hadley v. Baxendale, `, `In re Smith, `), with the court and
/// year in parentheses after the page or its pin cite (`145 (1854)`, `145, 151 (Exch. 1854)`).
pub fn case_form(text: &str, start: usize, page: usize) -> bool {
    let before = text[..start].trim_end_matches([' ', '\t', '\n', '\r']);
    if !before.ends_with(',') {
        return false;
    }
    let mut from = before.len().saturating_sub(160);
    while !before.is_char_boundary(from) {
        from += 1;
    }
    let near = &before[from..];
    let near = near.rsplit("\n\n").next().unwrap_or(near);
    let named = [" v. ", " vs. ", " v ", "In re ", "Ex parte ", "Matter of "]
        .iter()
        .any(|w| near.contains(w));
    if !named {
        return false;
    }
    let digits = text[page..].bytes().take_while(u8::is_ascii_digit).count();
    let mut end = page + digits;
    if text[end..].starts_with(',') {
        if let Some((_, e)) = pin_after_comma(text, end + 1) {
            end = e;
        }
    }
    year_parenthetical(text, end).is_some()
}

/// Whether words may be a reporter's name written out or without periods (`Exch`,
/// `English Reports`, `Eng Rep`): one to five capitalised words or series markers, none of
/// the words that never name one.
pub fn reporter_words(abbreviation: &str) -> bool {
    let words: Vec<&str> = abbreviation.split_whitespace().collect();
    if words.is_empty() || words.len() > 5 || CATALOGUE.law(abbreviation).is_some() {
        return false;
    }
    words.iter().all(|w| {
        let w = w.trim_end_matches(',');
        let bare = w.trim_end_matches('.').to_lowercase();
        if NOT_REPORTER_WORDS.contains(&bare.as_str()) {
            return false;
        }
        let digits = w.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            return matches!(&bare[digits..], "d" | "nd" | "rd" | "th");
        }
        w == "&"
            || w.starts_with(|c: char| c.is_ascii_uppercase())
                && w.chars()
                    .all(|c| c.is_ascii_alphabetic() || matches!(c, '.' | '\'' | '’'))
    })
}
