//! An index of what the evidence says about the draft's claims, built in one streaming pass:
//! each source file is read, normalised, scanned and dropped, so memory stays near the size
//! of a few files however large the evidence. One thread per core (up to eight) takes files
//! from a shared queue.
//!
//! Only what the draft claims is recorded (its dates, amounts, cases, statutes, quotations),
//! plus every page's Bates stamp; each claim is then one hash lookup.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use regex::Regex;

use super::evidence::{Doc, Evidence, SourceFile};
use super::extract;
use super::needs::{Needs, Numbers};
use super::wordkeys::Keys;
use super::{normalize, Claim, Key, Location, Outcome, Status};

/// A page of an exhibit: (file index, page number) and where it is.
type ExhibitPage = ((usize, u32), Location);

/// What the draft claims, so the evidence pass records only what could support it.
#[derive(Default)]
pub struct Wanted {
    dates: HashSet<(i32, u32, u32)>,
    money: HashSet<i64>,
    percents: HashSet<i64>,
    cases: HashSet<(u32, String, u32)>,
    statutes: HashSet<(String, String)>,
    quotes: Vec<String>,
    /// The numbers each kind of claim needs on a page, so that pages without them are not
    /// scanned for that kind at all.
    needs: Needs,
    /// Reporter abbreviations accepted beyond the catalogue, read the same way in the evidence.
    pub allowed: super::Allowed,
}

impl Wanted {
    pub fn of(claims: &[Claim]) -> Wanted {
        let mut w = Wanted::default();
        let mut n = Needs::default();
        for c in claims {
            n.add(&c.key);
            match &c.key {
                Key::Date { year, month, day } => {
                    w.dates.insert((*year, *month, *day));
                }
                Key::Money { cents } => {
                    w.money.insert(*cents);
                }
                Key::Percent { thousandths } => {
                    w.percents.insert(*thousandths);
                }
                Key::Case {
                    volume,
                    reporter,
                    page,
                    ..
                } => {
                    w.cases.insert((*volume, reporter.clone(), *page));
                }
                Key::Statute { code, section } => {
                    w.statutes.insert((code.clone(), section.clone()));
                    w.statutes.insert((code.clone(), base_section(section)));
                }
                Key::Quote { text } if !w.quotes.contains(text) => w.quotes.push(text.clone()),
                _ => {}
            }
        }
        w.needs = n;
        w
    }
}

fn base_section(s: &str) -> String {
    s.split('(').next().unwrap_or(s).to_string()
}

#[derive(Clone, Debug)]
struct CaseSeen {
    pin: Option<String>,
    year: Option<u16>,
    /// (file, page) order, so that merged results keep the first sighting first.
    order: (usize, u32),
    loc: Location,
}

/// The index. Locations are recorded at their first occurrence in source order.
#[derive(Default)]
pub struct Index {
    files: Vec<SourceFile>,
    dates: HashMap<(i32, u32, u32), Places>,
    money: HashMap<i64, Places>,
    percents: HashMap<i64, Places>,
    cases: HashMap<(u32, String, u32), Vec<CaseSeen>>,
    statutes: HashMap<(String, String), Places>,
    /// Quotation text → where all of it was found.
    quotes: HashMap<String, Places>,
    /// Quotations whose first three words appear somewhere.
    quote_openings: HashSet<String>,
    stamps: HashMap<(String, u64), Located>,
    /// Exhibits found by their slip sheets (`Exhibit B` alone on a page): label → the pages
    /// after the sheet, in order.
    exhibit_pages: HashMap<String, Vec<Located>>,
    /// Exhibits listed in an exhibit index (`| Exhibit | Description | Bates range | …`):
    /// label → Bates prefix and range.
    exhibit_ranges: HashMap<String, (String, u64, u64)>,
    /// Bates prefixes: stamped ones where first seen, then declared ones.
    prefixes: Vec<String>,
    /// While scanning: stamped prefixes and where each was first seen; the documents read,
    /// by number, so that files come out in source order whichever thread read them.
    seen_prefixes: HashMap<String, (usize, u32)>,
    file_ids: Vec<usize>,
}

/// A location with its place in source order.
#[derive(Clone, Debug)]
struct Located {
    order: (usize, u32),
    loc: Location,
}

/// Every page a fact is on, and the first of them with its place on the page.
#[derive(Clone, Debug)]
struct Places {
    first: Located,
    pages: Vec<(usize, u32)>,
}

