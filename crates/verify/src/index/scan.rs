//! The evidence pass: each file read, normalised and scanned once, on one thread per core,
//! recording only what the draft's claims need; slip sheets and exhibit indexes found on the way.

use super::segment::Segment;
use super::table::{
    base_section, keep_first, record, Authority, CaseSeen, Index, Located, Opinion, Wanted,
};
use crate::claim::{Key, Location};
use crate::evidence::{Doc, Evidence, SourceFile};
use crate::extract;
use crate::needs::Numbers;
use crate::normalize::normalize;
use crate::wordkeys::Keys;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The label of a slip sheet: a page whose only words are `Exhibit X` (besides its stamp).
fn slip_sheet(text: &str, stamp: Option<&str>) -> Option<String> {
    let mut rest = text.trim();
    if let Some(s) = stamp {
        rest = rest.trim_end_matches(s).trim();
    }
    let label = rest
        .strip_prefix("Exhibit ")
        .or_else(|| rest.strip_prefix("EXHIBIT "))?
        .trim();
    (!label.is_empty()
        && label.len() <= 3
        && label
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
    .then(|| label.to_string())
}

/// Rows of an exhibit index table (`| A | description | SMITH000001–SMITH000003 | 3 |`):
/// label → Bates prefix and range, from the columns headed `Exhibit` and `Bates range`.
fn exhibit_index_rows(text: &str) -> Vec<(String, (String, u64, u64))> {
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut out = Vec::new();
    let mut cols: Option<(usize, usize)> = None;
    for line in text.lines().filter(|l| l.trim_start().starts_with('|')) {
        let c = cells(line);
        if let (Some(e), Some(b)) = (
            c.iter().position(|x| x.eq_ignore_ascii_case("exhibit")),
            c.iter().position(|x| x.eq_ignore_ascii_case("bates range")),
        ) {
            cols = Some((e, b));
            continue;
        }
        let Some((e, b)) = cols else { continue };
        let (Some(label), Some(range)) = (c.get(e), c.get(b)) else {
            continue;
        };
        let ends: Vec<&str> = range.split(['–', '-', '—']).map(str::trim).collect();
        let parse = |s: &str| {
            let d = s.find(|ch: char| ch.is_ascii_digit())?;
            Some((s[..d].trim().to_string(), s[d..].parse::<u64>().ok()?))
        };
        let (Some((p, from)), Some((_, to))) = (
            ends.first().and_then(|s| parse(s)),
            ends.last().and_then(|s| parse(s)),
        ) else {
            continue;
        };
        if !label.is_empty() && from <= to {
            out.push((label.clone(), (p, from, to)));
        }
    }
    out
}

/// The most threads that read evidence at once.
pub(super) const MAX_THREADS: usize = 8;

/// One thread's share of the scanning.
pub(super) struct Scanner<'a> {
    pub(super) wanted: &'a Wanted,
    pub(super) quotes: &'a [Vec<Segment>],
    /// Where each quotation's first part may begin.
    pub(super) keys: &'a Keys,
    /// Each quotation's first three words, if it is one part of more than four words.
    pub(super) firsts: &'a [String],
}

