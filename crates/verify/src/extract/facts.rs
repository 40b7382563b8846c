//! Dates, amounts and percentages, Bates numbers and ranges, and exhibit cites.

use std::sync::LazyLock;

use regex::Regex;

use super::pattern::{followed_by_digit, preceded_by_digit_or_letter, re, valid_date};
use crate::catalogue::CATALOGUE;
use crate::claim::{Claim, Key, Kind};

const MONTHS: &str = "January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec";

/// The date forms that begin with a word (`this 5th day of`, a month's name), in the order
/// they are preferred where several match at one place.
static DATE_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        concat!(
            r"(?P<t>this(?-u:\s)+(?P<td>[0-9]{{1,2}})(?:st|nd|rd|th)?(?-u:\s)+day(?-u:\s)+of(?-u:\s)+(?P<tm>{m}),?(?-u:\s)+(?P<ty>[0-9]{{4}}))",
            r"|(?P<a>(?P<am>{m})\.?(?-u:\s)+(?P<ad>[0-9]{{1,2}})(?:st|nd|rd|th)?,?(?-u:\s)+(?P<ay>[0-9]{{4}}))",
            // A month and year (`in March 2024`, `Sept. 2023`): the month as a whole.
            r"|(?P<my>(?P<mym>{m})\.?,?(?-u:\s)+(?P<myy>[0-9]{{4}}))"
        ),
        m = MONTHS
    ))
    .expect("date pattern compiles")
});

/// The date forms that begin with a digit, in the order they are preferred.
static DATE_DIGITS: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        concat!(
            r"(?P<b>(?P<bd>[0-9]{{1,2}})(?:st|nd|rd|th)?(?-u:\s)+(?P<bm>{m})\.?,?(?-u:\s)+(?P<by>[0-9]{{4}}))",
            r"|(?P<c>(?P<cm>[0-9]{{1,2}})/(?P<cd>[0-9]{{1,2}})/(?P<cy>[0-9]{{4}}|[0-9]{{2}}))",
            r"|(?P<i>(?P<iy>[0-9]{{4}})-(?P<im>[0-9]{{2}})-(?P<id>[0-9]{{2}}))"
        ),
        m = MONTHS
    ))
    .expect("date pattern compiles")
});

/// Every date-shaped match in text order, as one pattern of all the forms would find them
/// (leftmost first, none overlapping). The forms are two patterns, those that begin with a
/// word and those that begin with a digit: no place starts a match of both, so taking the
/// earlier of the two next matches each time is the one pattern's answer; and neither
/// pattern then starts its search at every digit of the page, as one pattern of all the
/// forms would.
fn date_matches(text: &str) -> Vec<regex::Captures<'_>> {
    let mut out = Vec::new();
    let start = |c: &Option<regex::Captures>| c.as_ref().and_then(|c| c.get(0)).map(|m| m.start());
    let mut words = DATE_WORDS.captures_at(text, 0);
    let mut digits = DATE_DIGITS.captures_at(text, 0);
    loop {
        let take_words = match (start(&words), start(&digits)) {
            (None, None) => break,
            (Some(w), Some(d)) => w < d,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        let (taken, other, other_re, taken_re) = if take_words {
            (&mut words, &mut digits, &*DATE_DIGITS, &*DATE_WORDS)
        } else {
            (&mut digits, &mut words, &*DATE_WORDS, &*DATE_DIGITS)
        };
        let Some(c) = taken.take() else { break };
        let end = c.get(0).map_or(text.len(), |m| m.end());
        out.push(c);
        *taken = taken_re.captures_at(text, end);
        if start(other).is_some_and(|s| s < end) {
            *other = other_re.captures_at(text, end);
        }
    }
    out
}

static AMOUNT: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?:\$|USD|US\$)(?-u:\s)?(?P<num>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]{1,2})?|[0-9]+(?:\.[0-9]{1,2})?)(?:(?-u:\s)(?P<scale>million|billion|thousand)|(?P<suffix>[kKMB]|MM|mm|bn|mn)(?-u:\b))?",
        // The currency after the number: `5000 USD`, `5,000 dollars`.
        r"|(?P<after>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]{1,2})?|[0-9]+(?:\.[0-9]{1,2})?)(?-u:\s)?(?:USD|dollars(?-u:\b))",
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