/// Records a fact's place: every page it is on, the first one in full.
fn record<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Places>, k: K, v: Located) {
    match map.get_mut(&k) {
        Some(p) => {
            if !p.pages.contains(&v.order) {
                p.pages.push(v.order);
            }
            if v.order < p.first.order {
                p.first = v;
            }
        }
        None => {
            map.insert(
                k,
                Places {
                    pages: vec![v.order],
                    first: v,
                },
            );
        }
    }
}

fn merge_places<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Places>, other: HashMap<K, Places>) {
    for (k, o) in other {
        match map.get_mut(&k) {
            Some(p) => {
                for pg in o.pages {
                    if !p.pages.contains(&pg) {
                        p.pages.push(pg);
                    }
                }
                if o.first.order < p.first.order {
                    p.first = o.first;
                }
            }
            None => {
                map.insert(k, o);
            }
        }
    }
}

fn keep_first<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Located>, k: K, v: Located) {
    match map.get(&k) {
        Some(old) if old.order <= v.order => {}
        _ => {
            map.insert(k, v);
        }
    }
}

impl Index {
    /// Reads every source once and records what the wanted claims need.
    pub fn build(wanted: &Wanted, ev: &Evidence) -> Index {
        let quotes: Vec<Vec<Segment>> = wanted.quotes.iter().map(|q| quote_segments(q)).collect();
        // Candidate `qi` is quotation `qi`'s first part; candidate `quotes.len() + qi` its
        // first three words, to tell a misquotation from an invention.
        let firsts: Vec<String> = quotes
            .iter()
            .map(|segs| match segs.as_slice() {
                [only] if only.anchor().split(' ').count() > 4 => only
                    .anchor()
                    .split(' ')
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            })
            .collect();
        let mut openings: Vec<(&str, bool)> = quotes
            .iter()
            .map(|segs| (segs.first().map_or("", |s| s.anchor().trim()), false))
            .collect();
        openings.extend(firsts.iter().map(|f| (f.as_str(), true)));
        let keys = Keys::new(&openings);
        let scanner = Scanner {
            wanted,
            quotes: &quotes,
            keys: &keys,
            firsts: &firsts,
        };
        // Threads take the next file as they finish one, so one large file does not leave
        // the others idle; each holds one file at a time.
        let next = AtomicUsize::new(0);
        let threads = std::thread::available_parallelism()
            .map_or(2, usize::from)
            .clamp(1, MAX_THREADS)
            .min(ev.sources.len().max(1));
        let mut ix = std::thread::scope(|s| {
            let helpers: Vec<_> = (1..threads)
                .map(|_| s.spawn(|| scanner.scan(ev, &next)))
                .collect();
            let mut ix = scanner.scan(ev, &next);
            for h in helpers {
                ix.merge(h.join().unwrap_or_default());
            }
            ix
        });
        let mut files: Vec<(usize, SourceFile)> = std::mem::take(&mut ix.file_ids)
            .into_iter()
            .zip(std::mem::take(&mut ix.files))
            .collect();
        files.sort_by_key(|(id, _)| *id);
        ix.files = files.into_iter().map(|(_, f)| f).collect();
        let mut stamped: Vec<(String, (usize, u32))> = ix.seen_prefixes.drain().collect();
        stamped.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        ix.prefixes = stamped.into_iter().map(|(p, _)| p).collect();
        for p in &ev.declared_prefixes {
            if !ix.prefixes.iter().any(|x| x.eq_ignore_ascii_case(p)) {
                ix.prefixes.push(p.clone());
            }
        }
        ix
    }

    fn merge(&mut self, other: Index) {
        self.files.extend(other.files);
        self.file_ids.extend(other.file_ids);
        for (p, at) in other.seen_prefixes {
            let e = self.seen_prefixes.entry(p).or_insert(at);
            *e = (*e).min(at);
        }
        merge_places(&mut self.dates, other.dates);
        merge_places(&mut self.money, other.money);
        merge_places(&mut self.percents, other.percents);
        merge_places(&mut self.statutes, other.statutes);
        merge_places(&mut self.quotes, other.quotes);
        for (k, v) in other.stamps {
            keep_first(&mut self.stamps, k, v);
        }
        for (k, v) in other.exhibit_pages {
            self.exhibit_pages.entry(k).or_insert(v);
        }
        for (k, v) in other.exhibit_ranges {
            self.exhibit_ranges.entry(k).or_insert(v);
        }
        for (k, mut v) in other.cases {
            let e = self.cases.entry(k).or_default();
            e.append(&mut v);
            e.sort_by_key(|s| s.order);
        }
        self.quote_openings.extend(other.quote_openings);
    }