impl Scanner<'_> {
    /// Scans files, taking the next unread one each time, until none is left.
    pub(super) fn scan(&self, ev: &Evidence, next: &AtomicUsize) -> Index {
        let mut ix = Index::default();
        loop {
            let di = next.fetch_add(1, Ordering::Relaxed);
            let Some(source) = ev.sources.get(di) else {
                return ix;
            };
            ix.file_ids.push(di);
            match source.load() {
                Doc::Unreadable { path, problem } => ix.files.push(SourceFile {
                    path,
                    pages: 0,
                    problem: Some(problem),
                    empty_pages: Vec::new(),
                }),
                Doc::Pages { path, pages } => {
                    ev.observer.saw(&path, &pages);
                    self.scan_doc(&mut ix, di, path, &pages)
                }
            }
        }
    }

    /// The star markers of a document and the case it carries, if it is the report of a
    /// case the draft cites: its first page names that case, and the case's first page comes
    /// at most 50 pages before the first marker (the closest such case). Otherwise no markers.
    fn opinion_of(
        &self,
        pages: &[(u32, Option<String>, String)],
    ) -> (super::stars::Stars, Option<(u32, String, u32)>, bool) {
        let none = (super::stars::Stars::default(), None, false);
        let Some((_, _, first_page)) = pages.first() else {
            return none;
        };
        if self.wanted.cases.is_empty() {
            return none;
        }
        // The draft's cases named on the first page: the candidates, before any marker is
        // looked for (most files name none).
        let named: Vec<(u32, String, u32)> = extract::citations(first_page, &self.wanted.allowed)
            .into_iter()
            .filter_map(|c| match c.key {
                Key::Case {
                    volume,
                    reporter,
                    page,
                    ..
                } => Some((volume, reporter, page)),
                _ => None,
            })
            .filter(|k| self.wanted.cases.contains(k))
            .collect();
        if named.is_empty() {
            return none;
        }
        let mut stars = super::stars::Stars::of(pages.iter().map(|(_, _, t)| t.as_str()));
        // Without star pages, an opinion cited by paragraph is paged by its paragraphs.
        let by_paragraph = stars.first().is_none();
        if by_paragraph {
            stars = super::stars::Stars::paragraphs(pages.iter().map(|(_, _, t)| t.as_str()));
        }
        let Some(first) = stars.first() else {
            return none;
        };
        // A database's document is paged from *1, whatever its number, and an opinion's
        // paragraphs from ¶ 1.
        let opening = |k: &(u32, String, u32)| {
            if by_paragraph || crate::cites::is_database(&k.1) {
                1
            } else {
                k.2
            }
        };
        let carried = named
            .into_iter()
            .filter(|k| opening(k) <= first && first - opening(k) <= 50)
            .min_by_key(|k| first - opening(k));
        match carried {
            Some(k) => (stars, Some(k), by_paragraph),
            None => none,
        }
    }

    /// The opinion a document is, if its first page begins with a caption and the citation
    /// of a volume the draft cites (`Ace v. Bay` / `Ace v. Bay, 150 Cal. App. 4th 300
    /// (2005)`): the case behind a cite to that page, and to the pages its star markers run
    /// over.
    fn authority_of(
        &self,
        di: usize,
        path: &str,
        raw: &[String],
        pages: &[Page],
    ) -> Option<Authority> {
        if self.wanted.volumes.is_empty() {
            return None;
        }
        let first = raw.first()?;
        let mut end = first.len().min(1500);
        while !first.is_char_boundary(end) {
            end -= 1;
        }
        let head = &first[..end];
        let cite = extract::citations(head, &self.wanted.allowed)
            .into_iter()
            .find(|c| match &c.key {
                Key::Case {
                    volume, reporter, ..
                } => self.wanted.volumes.contains(&(*volume, reporter.clone())),
                _ => false,
            })?;
        // The citation heads the opinion: among its first dozen lines.
        if head[..cite.start]
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count()
            > 12
        {
            return None;
        }
        let Key::Case {
            volume,
            reporter,
            page,
            ..
        } = cite.key
        else {
            return None;
        };
        let caption = crate::names::caption(head, cite.start)?;
        let stars = super::stars::Stars::of(pages.iter().map(|(_, _, t)| t.as_str()));
        let last = stars
            .starts()
            .iter()
            .map(|(m, _)| *m)
            .max()
            .filter(|_| !crate::cites::is_database(&reporter));
        let last = last
            .filter(|&l| l > page && l - page <= 2000 && stars.first().is_some_and(|f| f > page));
        Some(Authority {
            volume,
            reporter,
            first: page,
            last,
            loc: Location {
                file: path.to_string(),
                page: 1,
                bates: pages.first().and_then(|p| p.1.clone()),
                star: None,
                snippet: caption.clone(),
                span: (0, 0),
            },
            caption,
            file: di,
        })
    }

    /// Reads one document: its record filing, exhibits, stamps, dates, amounts, citations
    /// and quotations, then the file itself.
    fn scan_doc(&self, ix: &mut Index, di: usize, path: String, raw: &[String]) {
        let (pages, empty) = normalised_pages(raw);
        // A reported opinion the draft cites, with its star markers (`*629`: page 629 of the
        // reporter begins here), so that each place in it is known by its opinion page too.
        // Any other file has no opinion pages, whatever stars it holds.
        let (stars, carried, from_one) = self.opinion_of(&pages);
        if let Some(a) = self.authority_of(di, &path, raw, &pages) {
            ix.authorities.push(a);
        }
        let places = Places {
            di,
            path: &path,
            stars: &stars,
        };
        // A filing of the record the draft cites: where its numbered paragraphs begin.
        if !self.wanted.records.is_empty() {
            let stamps = pages.iter().map(|(_, b, _)| b.clone()).collect();
            if let Some(r) =
                super::records::RecordFile::read(&self.wanted.records, di, &path, raw, stamps)
            {
                ix.records.push(r);
            }
        }
        exhibits(ix, &pages, raw, &places);
        // A file named for an exhibit (`Exhibit 12.pdf`, `Ex_C.pdf`, `12 - Lease.pdf`) is it,
        // unless a binder's slip sheet already gave that exhibit its pages.
        if let Some(label) = exhibit_of_file(&path) {
            ix.exhibit_files.push(label.clone());
            ix.exhibit_pages.entry(label).or_insert_with(|| {
                pages
                    .iter()
                    .map(|(number, bates, _)| places.bare(*number, bates))
                    .collect()
            });
        }
        for (number, bates, text) in &pages {
            stamp(ix, *number, bates, &places);
            let numbers = Numbers::of(text);
            let spot = Spot {
                places: &places,
                number: *number,
                bates,
                text,
            };
            self.dates_and_amounts(ix, &numbers, &spot);
            self.cases_and_statutes(ix, &numbers, &spot);
        }
        if !self.quotes.is_empty() {
            self.quotations(ix, &pages, &places);
        }
        if let Some(k) = carried {
            ix.opinions.entry(k).or_insert(Opinion {
                file: di,
                path: path.clone(),
                starts: stars.starts(),
                from_one,
            });
        }
        ix.files.push(SourceFile {
            path,
            pages: raw.len() as u32,
            problem: None,
            empty_pages: empty,
        });
    }

    /// The dates and amounts the draft cites, on one page, when the page's numbers can hold any.
    fn dates_and_amounts(&self, ix: &mut Index, numbers: &Numbers, spot: &Spot) {
        let w = self.wanted;
        let loc = |s, e| spot.at(s, e);
        if w.needs.dates(numbers) {
            for c in extract::dates(spot.text) {
                if let Key::Date { year, month, day } = c.key {
                    if w.dates.contains(&(year, month, day)) {
                        record(&mut ix.dates, (year, month, day), loc(c.start, c.end));
                    }
                    // A day of a month supports the month as a whole (`March 2024`).
                    if day != 0 && w.dates.contains(&(year, month, 0)) {
                        record(&mut ix.dates, (year, month, 0), loc(c.start, c.end));
                    }
                }
            }
        }
        if w.needs.amounts(numbers) {
            for c in extract::evidence_amounts(spot.text) {
                match c.key {
                    Key::Money { cents } if w.money.contains(&cents) => {
                        record(&mut ix.money, cents, loc(c.start, c.end))
                    }
                    Key::Percent { thousandths } if w.percents.contains(&thousandths) => {
                        record(&mut ix.percents, thousandths, loc(c.start, c.end))
                    }
                    _ => {}
                }
            }
        }
    }

    /// The cases and statutes the draft cites, on one page, when the page's numbers can
    /// hold any; `Id.` after a statute is resolved against the page's cases too.
    fn cases_and_statutes(&self, ix: &mut Index, numbers: &Numbers, spot: &Spot) {
        let w = self.wanted;
        let statutes = w.needs.statutes(numbers);
        if !(w.needs.cases(numbers) || statutes) {
            return;
        }
        let (loc, text) = (|s, e| spot.at(s, e), spot.text);
        let cases = extract::citations(text, &w.allowed);
        for c in &cases {
            if let Key::Case {
                volume,
                reporter,
                page,
                pin,
                year,
            } = &c.key
            {
                let k = (*volume, reporter.clone(), *page);
                if w.cases.contains(&k) {
                    let l = loc(c.start, c.end);
                    ix.cases.entry(k).or_default().push(CaseSeen {
                        pin: pin.clone(),
                        year: *year,
                        order: (spot.places.di, spot.number),
                        star: l.star,
                        loc: l.loc,
                    });
                }
            }
        }
        if statutes {
            for c in extract::statutes_and_ids(text, &cases) {
                if let Key::Statute { code, section } = &c.key {
                    for k in [
                        (code.clone(), section.clone()),
                        (code.clone(), base_section(section)),
                    ] {
                        if w.statutes.contains(&k) {
                            record(&mut ix.statutes, k, loc(c.start, c.end));
                        }
                    }
                }
            }
        }
    }

    /// Quotations: every anchor found in one pass per page, then checked in full; later
    /// parts of a quotation may be on later pages of the same file.
    fn quotations(&self, ix: &mut Index, pages: &[Page], places: &Places) {
        let n = self.quotes.len();
        let mut found = vec![false; n];
        let mut later = Later::default();
        let mut spots = Vec::new();
        for (pi, (number, bates, text)) in pages.iter().enumerate() {
            spots.clear();
            self.keys
                .candidates(text, |qi, start| spots.push((start, qi)));
            // In page order, so each quotation is located at its first occurrence.
            spots.sort_unstable();
            for &(start, id) in &spots {
                let qi = id % n;
                if found[qi] {
                    continue;
                }
                let segs = &self.quotes[qi];
                let anchor = segs[0].anchor();
                if id >= n {
                    if text.as_bytes()[start..].starts_with(self.firsts[qi].as_bytes()) {
                        ix.quote_openings.insert(self.wanted.quotes[qi].clone());
                    }
                    continue;
                }
                if !text.as_bytes()[start..].starts_with(anchor.as_bytes()) {
                    continue;
                }
                if let Some((s, e)) = quote_at(qi, segs, pages, pi, start, &mut later) {
                    found[qi] = true;
                    record(
                        &mut ix.quotes,
                        self.wanted.quotes[qi].clone(),
                        places.at(*number, bates, text, s, e),
                    );
                }
            }
        }
    }
}

