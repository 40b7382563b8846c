//! An index of the evidence, built once per run, so that thousands of claims over thousands of
//! pages are each a hash lookup; quotations are found with one Aho-Corasick pass.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::evidence::Evidence;
use super::extract;
use super::{normalize, Claim, Key, Location, Outcome, Status};

/// A place in the evidence: page index and byte range in its normalised text.
#[derive(Clone, Copy, Debug)]
struct At {
    page: usize,
    start: usize,
    end: usize,
}

#[derive(Clone, Debug)]
struct CaseSeen {
    pin: Option<String>,
    year: Option<u16>,
    at: At,
}

pub struct Index<'e> {
    ev: &'e Evidence,
    dates: HashMap<(i32, u32, u32), At>,
    money: HashMap<i64, At>,
    percents: HashMap<i64, At>,
    cases: HashMap<(u32, String, u32), Vec<CaseSeen>>,
    /// (code, section) and (code, section without subsections).
    statutes: HashMap<(String, String), At>,
    /// (prefix, number) → page index, for every stamped page.
    stamps: HashMap<(String, u64), usize>,
    prefixes: Vec<String>,
}

impl<'e> Index<'e> {
    pub fn new(ev: &'e Evidence) -> Self {
        let mut ix = Index {
            ev,
            dates: HashMap::new(),
            money: HashMap::new(),
            percents: HashMap::new(),
            cases: HashMap::new(),
            statutes: HashMap::new(),
            stamps: HashMap::new(),
            prefixes: Vec::new(),
        };
        // Two threads share the pages: the machine this runs on has few cores, and the
        // regex passes are the bulk of the work.
        let mid = ev.pages.len() / 2;
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| scan(ev, 0..mid));
            let b = scan(ev, mid..ev.pages.len());
            (h.join().unwrap_or_default(), b)
        });
        for part in [a, b] {
            for (k, at) in part.dates {
                ix.dates.entry(k).or_insert(at);
            }
            for (k, at) in part.money {
                ix.money.entry(k).or_insert(at);
            }
            for (k, at) in part.percents {
                ix.percents.entry(k).or_insert(at);
            }
            for (k, seen) in part.cases {
                ix.cases.entry(k).or_default().extend(seen);
            }
            for (k, at) in part.statutes {
                ix.statutes.entry(k).or_insert(at);
            }
        }
        for (i, p) in ev.pages.iter().enumerate() {
            if let Some(b) = &p.bates {
                let split = b.find(|c: char| c.is_ascii_digit()).unwrap_or(b.len());
                let (prefix, digits) = b.split_at(split);
                let prefix = prefix.trim_end_matches([' ', '_', '-']).to_string();
                if let Ok(n) = digits.parse() {
                    if !ix.prefixes.contains(&prefix) {
                        ix.prefixes.push(prefix.clone());
                    }
                    ix.stamps
                        .entry((prefix.to_ascii_uppercase(), n))
                        .or_insert(i);
                }
            }
        }
        for p in &ev.declared_prefixes {
            if !ix.prefixes.iter().any(|x| x.eq_ignore_ascii_case(p)) {
                ix.prefixes.push(p.clone());
            }
        }
        ix
    }

    /// The Bates prefixes of these sources: declared ones, and those stamped on pages.
    pub fn bates_prefixes(&self) -> Vec<String> {
        self.prefixes.clone()
    }

    fn location(&self, at: At) -> Location {
        let page = &self.ev.pages[at.page];
        Location {
            file: self.ev.files[page.file].path.clone(),
            page: page.number,
            bates: page.bates.clone(),
            snippet: snippet(&page.text, at.start, at.end),
        }
    }

    fn page_location(&self, page: usize) -> Location {
        let p = &self.ev.pages[page];
        Location {
            file: self.ev.files[p.file].path.clone(),
            page: p.number,
            bates: p.bates.clone(),
            snippet: String::new(),
        }
    }

    fn unreadable_note(&self) -> String {
        let bad: Vec<&str> = self
            .ev
            .files
            .iter()
            .filter(|f| f.problem.is_some())
            .map(|f| f.path.as_str())
            .collect();
        if bad.is_empty() {
            String::new()
        } else {
            format!(
                " ({} source file{} could not be read: {})",
                bad.len(),
                if bad.len() == 1 { "" } else { "s" },
                bad.join(", ")
            )
        }
    }

    /// Checks one claim.
    pub fn check(&self, claim: Claim) -> Outcome {
        let found: Result<At, String> = match &claim.key {
            Key::Unresolved(why) => Err(why.clone()),
            Key::Date { year, month, day } => self
                .dates
                .get(&(*year, *month, *day))
                .copied()
                .ok_or_else(|| {
                    format!("no page of the sources gives the date {year:04}-{month:02}-{day:02}")
                }),
            Key::Money { cents } => self
                .money
                .get(cents)
                .copied()
                .ok_or_else(|| format!("the amount {} appears in no source", claim.text.trim())),
            Key::Percent { thousandths } => self
                .percents
                .get(thousandths)
                .copied()
                .ok_or_else(|| format!("{} appears in no source", claim.text.trim())),
            Key::Case {
                volume,
                reporter,
                page,
                pin,
                year,
            } => self
                .check_case(*volume, reporter, *page, pin, *year)
                .map_err(|e| e.unwrap_or_else(|| format!("no source cites {}", claim.text.trim()))),
            Key::Statute { code, section } => {
                let base = section.split('(').next().unwrap_or(section).to_string();
                self.statutes
                    .get(&(code.clone(), section.clone()))
                    .or_else(|| self.statutes.get(&(code.clone(), base)))
                    .copied()
                    .ok_or_else(|| format!("{} is cited in no source", claim.text.trim()))
            }
            Key::Bates { prefix, number } => {
                return match self.stamps.get(&(prefix.to_ascii_uppercase(), *number)) {
                    Some(&p) => self.outcome(claim, Ok(self.page_location(p))),
                    None => {
                        let why =
                            format!("no page of the sources is stamped {}", claim.text.trim());
                        self.outcome(claim, Err(why))
                    }
                };
            }
            Key::BatesRange { prefix, from, to } => {
                let p = prefix.to_ascii_uppercase();
                let start = self.stamps.get(&(p.clone(), *from));
                let end = self.stamps.get(&(p, *to));
                return match (start, end) {
                    _ if from > to => {
                        self.outcome(claim, Err("the range ends before it starts".into()))
                    }
                    (Some(&s), Some(_)) => self.outcome(claim, Ok(self.page_location(s))),
                    (None, _) => {
                        let why = format!(
                            "no page is stamped {prefix}{from:0w$}",
                            w = width_of(&claim.text)
                        );
                        self.outcome(claim, Err(why))
                    }
                    (_, None) => {
                        let why = format!(
                            "no page is stamped {prefix}{to:0w$}",
                            w = width_of(&claim.text)
                        );
                        self.outcome(claim, Err(why))
                    }
                };
            }
            Key::Quote { text } => self.find_quote(text),
        };
        let found = found.map(|at| self.location(at));
        self.outcome(claim, found)
    }

    fn outcome(&self, claim: Claim, found: Result<Location, String>) -> Outcome {
        match found {
            Ok(loc) => Outcome {
                claim,
                status: Status::Supported,
                source: Some(loc),
                reason: None,
            },
            Err(why) => Outcome {
                claim,
                status: Status::Unsupported,
                source: None,
                reason: Some(format!("{why}{}", self.unreadable_note())),
            },
        }
    }

    /// `Err(None)` when no source cites the case at all.
    fn check_case(
        &self,
        volume: u32,
        reporter: &str,
        page: u32,
        pin: &Option<String>,
        year: Option<u16>,
    ) -> Result<At, Option<String>> {
        let Some(seen) = self.cases.get(&(volume, reporter.to_string(), page)) else {
            return Err(None);
        };
        if let Some(y) = year {
            if seen.iter().all(|s| s.year.is_some_and(|sy| sy != y)) {
                let theirs = seen.iter().find_map(|s| s.year).unwrap_or(0);
                return Err(Some(format!(
                    "the sources date this case {theirs}, not {y}"
                )));
            }
        }
        if let Some(p) = pin {
            let first = |s: &str| s.split('-').next().unwrap_or(s).to_string();
            let pinned: Vec<&CaseSeen> = seen.iter().filter(|s| s.pin.is_some()).collect();
            let matches = |s: &&CaseSeen| {
                s.pin
                    .as_ref()
                    .is_some_and(|sp| sp == p || first(sp) == first(p) || pin_within(sp, p))
            };
            if !pinned.is_empty() && !pinned.iter().any(matches) {
                let theirs: Vec<&str> = pinned.iter().filter_map(|s| s.pin.as_deref()).collect();
                return Err(Some(format!(
                    "the sources cite this case at {}, not at {p}",
                    theirs.join(", ")
                )));
            }
            if let Some(s) = pinned.iter().find(|s| matches(s)) {
                return Ok(s.at);
            }
        }
        Ok(seen[0].at)
    }

    /// A quotation is supported if its words appear in one source, in order: each part
    /// between ellipses found after the one before, within the same file.
    fn find_quote(&self, quote: &str) -> Result<At, String> {
        let q = normalize(quote);
        let segments: Vec<String> = q
            .replace(". . .", "...")
            .split("...")
            .map(|s| {
                s.trim()
                    .trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.' | '"' | '\''))
                    .trim()
                    .to_string()
            })
            .filter(|s| !s.is_empty())
            .collect();
        if segments.is_empty() {
            return Err("the quotation has no words to look for".into());
        }
        let matchers: Vec<Segment> = segments.iter().map(|s| Segment::new(s)).collect();
        let anchor = matchers[0].anchor();
        if anchor.trim().is_empty() {
            return Err("the quotation is all bracketed alterations".into());
        }
        let finder = match AhoCorasick::new([anchor]) {
            Ok(f) => f,
            Err(e) => return Err(format!("the quotation cannot be searched: {e}")),
        };
        for (pi, page) in self.ev.pages.iter().enumerate() {
            for hit in finder.find_iter(&page.text) {
                let Some((s0, mut e)) = matchers[0].match_around(&page.text, hit.start()) else {
                    continue;
                };
                let (mut cur_page, mut ok) = (pi, true);
                for m in &matchers[1..] {
                    match self.find_after(m, cur_page, e) {
                        Some((p, _, end)) => {
                            cur_page = p;
                            e = end;
                        }
                        None => {
                            ok = false;
                            break;
                        }
                    }
                }
                if ok {
                    return Ok(At {
                        page: pi,
                        start: s0,
                        end: if cur_page == pi { e } else { page.text.len() },
                    });
                }
            }
        }
        let first = &segments[0];
        let words: Vec<&str> = first.split_whitespace().collect();
        Err(if segments.len() > 1 {
            "its words do not appear in order in any one source".to_string()
        } else if words.len() > 4 && self.prefix_found(&words) {
            "a source has its opening words, but the rest differs".to_string()
        } else {
            "no source has these words".to_string()
        })
    }

    fn prefix_found(&self, words: &[&str]) -> bool {
        let head = words[..3].join(" ");
        self.ev.pages.iter().any(|p| p.text.contains(&head))
    }

    /// The next match of a segment at or after (page, offset), within the same file.
    fn find_after(&self, m: &Segment, page: usize, offset: usize) -> Option<(usize, usize, usize)> {
        let file = self.ev.pages[page].file;
        let mut p = page;
        let mut from = offset;
        while p < self.ev.pages.len() && self.ev.pages[p].file == file {
            let text = &self.ev.pages[p].text;
            if let Some((s, e)) = m.find(text, from) {
                return Some((p, s, e));
            }
            p += 1;
            from = 0;
        }
        None
    }
}