    /// The source files read, in order, with any that could not be read.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The Bates prefixes of these sources: declared ones, and those stamped on pages.
    pub fn bates_prefixes(&self) -> Vec<String> {
        self.prefixes.clone()
    }

    fn unreadable_note(&self) -> String {
        let bad: Vec<&str> = self
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

    /// The pages a cite (a Bates number or range) names that some source is stamped with:
    /// their places in source order and their locations. A range names every page between
    /// its ends (at most 10,000).
    pub fn cited_pages(&self, key: &Key) -> Vec<((usize, u32), Location)> {
        if let Key::Exhibit { label, pages } = key {
            return self.exhibit(label, *pages).unwrap_or_default();
        }
        let (prefix, from, to) = match key {
            Key::Bates { prefix, number } => (prefix, *number, *number),
            Key::BatesRange { prefix, from, to } if from <= to => {
                (prefix, *from, (*to).min(from + 10_000))
            }
            _ => return Vec::new(),
        };
        let p = prefix.to_ascii_uppercase();
        (from..=to)
            .filter_map(|n| self.stamps.get(&(p.clone(), n)))
            .map(|l| (l.order, l.loc.clone()))
            .collect()
    }

    /// The pages of an exhibit (all of them, or pages `from..=to` of it): by its slip sheet
    /// in a binder, else by its Bates range in an exhibit index. `Err` says why not.
    fn exhibit(&self, label: &str, pages: Option<(u32, u32)>) -> Result<Vec<ExhibitPage>, String> {
        let pick = |n: usize| -> Result<(usize, usize), String> {
            match pages {
                None => Ok((0, n)),
                Some((a, b)) if a >= 1 && a <= b && (b as usize) <= n => {
                    Ok((a as usize - 1, b as usize))
                }
                Some((a, b)) => Err(format!(
                    "Exhibit {label} has {n} page{}, so it has no page{} {}",
                    if n == 1 { "" } else { "s" },
                    if a == b { "" } else { "s" },
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                )),
            }
        };
        if let Some(all) = self.exhibit_pages.get(label) {
            let (a, b) = pick(all.len())?;
            return Ok(all[a..b].iter().map(|l| (l.order, l.loc.clone())).collect());
        }
        if let Some((prefix, from, to)) = self.exhibit_ranges.get(label) {
            let n = (to.saturating_sub(*from) + 1) as usize;
            let (a, b) = pick(n)?;
            let p = prefix.to_ascii_uppercase();
            let found: Vec<((usize, u32), Location)> = (from + a as u64..from + b as u64)
                .filter_map(|k| self.stamps.get(&(p.clone(), k)))
                .map(|l| (l.order, l.loc.clone()))
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "the exhibit index gives Exhibit {label} as {prefix}{from:06}–{prefix}{to:06}, but no source page is stamped with those numbers"
                ));
            }
            return Ok(found);
        }
        Err(
            if self.exhibit_pages.is_empty() && self.exhibit_ranges.is_empty() {
                format!(
                "the sources have no slip sheets or exhibit index to find Exhibit {label} in; add the binder or its index to the sources, or cite Bates numbers"
            )
            } else {
                let mut known: Vec<&String> = self
                    .exhibit_pages
                    .keys()
                    .chain(self.exhibit_ranges.keys())
                    .collect();
                known.sort();
                known.dedup();
                format!(
                    "there is no Exhibit {label} (the exhibits are {})",
                    known
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
        )
    }

    /// Every page a supported fact is on.
    fn pages_of(&self, key: &Key) -> Vec<(usize, u32)> {
        let places = match key {
            Key::Date { year, month, day } => self.dates.get(&(*year, *month, *day)),
            Key::Money { cents } => self.money.get(cents),
            Key::Percent { thousandths } => self.percents.get(thousandths),
            Key::Statute { code, section } => {
                let mut v: Vec<(usize, u32)> = Vec::new();
                for k in [
                    (code.clone(), section.clone()),
                    (code.clone(), base_section(section)),
                ] {
                    if let Some(p) = self.statutes.get(&k) {
                        v.extend(&p.pages);
                    }
                }
                return v;
            }
            Key::Quote { text } => self.quotes.get(text),
            Key::Case {
                volume,
                reporter,
                page,
                ..
            } => {
                return self
                    .cases
                    .get(&(*volume, reporter.clone(), *page))
                    .map(|seen| seen.iter().map(|s| s.order).collect())
                    .unwrap_or_default()
            }
            _ => None,
        };
        places.map(|p| p.pages.clone()).unwrap_or_default()
    }

    /// Checks a claim that its sentence cites to `cited` pages: supported only if it is on
    /// one of them; found elsewhere, `miscited`, naming where it really is.
    pub fn check_cited(&self, claim: Claim, cited: &[((usize, u32), Location)]) -> Outcome {
        let mut o = self.check(claim);
        o.cited = cited.iter().map(|(_, l)| l.clone()).collect();
        if cited.is_empty() || o.status != Status::Supported {
            return o;
        }
        let pages = self.pages_of(&o.claim.key);
        if let Some((_, l)) = cited.iter().find(|(at, _)| pages.contains(at)) {
            if o.source
                .as_ref()
                .is_none_or(|s| (&s.file, s.page) != (&l.file, l.page))
            {
                o.source = Some(l.clone());
            }
            return o;
        }
        let name = |l: &Location| {
            l.bates
                .clone()
                .unwrap_or_else(|| format!("{} page {}", l.file, l.page))
        };
        let cited_names: Vec<String> = cited.iter().map(|(_, l)| name(l)).collect();
        let actual = o.source.as_ref().map(name).unwrap_or_default();
        o.status = Status::Miscited;
        o.reason = Some(format!(
            "found on {actual}, not on the cited {} {}; cite {actual} instead",
            if cited_names.len() == 1 {
                "page"
            } else {
                "pages"
            },
            cited_names.join(", ")
        ));
        o
    }

    /// Checks every claim.
    pub fn check_all(&self, claims: Vec<Claim>) -> Vec<Outcome> {
        claims.into_iter().map(|c| self.check(c)).collect()
    }

    /// Checks one claim.
    pub fn check(&self, claim: Claim) -> Outcome {
        let found: Result<Location, String> = match &claim.key {
            Key::Unresolved(why) | Key::Unrecognized(why) => Err(why.clone()),
            Key::Date { year, month, day } => self
                .dates
                .get(&(*year, *month, *day))
                .map(|l| l.first.loc.clone())
                .ok_or_else(|| {
                    format!("no page of the sources gives the date {year:04}-{month:02}-{day:02}")
                }),
            Key::Money { cents } => self
                .money
                .get(cents)
                .map(|l| l.first.loc.clone())
                .ok_or_else(|| format!("the amount {} appears in no source", claim.text.trim())),
            Key::Percent { thousandths } => self
                .percents
                .get(thousandths)
                .map(|l| l.first.loc.clone())
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
            Key::Statute { code, section } => self
                .statutes
                .get(&(code.clone(), section.clone()))
                .or_else(|| self.statutes.get(&(code.clone(), base_section(section))))
                .map(|l| l.first.loc.clone())
                .ok_or_else(|| format!("{} is cited in no source", claim.text.trim())),
            Key::Bates { prefix, number } => self
                .stamps
                .get(&(prefix.to_ascii_uppercase(), *number))
                .map(|l| l.loc.clone())
                .ok_or_else(|| format!("no page of the sources is stamped {}", claim.text.trim())),
            Key::Exhibit { label, pages } => self.exhibit(label, *pages).and_then(|v| {
                v.into_iter()
                    .next()
                    .map(|(_, l)| l)
                    .ok_or_else(|| format!("Exhibit {label} has no pages"))
            }),
            Key::BatesRange { prefix, from, to } => {
                let p = prefix.to_ascii_uppercase();
                let w = width_of(&claim.text);
                match (
                    self.stamps.get(&(p.clone(), *from)),
                    self.stamps.get(&(p, *to)),
                ) {
                    _ if from > to => Err("the range ends before it starts".into()),
                    (Some(s), Some(_)) => Ok(s.loc.clone()),
                    (None, _) => Err(format!("no page is stamped {prefix}{from:0w$}")),
                    (_, None) => Err(format!("no page is stamped {prefix}{to:0w$}")),
                }
            }
            Key::Quote { text } => self
                .quotes
                .get(text)
                .map(|l| l.first.loc.clone())
                .ok_or_else(|| {
                    let segs = quote_segments(text);
                    match segs.first() {
                        None => "the quotation has no words to look for".into(),
                        Some(s) if s.anchor().trim().is_empty() => {
                            "the quotation is all bracketed alterations".into()
                        }
                        Some(_) if segs.len() > 1 => {
                            "its words do not appear in order in any one source".into()
                        }
                        Some(_) if self.quote_openings.contains(text) => {
                            "a source has its opening words, but the rest differs".into()
                        }
                        Some(_) => "no source has these words".into(),
                    }
                }),
        };
        match found {
            Ok(loc) => Outcome {
                claim,
                status: Status::Supported,
                source: Some(loc),
                reason: None,
                cited: Vec::new(),
            },
            Err(why) => Outcome {
                status: if matches!(claim.key, Key::Unrecognized(_)) {
                    Status::Unrecognized
                } else {
                    Status::Unsupported
                },
                claim,
                source: None,
                reason: Some(format!("{why}{}", self.unreadable_note())),
                cited: Vec::new(),
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
    ) -> Result<Location, Option<String>> {
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
            let matches = |s: &CaseSeen| {
                s.pin
                    .as_ref()
                    .is_some_and(|sp| sp == p || first(sp) == first(p) || pin_within(sp, p))
            };
            if let Some(s) = pinned.iter().find(|s| matches(s)) {
                return Ok(s.loc.clone());
            }
            if !pinned.is_empty() {
                let theirs: Vec<&str> = pinned.iter().filter_map(|s| s.pin.as_deref()).collect();
                return Err(Some(format!(
                    "the sources cite this case at {}, not at {p}",
                    theirs.join(", ")
                )));
            }
        }
        Ok(seen[0].loc.clone())
    }
}

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
const MAX_THREADS: usize = 8;

/// One thread's share of the scanning.
struct Scanner<'a> {
    wanted: &'a Wanted,
    quotes: &'a [Vec<Segment>],
    /// Where each quotation's first part may begin.
    keys: &'a Keys,
    /// Each quotation's first three words, if it is one part of more than four words.
    firsts: &'a [String],
}