/// One page's places: the page, its stamp and text.
struct Spot<'a> {
    places: &'a Places<'a>,
    number: u32,
    bates: &'a Option<String>,
    text: &'a str,
}

impl Spot<'_> {
    /// The place of bytes `s..e` of the page, with a snippet around them.
    #[inline]
    fn at(&self, s: usize, e: usize) -> Located {
        self.places.at(self.number, self.bates, self.text, s, e)
    }
}

/// A page of a document: its number, its stamp, and its normalised text.
type Page = (u32, Option<String>, String);

/// The pages of a document, numbered from 1, with their stamps and normalised text; and
/// the numbers of the pages with no text.
fn normalised_pages(raw: &[String]) -> (Vec<Page>, Vec<u32>) {
    let mut empty = Vec::new();
    let pages = raw
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if r.trim().is_empty() {
                empty.push(i as u32 + 1);
            }
            // A transcript's line numbers would cut every quotation of its testimony.
            let text = match super::transcript::without_line_numbers(r) {
                Some(t) => normalize(&t),
                None => normalize(r),
            };
            (i as u32 + 1, crate::sources::stamp_of(r), text)
        })
        .collect();
    (pages, empty)
}

/// Places in one document: file, page, stamp, opinion page and snippet.
struct Places<'a> {
    di: usize,
    path: &'a str,
    stars: &'a super::stars::Stars,
}

