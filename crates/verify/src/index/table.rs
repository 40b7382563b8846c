//! The index's tables: what the draft claims, where each fact was first seen and on which
//! pages, and how the tables of several threads are merged.

use std::collections::{HashMap, HashSet};

use crate::claim::{Claim, Key, Location};
use crate::evidence::SourceFile;
use crate::needs::Needs;

use super::records;

/// A page of an exhibit: (file index, page number) and where it is.
pub(super) type ExhibitPage = ((usize, u32), Location);

/// What the draft claims, so the evidence pass records only what could support it.
#[derive(Default)]
pub struct Wanted {
    pub(super) dates: HashSet<(i32, u32, u32)>,
    pub(super) money: HashSet<i64>,
    pub(super) percents: HashSet<i64>,
    pub(super) cases: HashSet<(u32, String, u32)>,
    /// The volumes of reporters the draft cites, for the opinions among the sources whose
    /// pages a cite may fall on.
    pub(super) volumes: HashSet<(u32, String)>,
    pub(super) statutes: HashSet<(String, String)>,
    pub(super) quotes: Vec<String>,
    /// The filings of the record the draft cites (squashed: `compl`, `leedecl`).
    pub(super) records: Vec<String>,
    /// The numbers each kind of claim needs on a page, so that pages without them are not
    /// scanned for that kind at all.
    pub(super) needs: Needs,
    /// Reporter abbreviations accepted beyond the catalogue, read the same way in the evidence.
    pub allowed: crate::cites::Allowed,
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
                    w.volumes.insert((*volume, reporter.clone()));
                }
                Key::Statute { code, section } => {
                    w.statutes.insert((code.clone(), section.clone()));
                    w.statutes.insert((code.clone(), base_section(section)));
                }
                Key::Quote { text } if !w.quotes.contains(text) => w.quotes.push(text.clone()),
                Key::Record { document, .. }
                    if !document.is_empty() && !w.records.contains(document) =>
                {
                    w.records.push(document.clone())
                }
                _ => {}
            }
        }
        w.needs = n;
        w
    }
}

pub(super) fn base_section(s: &str) -> String {
    s.split('(').next().unwrap_or(s).to_string()
}

#[derive(Clone, Debug)]
pub(super) struct CaseSeen {
    pub(super) pin: Option<String>,
    pub(super) year: Option<u16>,
    /// (file, page) order, so that merged results keep the first sighting first.
    pub(super) order: (usize, u32),
    /// In a reported opinion: the opinion page it is on (0: the first).
    pub(super) star: Option<u32>,
    pub(super) loc: Location,
}

/// The index. Locations are recorded at their first occurrence in source order.
#[derive(Default)]
pub struct Index {
    pub(super) files: Vec<SourceFile>,
    pub(super) dates: HashMap<(i32, u32, u32), Places>,
    pub(super) money: HashMap<i64, Places>,
    pub(super) percents: HashMap<i64, Places>,
    pub(super) cases: HashMap<(u32, String, u32), Vec<CaseSeen>>,
    pub(super) statutes: HashMap<(String, String), Places>,
    /// Quotation text → where all of it was found.
    pub(super) quotes: HashMap<String, Places>,
    /// Quotations whose first three words appear somewhere.
    pub(super) quote_openings: HashSet<String>,
    pub(super) stamps: HashMap<(String, u64), Located>,
    /// Exhibits found by their slip sheets (`Exhibit B` alone on a page): label → the pages
    /// after the sheet, in order.
    pub(super) exhibit_pages: HashMap<String, Vec<Located>>,
    /// Exhibits listed in an exhibit index (`| Exhibit | Description | Bates range | …`):
    /// label → Bates prefix and range.
    pub(super) exhibit_ranges: HashMap<String, (String, u64, u64)>,
    /// Exhibits found by the names of their files.
    pub(super) exhibit_files: Vec<String>,
    /// Opinions among the sources that begin with their caption and citation, in source
    /// order: the case behind a citation to their pages.
    pub(super) authorities: Vec<Authority>,
    /// Reported opinions the sources carry with star markers, by the case's citation.
    pub(super) opinions: HashMap<(u32, String, u32), Opinion>,
    /// Filings of the record among the sources, by file.
    pub(super) records: Vec<records::RecordFile>,
    /// Bates prefixes: stamped ones where first seen, then declared ones.
    pub(super) prefixes: Vec<String>,
    /// While scanning: stamped prefixes and where each was first seen; the documents read,
    /// by number, so that files come out in source order whichever thread read them.
    pub(super) seen_prefixes: HashMap<String, (usize, u32)>,
    pub(super) file_ids: Vec<usize>,
}