/// A month and day written without a year (`March 15th`, `Mar. 5`), or a day alone after
/// `on` (`on the 3rd`, `on the 3rd of March`).
static YEARLESS: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        concat!(
            r"(?P<md>(?P<m>{m})\.?(?-u:\s)+(?P<d>[0-9]{{1,2}})(?:st|nd|rd|th)?)",
            r"|(?P<on>(?:[Oo]n|[Bb]y|[Uu]ntil|[Bb]efore|[Aa]fter)(?-u:\s)+the(?-u:\s)+(?P<od>[0-9]{{1,2}})(?:st|nd|rd|th)(?:(?-u:\s)+(?:day(?-u:\s)+)?of(?-u:\s)+(?P<om>{m})\.?)?)"
        ),
        m = MONTHS
    ))
    .expect("date pattern compiles")
});

/// Dates written without a year, outside the spans of other claims (`taken`), each given the
/// year — and for a day alone, the month — of the nearest full date before it among `dated`;
/// without one, a claim that cannot be checked as written, saying why.
pub fn yearless_dates(text: &str, dated: &[Claim], taken: &[(usize, usize)]) -> Vec<Claim> {
    let taken = crate::spans::Spans::new(taken.to_vec());
    let mut out = Vec::new();
    let mut resolved: Option<(usize, i32, u32, String)> = None;
    for c in YEARLESS.captures_iter(text) {
        let m = c.get(0).expect("match");
        let after = &text[m.end()..];
        let year_follows = {
            let a = after.trim_start_matches([',', ' ']);
            a.len() < after.len() && a.as_bytes().first().is_some_and(u8::is_ascii_digit)
        };
        if preceded_by_digit_or_letter(text, m.start())
            || followed_by_digit(text, m.end())
            || after.starts_with(|ch: char| ch.is_alphanumeric() || ch == ':')
            || year_follows
            || taken.overlaps(m.start(), m.end())
        {
            continue;
        }
        // `March. 2`: a sentence that ends on a month, then a numbered paragraph; only an
        // abbreviation (`Mar. 2`) takes a period before its day.
        if let Some(mo) = c.name("m") {
            let full = [
                "january",
                "february",
                "march",
                "april",
                "may",
                "june",
                "july",
                "august",
                "september",
                "october",
                "november",
                "december",
            ];
            if text[mo.end()..].starts_with('.')
                && full.contains(&mo.as_str().to_ascii_lowercase().as_str())
            {
                continue;
            }
        }
        let (month, day) = if c.name("md").is_some() {
            (month_number(&c["m"]), c["d"].parse::<u32>().ok())
        } else {
            (
                c.name("om").and_then(|x| month_number(x.as_str())),
                c["od"].parse::<u32>().ok(),
            )
        };
        let Some(day) = day.filter(|d| (1..=31).contains(d)) else {
            continue;
        };
        let start = if c.name("on").is_some() {
            // The date is `the 3rd`, not the word before it.
            m.start() + m.as_str().find("the").unwrap_or(0)
        } else {
            m.start()
        };
        let full = dated.iter().rev().find_map(|d| match d.key {
            Key::Date { year, month, day } if d.end <= m.start() && day != 0 => {
                Some((d.end, year, month, d.text.clone()))
            }
            _ => None,
        });
        // A day alone is in the month of the date just before it, with or without a year.
        let context = match (full, &resolved) {
            (Some(f), Some(r)) if r.0 > f.0 => Some(r.clone()),
            (f, _) => f,
        }
        .map(|(_, y, mo, t)| (y, mo, t));
        let key = match context {
            Some((y, cm, _)) if valid_date(y, month.unwrap_or(cm), day) => Key::Date {
                year: y,
                month: month.unwrap_or(cm),
                day,
            },
            Some((_, _, before)) => Key::Unresolved(format!(
                "`{}` gives no year, and with the year of {before} before it is no date; write the full date",
                text[start..m.end()].trim()
            )),
            None => Key::Unresolved(format!(
                "`{}` gives no year, and no full date comes before it in the draft; write the full date",
                text[start..m.end()].trim()
            )),
        };
        if let Key::Date { year, month, .. } = key {
            resolved = Some((m.end(), year, month, text[start..m.end()].to_string()));
        }
        out.push(Claim::new(Kind::Date, text, start, m.end(), key));
    }
    out
}