impl Places<'_> {
    /// The place of bytes `s..e` of page `number`, with a snippet around them.
    #[inline]
    fn at(&self, number: u32, bates: &Option<String>, text: &str, s: usize, e: usize) -> Located {
        self.located(number, bates, s, snippet(text, s, e), (s, e))
    }

    /// A page's place without a snippet: for a stamp, or a page of an exhibit.
    #[inline]
    fn bare(&self, number: u32, bates: &Option<String>) -> Located {
        self.located(number, bates, 0, String::new(), (0, 0))
    }

    #[inline]
    fn located(
        &self,
        number: u32,
        bates: &Option<String>,
        at: usize,
        snippet: String,
        span: (usize, usize),
    ) -> Located {
        let star = self.stars.at(number, at);
        Located {
            order: (self.di, number),
            star,
            loc: Location {
                file: self.path.to_string(),
                page: number,
                bates: bates.clone(),
                star: star.filter(|&n| n > 0),
                snippet,
                span,
            },
        }
    }
}

/// Slip sheets and exhibit indexes: a page that says only `Exhibit B` (and its stamp)
/// starts exhibit B, whose pages follow; an index table gives exhibits' Bates ranges.
fn exhibits(ix: &mut Index, pages: &[Page], raw: &[String], places: &Places) {
    let mut current: Option<String> = None;
    for ((number, bates, text), original) in pages.iter().zip(raw) {
        if let Some(label) = slip_sheet(text, bates.as_deref()) {
            ix.exhibit_pages.entry(label.clone()).or_default();
            current = Some(label);
            continue;
        }
        if let Some(label) = &current {
            ix.exhibit_pages
                .entry(label.clone())
                .or_default()
                .push(places.bare(*number, bates));
        }
        if original.contains("Exhibit") && original.contains('|') {
            for (label, range) in exhibit_index_rows(original) {
                ix.exhibit_ranges.entry(label).or_insert(range);
            }
        }
    }
}