impl Scanner<'_> {
    /// Scans files, taking the next unread one each time, until none is left.
    fn scan(&self, ev: &Evidence, next: &AtomicUsize) -> Index {
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
                Doc::Pages { path, pages } => self.scan_doc(&mut ix, di, path, &pages),
            }
        }
    }

    fn scan_doc(&self, ix: &mut Index, di: usize, path: String, raw: &[String]) {
        let mut empty = Vec::new();
        let pages: Vec<(u32, Option<String>, String)> = raw
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if r.trim().is_empty() {
                    empty.push(i as u32 + 1);
                }
                (i as u32 + 1, crate::sources::stamp_of(r), normalize(r))
            })
            .collect();
        let loc = |number: u32, bates: &Option<String>, text: &str, s: usize, e: usize| Located {
            order: (di, number),
            loc: Location {
                file: path.clone(),
                page: number,
                bates: bates.clone(),
                snippet: snippet(text, s, e),
                span: (s, e),
            },
        };
        // Slip sheets: a page that says only `Exhibit B` (and its stamp) starts exhibit B.
        let mut current: Option<String> = None;
        for ((number, bates, text), original) in pages.iter().zip(raw) {
            if let Some(label) = slip_sheet(text, bates.as_deref()) {
                ix.exhibit_pages.entry(label.clone()).or_default();
                current = Some(label);
                continue;
            }
            if let Some(label) = &current {
                let mut l = loc(*number, bates, text, 0, 0);
                l.loc.snippet.clear();
                ix.exhibit_pages.entry(label.clone()).or_default().push(l);
            }
            if original.contains("Exhibit") && original.contains('|') {
                for (label, range) in exhibit_index_rows(original) {
                    ix.exhibit_ranges.entry(label).or_insert(range);
                }
            }
        }
        for (number, bates, text) in &pages {
            if let Some(b) = bates {
                let split = b.find(|c: char| c.is_ascii_digit()).unwrap_or(b.len());
                let (prefix, digits) = b.split_at(split);
                let prefix = prefix.trim_end_matches([' ', '_', '-']).to_string();
                if let Ok(n) = digits.parse() {
                    ix.seen_prefixes
                        .entry(prefix.clone())
                        .or_insert((di, *number));
                    let mut l = loc(*number, bates, text, 0, 0);
                    l.loc.snippet.clear();
                    keep_first(&mut ix.stamps, (prefix.to_ascii_uppercase(), n), l);
                }
            }
            let w = self.wanted;
            let numbers = Numbers::of(text);
            if w.needs.dates(&numbers) {
                for c in extract::dates(text) {
                    if let Key::Date { year, month, day } = c.key {
                        if w.dates.contains(&(year, month, day)) {
                            record(
                                &mut ix.dates,
                                (year, month, day),
                                loc(*number, bates, text, c.start, c.end),
                            );
                        }
                    }
                }
            }
            if w.needs.amounts(&numbers) {
                for c in extract::amounts(text) {
                    match c.key {
                        Key::Money { cents } if w.money.contains(&cents) => record(
                            &mut ix.money,
                            cents,
                            loc(*number, bates, text, c.start, c.end),
                        ),
                        Key::Percent { thousandths } if w.percents.contains(&thousandths) => {
                            record(
                                &mut ix.percents,
                                thousandths,
                                loc(*number, bates, text, c.start, c.end),
                            )
                        }
                        _ => {}
                    }
                }
            }
            let statutes = w.needs.statutes(&numbers);
            // `Id.` after a statute is resolved against the page's cases too.
            if w.needs.cases(&numbers) || statutes {
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
                            ix.cases.entry(k).or_default().push(CaseSeen {
                                pin: pin.clone(),
                                year: *year,
                                order: (di, *number),
                                loc: loc(*number, bates, text, c.start, c.end).loc,
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
                                    record(
                                        &mut ix.statutes,
                                        k,
                                        loc(*number, bates, text, c.start, c.end),
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        // Quotations: every anchor found in one pass per page, then checked in full; later
        // parts of a quotation may be on later pages of the same file.
        if !self.quotes.is_empty() {
            let n = self.quotes.len();
            let mut found = vec![false; n];
            let mut later = Later::default();
            let mut places = Vec::new();
            for (pi, (number, bates, text)) in pages.iter().enumerate() {
                places.clear();
                self.keys
                    .candidates(text, |qi, start| places.push((start, qi)));
                // In page order, so each quotation is located at its first occurrence.
                places.sort_unstable();
                for &(start, id) in &places {
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
                    if let Some((s, e)) = quote_at(qi, segs, &pages, pi, start, &mut later) {
                        found[qi] = true;
                        record(
                            &mut ix.quotes,
                            self.wanted.quotes[qi].clone(),
                            loc(*number, bates, text, s, e),
                        );
                    }
                }
            }
        }
        ix.files.push(SourceFile {
            path,
            pages: raw.len() as u32,
            problem: None,
            empty_pages: empty,
        });
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

/// A quotation's parts between ellipses, normalised, with the punctuation at their ends
/// dropped (a draft may end a quotation with a comma where the source has a full stop).
fn quote_segments(quote: &str) -> Vec<Segment> {
    normalize(quote)
        .replace(". . .", "...")
        .split("...")
        .map(|s| {
            s.trim()
                .trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.' | '"' | '\''))
                .trim()
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .map(|s| Segment::new(&s))
        .collect()
}

/// One part of a quotation between ellipses. Bracketed alterations are allowed: a changed
/// letter's case (`[T]he`) and a small insertion in place of up to three words (`[the
/// landlord]`).
enum Segment {
    Literal(String, Box<memchr::memmem::Finder<'static>>),
    Altered { pattern: Regex, anchor: String },
}

impl Segment {
    fn literal(s: &str) -> Segment {
        Segment::Literal(
            s.to_string(),
            Box::new(memchr::memmem::Finder::new(s.as_bytes()).into_owned()),
        )
    }

    fn new(s: &str) -> Segment {
        if !s.contains('[') {
            return Segment::literal(s);
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
            Err(_) => Segment::literal(s),
        }
    }

    fn anchor(&self) -> &str {
        match self {
            Segment::Literal(s, _) => s,
            Segment::Altered { anchor, .. } => anchor,
        }
    }

    /// A match that contains the anchor hit at `hit`.
    fn match_around(&self, text: &str, hit: usize) -> Option<(usize, usize)> {
        match self {
            Segment::Literal(s, _) => Some((hit, hit + s.len())),
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
            Segment::Literal(s, finder) => finder
                .find(&text.as_bytes()[from..])
                .map(|i| (from + i, from + i + s.len())),
            Segment::Altered { pattern, .. } => pattern
                .find(&text[from..])
                .map(|m| (from + m.start(), from + m.end())),
        }
    }
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
        verify(draft, &evidence())
            .outcomes
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
        let draft = "On June 2, 2022 rent was $2,510.00 (SMITH000009). \"Landlord shall commence repairs within ninety days.\" 10 Cal. 3d 616, 640 (1974); 11 Cal. 3d 616; 10 Cal. 3d 616 (1975). Cal. Civ. Code § 1942.4. RTX 3060.";
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
        assert!(
            reasons.iter().any(|r| r.contains("opening words")),
            "{reasons:#?}"
        );
    }

    /// Evidence and a draft full of numbers in every form, some claims changed by a digit:
    /// the page filter must give exactly what scanning every page gives.
    #[test]
    fn the_page_filter_changes_no_outcome() {
        // Numbers differ between snippets, so that each page needs its own rule to be read.
        const SNIPPETS: &[&str] = &[
            "$12,345.00",
            "USD 6,495.04",
            "$1.25 million",
            "$0.5 billion",
            "$77700",
            "$ 83.5",
            "US$ 3,000,000.10",
            "12.5%",
            "0.9996%",
            "98.9996 percent",
            "61 percent",
            "January 9, 2014",
            "Jan. 8, 2015",
            "Sept. 15, 2016",
            "6 January 2017",
            "01/07/2018",
            "1/4/24",
            "2019-01-03",
            "this 2nd day of January, 2020",
            "March 31, 1999",
            "Bush v. Gore, 531 U.S. 98, 99-100 (2000)",
            "Doe v. Poe, 123 F.3d 456 (9th Cir. 1997)",
            "531 U.S. at 99",
            "Id. at 100",
            "Bush, supra, at 101",
            "28 U.S.C. § 1332(a)",
            "42 U.S.C. §§ 1983-1985",
            "Cal. Civ. Code § 1942.4",
            "Fed. R. Civ. P. 11(b)(6)",
            "Id.",
            "7 F.3d 123456 (1996)",
            "17 Cal. 4th 1, 5 (1998)",
        ];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        // Changes one digit of a snippet.
        let alter = |s: &str, r: usize| -> String {
            let digits: Vec<usize> = s
                .match_indices(|c: char| c.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            let mut out = s.to_string();
            if let Some(&i) = digits.get(r % digits.len().max(1)) {
                let d = (s.as_bytes()[i] - b'0' + 1 + (r % 8) as u8) % 10;
                out.replace_range(i..=i, &d.to_string());
            }
            out
        };
        let mut ev = Evidence::new(vec!["SMITH".into()]);
        // One snippet a page, so that a page the filter wrongly skips is noticed.
        for f in 0..3 {
            let pages: Vec<String> = (0..40)
                .map(|p| {
                    let s = SNIPPETS[next(SNIPPETS.len())];
                    let s = if next(3) == 0 {
                        alter(s, next(100))
                    } else {
                        s.to_string()
                    };
                    format!("As stated, {s}.\nSMITH{:06}", 500_000 + f * 40 + p)
                })
                .collect();
            ev.add_pages(format!("f{f}.txt"), pages);
        }
        let mut draft = String::new();
        for s in SNIPPETS {
            draft.push_str(&format!(
                "{s}. {}. {}.\n",
                alter(s, next(100)),
                alter(s, next(100))
            ));
        }
        let claims = super::super::claims(&draft, &ev.declared_prefixes);
        let filtered = Wanted::of(&claims);
        let mut everything = Wanted::of(&claims);
        everything.needs = Needs::everything();
        let a = Index::build(&filtered, &ev).check_all(claims.clone());
        let b = Index::build(&everything, &ev).check_all(claims);
        assert!(a.len() > 60, "{}", a.len());
        let supported = a.iter().filter(|o| o.status == Status::Supported).count();
        assert!(
            supported > 20 && supported < a.len(),
            "{supported} of {}",
            a.len()
        );
        assert_eq!(a, b);
    }

    #[test]
    fn pins_inside_a_range_are_supported() {
        assert!(pin_within("99-101", "100"));
        assert!(!pin_within("99-101", "102"));
    }
}