/// Dates in every common form, as calendar dates.
pub fn dates(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    for c in date_matches(text) {
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
        } else if c.name("i").is_some() {
            (
                c["iy"].parse().ok(),
                c["im"].parse().ok(),
                c["id"].parse().ok(),
            )
        } else {
            (c["myy"].parse().ok(), month_number(&c["mym"]), Some(0))
        };
        let (Some(y), Some(mo), Some(d)) = (y, mo, d) else {
            continue;
        };
        // Day 0: the month as a whole (`March 2024`).
        let valid = if d == 0 {
            (1600..=2200).contains(&y) && (1..=12).contains(&mo)
        } else {
            valid_date(y, mo, d)
        };
        if !valid {
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
        let Some(n) = c.name("num").or_else(|| c.name("after")) else {
            continue;
        };
        if c.name("after").is_some() && preceded_by_digit_or_letter(text, m.start()) {
            continue;
        }
        let num: f64 = n.as_str().replace(',', "").parse().unwrap_or(0.0);
        let scale = match c
            .name("scale")
            .or_else(|| c.name("suffix"))
            .map(|s| s.as_str())
        {
            Some("thousand" | "k" | "K") => 1e3,
            Some("million" | "M" | "MM" | "mm" | "mn") => 1e6,
            Some("billion" | "B" | "bn") => 1e9,
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

/// A sum a source prints without a currency sign, with its cents (`412.50` on a receipt).
static BARE_SUM: LazyLock<Regex> = LazyLock::new(|| {
    re(r"[0-9]{1,3}(?:,[0-9]{3})+\.[0-9]{2}|[0-9]+\.[0-9]{2}").expect("sum pattern compiles")
});

/// [`amounts`] as the evidence is read: a sum printed without a currency sign but with its
/// cents (`412.50`, `1,250.00`) is money too, unless it stands where a section, a rule or a
/// version number stands.
pub fn evidence_amounts(text: &str) -> Vec<Claim> {
    let mut out = amounts(text);
    if !text.contains('.') {
        return out;
    }
    let taken = crate::spans::Spans::new(out.iter().map(|c| (c.start, c.end)).collect());
    let mut more = Vec::new();
    for m in BARE_SUM.find_iter(text) {
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        if taken.overlaps(m.start(), m.end())
            || before.is_some_and(|c| {
                c.is_alphanumeric() || matches!(c, '.' | '-' | '/' | ':' | '§' | '¶' | '$' | ',')
            })
            || after.is_some_and(|c| c.is_alphanumeric() || matches!(c, '%' | '-' | '/'))
            || text[m.end()..].starts_with('.')
                && text[m.end() + 1..].starts_with(|c: char| c.is_ascii_digit())
        {
            continue;
        }
        let lead = text[..m.start()].trim_end();
        if [
            "§", "Section", "section", "Sec.", "sec.", "Rule", "No.", "Part", "pt.",
        ]
        .iter()
        .any(|w| lead.ends_with(w))
        {
            continue;
        }
        let num: f64 = m.as_str().replace(',', "").parse().unwrap_or(0.0);
        more.push(Claim::new(
            Kind::Amount,
            text,
            m.start(),
            m.end(),
            Key::Money {
                cents: (num * 100.0).round() as i64,
            },
        ));
    }
    out.extend(more);
    out.sort_by_key(|c| c.start);
    out
}

/// Bates numbers and ranges with a declared prefix, and anything shaped like a Bates number
/// whose prefix is not declared (a model's invention, e.g. `RTX 3060`).
pub fn bates(text: &str, prefixes: &[String], skip: &[(usize, usize)]) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    let mut taken_until = 0;
    let mut last_declared: Option<usize> = None;
    let skip = crate::spans::Spans::new(skip.to_vec());
    for c in BATES_LIKE.captures_iter(text) {
        let m = c.get(0).expect("match");
        if m.start() < taken_until
            || preceded_by_digit_or_letter(text, m.start())
            || text[m.end()..]
                .chars()
                .next()
                .is_some_and(|ch| ch.is_alphanumeric())
            || skip.overlaps(m.start(), m.end())
        {
            continue;
        }
        let (prefix, digits) = (&c["p"], &c["n"]);
        let declared = prefixes.iter().find(|p| p.eq_ignore_ascii_case(prefix));
        let Some(declared) = declared else {
            // Named among the sources' own Bates numbers, a number stands as one.
            let among_bates = last_declared.is_some_and(|e: usize| {
                m.start() - e < 200 && !text[e..m.start()].contains("\n\n")
            });
            if looks_incidental(prefix, digits, &text[m.end()..])
                || !could_be_bates(text, m.start(), m.end(), prefix, digits, among_bates)
            {
                continue;
            }
            out.push(Claim::new(
                Kind::Bates,
                text,
                m.start(),
                m.end(),
                Key::Unresolved(format!(
                    "`{}` is not a Bates number of these sources: `{prefix}` is not a Bates prefix of these sources",
                    m.as_str()
                )),
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
            // A shortened range gives only the last digits (`ACME 000014–19`, `ACME
            // 000014–000019`): it runs to the number they end.
            let short = text[rest_at..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let ends_there = !text[rest_at + short..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric());
            if (1..=digits.len()).contains(&short) && ends_there {
                let tail: u64 = text[rest_at..rest_at + short].parse().unwrap_or(0);
                let scale = 10u64.pow(short as u32);
                let to = from / scale * scale + tail;
                if to > from {
                    end = rest_at + short;
                    key = Key::BatesRange {
                        prefix: declared.clone(),
                        from,
                        to,
                    };
                }
            } else if let Some(c2) = BATES_LIKE.captures(&text[rest_at..]) {
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
        last_declared = Some(end);
        out.push(Claim::new(Kind::Bates, text, m.start(), end, key));
    }
    out
}

/// Bills and resolutions (`SB 683`, `HB 588`, `H.R. 1`): never a production's prefix.
const BILL_PREFIXES: &[&str] = &[
    "HB", "SB", "AB", "HR", "SR", "HF", "SF", "LB", "LD", "HJR", "SJR", "HCR", "SCR", "HJRES",
    "SJRES", "HRES", "SRES", "ACR", "AJR", "SCA", "ACA", "SSB", "HSB", "CSHB", "CSSB",
];

/// Whether an undeclared prefix and number may be a Bates number at all: one with the shape
/// of a production number (letters, then a zero-padded run of digits: `ABC0001234`,
/// `ABC-000123`), or one standing where a record cite stands (alone in parentheses or
/// brackets, as in `(RTX 3060)`, or named beside the sources' own Bates numbers) — and never a statute's name (`KRS 117.235`), a docket or
/// case number (`No. 5:24-CV-481-FL`, `No. ED108783`) or a bill (`SB 683`).
fn could_be_bates(
    text: &str,
    start: usize,
    end: usize,
    prefix: &str,
    digits: &str,
    among_bates: bool,
) -> bool {
    let before = text[..start].trim_end_matches([' ', '\t']);
    let after = &text[end..];
    let alpha: String = prefix.chars().filter(char::is_ascii_alphabetic).collect();
    let law = {
        let c = &*CATALOGUE;
        c.law(prefix).is_some() || c.law(&alpha).is_some()
    };
    // A section (`117.235`), a docket's parts (`5:24-CV-481-FL`), a number's other half.
    let continues = after.starts_with(['.', '-', ':', '/'])
        && after[1..].starts_with(|c: char| c.is_ascii_alphanumeric());
    let docket = before.ends_with(['-', ':', '/', '#']) || {
        let last = before
            .rsplit(|c: char| c.is_whitespace())
            .next()
            .unwrap_or("")
            .trim_end_matches([':', ','])
            .to_ascii_lowercase();
        matches!(
            last.as_str(),
            "no."
                | "nos."
                | "no"
                | "nr"
                | "nr."
                | "number"
                | "docket"
                | "case"
                | "dkt."
                | "appeal"
                | "cause"
                | "index"
                | "file"
        )
    };
    let bill = BILL_PREFIXES.contains(&alpha.as_str())
        || before.ends_with("Bill")
        || before.ends_with("Act");
    if law || continues || docket || bill {
        return false;
    }
    let padded = digits.len() >= 4 && digits.starts_with('0');
    let record_position = {
        let open = before.ends_with(['(', '[', ';'])
            || pins_an_exhibit(before)
            || ["See", "see", "See also", "see also", "at", "Ex.", "Exhibit"]
                .iter()
                .any(|w| {
                    before
                        .strip_suffix(w)
                        .is_some_and(|b| b.trim_end().ends_with(['(', '[', ';', ',']))
                });
        let close = after
            .trim_start_matches(' ')
            .starts_with([')', ']', ';', ','])
            || BATES_RANGE_SEP.is_match(after);
        open && close
    };
    padded || record_position || among_bates
}

/// Whether text ends with an exhibit cite that a page number may pin, opened where a record
/// cite opens: `(Ex. C,`, `; Exhibit 4 at`.
fn pins_an_exhibit(before: &str) -> bool {
    static PINNED: LazyLock<Regex> = LazyLock::new(|| {
        re(r"[(\[;](?-u:\s)*(?:(?:See|see)(?: also)?(?-u:\s)+)?(?:Ex|Exh|Exs|Exhibit)\.?(?-u:\s)*[A-Z0-9]{1,3}(?:(?-u:\s)*,(?-u:\s)*(?:at)?|(?-u:\s)+at)$")
            .expect("exhibit pin pattern compiles")
    });
    PINNED.is_match(before)
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
            // Bar numbers in a counsel block.
            | "SBN" | "BBO" | "OSB" | "WSBA" | "ARDC" | "TBN" | "BAR"
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