/// The exhibit a file is named for: `Exhibit 12.pdf`, `Ex_12.pdf`, `EX. C - Lease.pdf`,
/// `12 - Lease.pdf` (label `12`, `C`); `None` for any other name.
pub(super) fn exhibit_of_file(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next()?;
    let stem = match name.rsplit_once('.') {
        Some((s, ext))
            if !s.is_empty()
                && ext.len() <= 5
                && ext.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            s
        }
        _ => name,
    };
    let number = |l: &str| l.trim_start_matches('0').to_string();
    let lower = stem.to_ascii_lowercase();
    if let Some(p) = ["exhibit", "exh", "ex"]
        .iter()
        .find(|p| lower.starts_with(**p))
    {
        let rest = &stem[p.len()..];
        let t = rest.trim_start_matches(['.', ' ', '_', '-']);
        let separated = t.len() < rest.len();
        let label: String = t.chars().take_while(char::is_ascii_alphanumeric).collect();
        let ends = t[label.len()..].is_empty()
            || t[label.len()..].starts_with([' ', '_', '-', '.', '(', ')', '–']);
        let digits = label.bytes().all(|b| b.is_ascii_digit());
        let letters = label.bytes().all(|b| b.is_ascii_alphabetic());
        return (!label.is_empty()
            && label.len() <= 3
            && ends
            && (digits || separated && letters && label.len() <= 2))
            .then(|| {
                if digits {
                    number(&label)
                } else {
                    label.to_ascii_uppercase()
                }
            })
            .filter(|l| !l.is_empty());
    }
    let digits = stem.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=3).contains(&digits) {
        return None;
    }
    let after = &stem[digits..];
    let dashed = after
        .trim_start()
        .strip_prefix(['-', '–'])
        .is_some_and(|r| r.starts_with(' '));
    let underscored = after
        .strip_prefix('_')
        .is_some_and(|r| r.starts_with(|c: char| c.is_alphabetic()));
    (dashed || underscored)
        .then(|| number(&stem[..digits]))
        .filter(|l| !l.is_empty())
}