fn width_of(text: &str) -> usize {
    let digits: usize = text
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(6);
    digits.max(1)
}

/// `99-100` within `98-101`.
fn pin_within(range: &str, pin: &str) -> bool {
    let bounds = |s: &str| -> Option<(u32, u32)> {
        let mut it = s.split('-');
        let a: u32 = it.next()?.parse().ok()?;
        let b: u32 = it.next().map_or(Some(a), |b| b.parse().ok())?;
        Some((a, b))
    };
    match (bounds(range), bounds(pin)) {
        (Some((a, b)), Some((c, d))) => a <= c && d <= b,
        _ => false,
    }
}

fn snippet(text: &str, start: usize, end: usize) -> String {
    let mut s = start.saturating_sub(60);
    while !text.is_char_boundary(s) {
        s -= 1;
    }
    let mut e = (end + 60).min(text.len());
    while !text.is_char_boundary(e) {
        e += 1;
    }
    let mut out = String::new();
    if s > 0 {
        out.push('…');
    }
    out.push_str(text[s..e].trim());
    if e < text.len() {
        out.push('…');
    }
    out
}

/// One part of a quotation between ellipses. Bracketed alterations are allowed: a changed
/// letter's case (`[T]he`) and a small insertion in place of up to three words (`[the
/// landlord]`).
enum Segment {
    Literal(String),
    Altered { pattern: Regex, anchor: String },
}