/// A location with its place in source order.
#[derive(Clone, Debug)]
pub(super) struct Located {
    pub(super) order: (usize, u32),
    /// In a reported opinion with star markers: the opinion page (0: its first page).
    pub(super) star: Option<u32>,
    pub(super) loc: Location,
}

/// Marks an order's page as a reported opinion's page (by its star markers) rather than a
/// page of the file: `(file, STAR | 629)` is page 629 of the opinion file `file` carries,
/// `(file, STAR)` its first page.
pub(super) const STAR: u32 = 1 << 31;

/// A reported opinion carried by a source, with its star markers.
#[derive(Clone, Debug)]
pub(super) struct Opinion {
    pub(super) file: usize,
    pub(super) path: String,
    /// Each opinion page (0: the first) and the file's page it begins on.
    pub(super) starts: Vec<(u32, u32)>,
    /// Paged by its numbered paragraphs, from ¶ 1, rather than by its reporter's pages.
    pub(super) from_one: bool,
}

/// An opinion among the sources: the case its first page names and the reporter pages it
/// runs over.
#[derive(Clone, Debug)]
pub(super) struct Authority {
    pub(super) volume: u32,
    pub(super) reporter: String,
    pub(super) first: u32,
    /// The last reporter page, by its star markers; `None` without them.
    pub(super) last: Option<u32>,
    /// The caption as the source writes it (`United States v. ISS Marine Services, Inc.`).
    pub(super) caption: String,
    pub(super) file: usize,
    /// The first page of the file, the caption as its snippet.
    pub(super) loc: Location,
}

/// Every page a fact is on, and the first of them with its place on the page.
#[derive(Clone, Debug)]
pub(super) struct Places {
    pub(super) first: Located,
    pub(super) pages: Vec<(usize, u32)>,
}

/// Records a fact's place: every page it is on, the first one in full.
pub(super) fn record<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Places>, k: K, v: Located) {
    let star = v.star.map(|n| (v.order.0, STAR | n));
    match map.get_mut(&k) {
        Some(p) => {
            if !p.pages.contains(&v.order) {
                p.pages.push(v.order);
            }
            if let Some(s) = star.filter(|s| !p.pages.contains(s)) {
                p.pages.push(s);
            }
            if v.order < p.first.order {
                p.first = v;
            }
        }
        None => {
            map.insert(
                k,
                Places {
                    pages: std::iter::once(v.order).chain(star).collect(),
                    first: v,
                },
            );
        }
    }
}

pub(super) fn merge_places<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, Places>,
    other: HashMap<K, Places>,
) {
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

pub(super) fn keep_first<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Located>, k: K, v: Located) {
    match map.get(&k) {
        Some(old) if old.order <= v.order => {}
        _ => {
            map.insert(k, v);
        }
    }
}

impl Index {
    pub(super) fn merge(&mut self, other: Index) {
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
        for (k, v) in other.opinions {
            match self.opinions.get(&k) {
                Some(o) if o.file <= v.file => {}
                _ => {
                    self.opinions.insert(k, v);
                }
            }
        }
        self.exhibit_files.extend(other.exhibit_files);
        for (k, v) in other.exhibit_ranges {
            self.exhibit_ranges.entry(k).or_insert(v);
        }
        for (k, mut v) in other.cases {
            let e = self.cases.entry(k).or_default();
            e.append(&mut v);
            e.sort_by_key(|s| s.order);
        }
        self.quote_openings.extend(other.quote_openings);
        self.authorities.extend(other.authorities);
        self.authorities.sort_by_key(|a| a.file);
        self.records.extend(other.records);
    }

    /// The source files read, in order, with any that could not be read.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The Bates prefixes of these sources: declared ones, and those stamped on pages.
    pub fn bates_prefixes(&self) -> Vec<String> {
        self.prefixes.clone()
    }

    pub(super) fn unreadable_note(&self) -> String {
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
}