/// A page's Bates stamp, if it has one: its prefix's first page, and where the stamp is.
fn stamp(ix: &mut Index, number: u32, bates: &Option<String>, places: &Places) {
    let Some(b) = bates else { return };
    let split = b.find(|c: char| c.is_ascii_digit()).unwrap_or(b.len());
    let (prefix, digits) = b.split_at(split);
    let prefix = prefix.trim_end_matches([' ', '_', '-']).to_string();
    if let Ok(n) = digits.parse() {
        ix.seen_prefixes
            .entry(prefix.clone())
            .or_insert((places.di, number));
        keep_first(
            &mut ix.stamps,
            (prefix.to_ascii_uppercase(), n),
            places.bare(number, bates),
        );
    }
}

/// A position in one document: page index, byte offset.
type At = (usize, usize);

/// Where a quotation's later part was last looked for in a document, and what was found:
/// the first match at or after that point (page, start, end). Hits of a first part come in
/// document order, so each later part's search moves forward only, and a document with many
/// hits of a common opening is still searched once per part.
#[derive(Default)]
struct Later(HashMap<(usize, usize), (At, Found)>);

/// A match of a quotation's part: page index, start, end.
type Found = Option<(usize, usize, usize)>;

impl Later {
    fn find(
        &mut self,
        key: (usize, usize),
        seg: &Segment,
        pages: &[(u32, Option<String>, String)],
        from: At,
    ) -> Found {
        if let Some(&(searched, found)) = self.0.get(&key) {
            // The first match from `searched` is the first from `from` too, when `from` lies
            // between them (the parts' patterns look at no text before a match).
            if searched <= from && found.is_none_or(|(p, s, _)| from <= (p, s)) {
                return found;
            }
        }
        let (mut page, mut at) = from;
        let found = loop {
            if let Some((s, e)) = seg.find(&pages[page].2, at) {
                break Some((page, s, e));
            }
            page += 1;
            at = 0;
            if page >= pages.len() {
                break None;
            }
        };
        self.0.insert(key, (from, found));
        found
    }
}

/// The whole quotation `qi`, its first part's anchor at `hit` on page `pi` of one document;
/// the span on that page. Later parts may be on later pages of the same document.
fn quote_at(
    qi: usize,
    segs: &[Segment],
    pages: &[(u32, Option<String>, String)],
    pi: usize,
    hit: usize,
    later: &mut Later,
) -> Option<(usize, usize)> {
    let text = &pages[pi].2;
    let (s0, mut e) = segs[0].match_around(text, hit)?;
    let mut cur = pi;
    for (k, m) in segs.iter().enumerate().skip(1) {
        let (page, _, end) = later.find((qi, k), m, pages, (cur, e))?;
        cur = page;
        e = end;
    }
    Some((s0, if cur == pi { e } else { text.len() }))
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

#[cfg(test)]
mod tests {
    use super::exhibit_of_file;

    #[test]
    fn files_named_for_exhibits() {
        let got = |p: &str| exhibit_of_file(p);
        assert_eq!(got("exhibits/Exhibit 12.pdf").as_deref(), Some("12"));
        assert_eq!(got("Ex_12.pdf").as_deref(), Some("12"));
        assert_eq!(got("EX. C - Lease.pdf").as_deref(), Some("C"));
        assert_eq!(got("exh-004.txt").as_deref(), Some("4"));
        assert_eq!(got("12 - Lease.pdf").as_deref(), Some("12"));
        assert_eq!(got("3_Photographs.pdf").as_deref(), Some("3"));
        for other in [
            "Exam notes.pdf",
            "Executive Summary.pdf",
            "2019-01-05 letter.pdf",
            "1040.pdf",
            "lease.pdf",
            "12-month plan.pdf",
        ] {
            assert_eq!(got(other), None, "{other}");
        }
    }
}