impl Segment {
    fn new(s: &str) -> Segment {
        if !s.contains('[') {
            return Segment::Literal(s.to_string());
        }
        let mut pat = String::new();
        let mut literals: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut rest = s;
        while let Some(open) = rest.find('[') {
            let Some(close) = rest[open..].find(']').map(|c| open + c) else {
                break;
            };
            let before = &rest[..open];
            cur.push_str(before);
            pat.push_str(&regex::escape(before));
            let inside = &rest[open + 1..close];
            let glued = rest[close + 1..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
            if glued && inside.chars().count() <= 2 {
                // `[T]he`: the same letters in either case.
                pat.push_str(&format!("(?i:{})", regex::escape(inside)));
            } else {
                // An insertion or replacement: up to three of the source's words, or none.
                pat.push_str(r"(?:[^\s]+\s?){0,3}");
            }
            literals.push(std::mem::take(&mut cur));
            rest = &rest[close + 1..];
        }
        cur.push_str(rest);
        pat.push_str(&regex::escape(rest));
        literals.push(cur);
        let anchor = literals
            .iter()
            .map(|l| l.trim())
            .max_by_key(|l| l.len())
            .unwrap_or("")
            .to_string();
        match Regex::new(&pat) {
            Ok(pattern) => Segment::Altered { pattern, anchor },
            Err(_) => Segment::Literal(s.to_string()),
        }
    }

    fn anchor(&self) -> &str {
        match self {
            Segment::Literal(s) => s,
            Segment::Altered { anchor, .. } => anchor,
        }
    }

    /// A match that contains the anchor hit at `hit`.
    fn match_around(&self, text: &str, hit: usize) -> Option<(usize, usize)> {
        match self {
            Segment::Literal(s) => Some((hit, hit + s.len())),
            Segment::Altered { pattern, .. } => {
                let mut from = hit.saturating_sub(400);
                while !text.is_char_boundary(from) {
                    from -= 1;
                }
                pattern
                    .find_iter(&text[from..])
                    .map(|m| (from + m.start(), from + m.end()))
                    .find(|(s, e)| *s <= hit && hit < *e)
            }
        }
    }

    fn find(&self, text: &str, from: usize) -> Option<(usize, usize)> {
        let from = from.min(text.len());
        if !text.is_char_boundary(from) {
            return None;
        }
        match self {
            Segment::Literal(s) => text[from..]
                .find(s.as_str())
                .map(|i| (from + i, from + i + s.len())),
            Segment::Altered { pattern, .. } => pattern
                .find(&text[from..])
                .map(|m| (from + m.start(), from + m.end())),
        }
    }
}

/// What one thread found in its share of the pages.
#[derive(Default)]
struct Found {
    dates: HashMap<(i32, u32, u32), At>,
    money: HashMap<i64, At>,
    percents: HashMap<i64, At>,
    cases: HashMap<(u32, String, u32), Vec<CaseSeen>>,
    statutes: HashMap<(String, String), At>,
}

fn scan(ev: &Evidence, pages: std::ops::Range<usize>) -> Found {
    let mut f = Found::default();
    for i in pages {
        let text = &ev.pages[i].text;
        let at = |c: &Claim| At {
            page: i,
            start: c.start,
            end: c.end,
        };
        for c in extract::dates(text) {
            if let Key::Date { year, month, day } = c.key {
                f.dates.entry((year, month, day)).or_insert(at(&c));
            }
        }
        for c in extract::amounts(text) {
            match c.key {
                Key::Money { cents } => {
                    f.money.entry(cents).or_insert(at(&c));
                }
                Key::Percent { thousandths } => {
                    f.percents.entry(thousandths).or_insert(at(&c));
                }
                _ => {}
            }
        }
        let cases = extract::citations(text);
        for c in &cases {
            if let Key::Case {
                volume,
                reporter,
                page,
                pin,
                year,
            } = &c.key
            {
                f.cases
                    .entry((*volume, reporter.clone(), *page))
                    .or_default()
                    .push(CaseSeen {
                        pin: pin.clone(),
                        year: *year,
                        at: at(c),
                    });
            }
        }
        for c in extract::statutes_and_ids(text, &cases) {
            if let Key::Statute { code, section } = &c.key {
                let base = section.split('(').next().unwrap_or(section).to_string();
                f.statutes
                    .entry((code.clone(), section.clone()))
                    .or_insert(at(&c));
                f.statutes.entry((code.clone(), base)).or_insert(at(&c));
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{verify, Status};

    fn evidence() -> Evidence {
        let mut ev = Evidence::new(vec!["SMITH".into()]);
        ev.add_pages(
            "lease.txt".into(),
            vec![
                "The term begins on June 1, 2022. Rent is $2,150.00 per month.\n\"Landlord shall commence repairs within thirty (30) days of written notice.\"\nSee Green v. Superior Court, 10 Cal. 3d 616, 637 (1974); Cal. Civ. Code § 1941.1.\nSMITH000002".into(),
                "The tenant pays 1.5% interest.\nSMITH000003".into(),
            ],
        );
        ev
    }

    fn statuses(draft: &str) -> Vec<(String, Status, Option<String>)> {
        let ev = evidence();
        let ix = Index::new(&ev);
        verify(draft, &ix)
            .into_iter()
            .map(|o| (o.claim.text, o.status, o.reason))
            .collect()
    }

    #[test]
    fn genuine_claims_are_supported() {
        let draft = "On 6/1/2022 rent was $2,150 (SMITH000002–SMITH000003). The lease says \"[l]andlord shall commence repairs . . . of written notice.\" Green, 10 Cal. 3d 616, 637 (1974). Cal. Civ. Code § 1941.1; 1.5%.";
        for (text, status, why) in statuses(draft) {
            assert_eq!(status, Status::Supported, "{text}: {why:?}");
        }
    }

    #[test]
    fn fabrications_are_caught_with_reasons() {
        let draft = "On June 2, 2022 rent was $2,510.00 (SMITH000009). \"Landlord shall begin repairs within thirty days.\" 10 Cal. 3d 616, 640 (1974); 11 Cal. 3d 616; 10 Cal. 3d 616 (1975). Cal. Civ. Code § 1942.4. RTX 3060.";
        let got = statuses(draft);
        assert!(
            got.iter().all(|(_, s, _)| *s == Status::Unsupported),
            "{got:#?}"
        );
        let reasons: Vec<String> = got.iter().filter_map(|g| g.2.clone()).collect();
        assert!(
            reasons.iter().any(|r| r.contains("at 637, not at 640")),
            "{reasons:#?}"
        );
        assert!(
            reasons.iter().any(|r| r.contains("1974, not 1975")),
            "{reasons:#?}"
        );
        assert!(
            reasons
                .iter()
                .any(|r| r.contains("`RTX` is not a Bates prefix")),
            "{reasons:#?}"
        );
    }

    #[test]
    fn pins_inside_a_range_are_supported() {
        assert!(pin_within("99-101", "100"));
        assert!(!pin_within("99-101", "102"));
    }
}
