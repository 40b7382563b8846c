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
    /// The filings of the record the draft cites (squashed: `compl`, `leedecl`).
    records: Vec<String>,
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

fn base_section(s: &str) -> String {
    s.split('(').next().unwrap_or(s).to_string()
}

#[derive(Clone, Debug)]
struct CaseSeen {
    pin: Option<String>,
    year: Option<u16>,
    /// (file, page) order, so that merged results keep the first sighting first.
    order: (usize, u32),
    /// In a reported opinion: the opinion page it is on (0: the first).
    star: Option<u32>,
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
    /// Reported opinions the sources carry with star markers, by the case's citation.
    opinions: HashMap<(u32, String, u32), Opinion>,
    /// Filings of the record among the sources, by file.
    records: Vec<records::RecordFile>,
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
    /// In a reported opinion with star markers: the opinion page (0: its first page).
    star: Option<u32>,
    loc: Location,
}

/// Marks an order's page as a reported opinion's page (by its star markers) rather than a
/// page of the file: `(file, STAR | 629)` is page 629 of the opinion file `file` carries,
/// `(file, STAR)` its first page.
pub(super) const STAR: u32 = 1 << 31;

/// A reported opinion carried by a source, with its star markers.
#[derive(Clone, Debug)]
struct Opinion {
    file: usize,
    path: String,
    /// Each opinion page (0: the first) and the file's page it begins on.
    starts: Vec<(u32, u32)>,
}

/// Every page a fact is on, and the first of them with its place on the page.
#[derive(Clone, Debug)]
struct Places {
    first: Located,
    pages: Vec<(usize, u32)>,
}

/// Records a fact's place: every page it is on, the first one in full.
fn record<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Places>, k: K, v: Located) {
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
        ix.records.sort_by_key(|r| r.file);
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
        for (k, v) in other.opinions {
            match self.opinions.get(&k) {
                Some(o) if o.file <= v.file => {}
                _ => {
                    self.opinions.insert(k, v);
                }
            }
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
}

mod check;
mod records;
mod scan;
mod segment;
mod stars;

use scan::{Scanner, MAX_THREADS};
use segment::{quote_segments, Segment};

#[cfg(test)]
mod tests {
    use super::check::pin_within;
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
    fn a_date_cited_to_an_invented_bates_number_is_not_supported() {
        // The date is in the evidence, but the draft cites it to a number no source carries.
        let got = statuses("The term began on June 1, 2022 (RTX 3060).");
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got.iter().all(|(_, s, _)| *s != Status::Supported),
            "{got:#?}"
        );
        assert_eq!(got[1].0, "RTX 3060", "{got:#?}");
    }

    #[test]
    fn fabrications_are_caught_with_reasons() {
        let draft = "On June 2, 2022 rent was $2,510.00 (SMITH000009). \"Landlord shall commence repairs within ninety days.\" 10 Cal. 3d 616, 640 (1974); 11 Cal. 3d 616; 10 Cal. 3d 616 (1975). Cal. Civ. Code § 1942.4. Paid on time (RTX 3060).";
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
