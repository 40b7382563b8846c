//! Checking claims against the index: each claim's key looked up, a pinpointed claim held to
//! the pages its sentence cites, exhibits found by slip sheet or index.

use super::records::{cited_paragraphs, record_named, RecordFile};
use super::segment::quote_segments;
use super::table::{base_section, Authority, CaseSeen, ExhibitPage, Index, Opinion, STAR};
use crate::claim::{Claim, Key, Location, Outcome, Status};

impl Index {
    /// The pages a cite (a Bates number or range) names that some source is stamped with:
    /// their places in source order and their locations. A range names every page between
    /// its ends (at most 10,000).
    pub fn cited_pages(&self, key: &Key) -> Vec<((usize, u32), Location)> {
        if let Key::Exhibit { label, pages } = key {
            return self.exhibit(label, *pages).unwrap_or_default();
        }
        if let Key::Record { .. } = key {
            return self.record_pages(key);
        }
        if let Some((o, first, pins)) = self.opinion_cited(key) {
            // The first page is the text before the first marker, and the text after a
            // marker for it, if the report prints one.
            return pins
                .into_iter()
                .flat_map(|p| {
                    let at = if p == first { vec![0, p] } else { vec![p] };
                    at.into_iter().filter_map(move |n| {
                        let (_, page) = o.starts.iter().find(|(m, _)| *m == n)?;
                        let loc = Location {
                            file: o.path.clone(),
                            page: *page,
                            bates: None,
                            star: Some(p),
                            snippet: String::new(),
                            span: (0, 0),
                        };
                        Some(((o.file, STAR | n), loc))
                    })
                })
                .collect();
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

    /// Why a pin cite names a page the opinion the sources carry does not have, if it does.
    fn pin_outside(&self, key: &Key) -> Option<String> {
        if self.opinions.is_empty() {
            return None;
        }
        let (o, first, pins) = self.opinion_cited(key)?;
        let has = |p: u32| p == first || o.starts.iter().any(|(m, _)| *m == p);
        let missing: Vec<String> = pins
            .iter()
            .filter(|p| !has(**p))
            .map(u32::to_string)
            .collect();
        if missing.is_empty() {
            return None;
        }
        let last = o
            .starts
            .iter()
            .map(|(m, _)| *m)
            .max()
            .unwrap_or(first)
            .max(first);
        if o.from_one {
            return Some(format!(
                "the opinion in {} runs from ¶ {first} to ¶ {last} (by its numbered paragraphs), so it has no ¶ {}",
                o.path,
                missing.join(", ")
            ));
        }
        Some(format!(
            "the opinion in {} runs from page {first} to page {last} (by its star markers), so it has no page {}",
            o.path,
            missing.join(", ")
        ))
    }

    /// Whether a claim cites pages of a reported opinion the sources carry with its star
    /// markers (a case citation with a pin cite), so that facts it covers must be on them.
    pub fn is_opinion_cite(&self, key: &Key) -> bool {
        !self.opinions.is_empty() && self.opinion_cited(key).is_some()
    }

    /// The opinion a case citation's pin cite points into, its first page, and the pages cited.
    fn opinion_cited(&self, key: &Key) -> Option<(&Opinion, u32, Vec<u32>)> {
        let Key::Case {
            volume,
            reporter,
            page,
            pin: Some(pin),
            ..
        } = key
        else {
            return None;
        };
        let o = self.opinions.get(&(*volume, reporter.clone(), *page))?;
        let pins = pin_pages(pin);
        // A database's document is paged from *1, whatever its number.
        let first = if o.from_one || crate::cites::is_database(reporter) {
            1
        } else {
            *page
        };
        (!pins.is_empty()).then_some((o, first, pins))
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

    /// The evidence files (by their place among the sources) a fact is found in: all of them
    /// for the kinds the index records everywhere; `None` for Bates numbers and exhibits,
    /// whose first sighting alone is kept.
    pub fn files_with(&self, key: &Key) -> Option<Vec<usize>> {
        match key {
            Key::Bates { .. } | Key::BatesRange { .. } | Key::Exhibit { .. } => None,
            _ => {
                let mut f: Vec<usize> = self.pages_of(key).into_iter().map(|p| p.0).collect();
                f.sort_unstable();
                f.dedup();
                Some(f)
            }
        }
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
                    .map(|seen| {
                        seen.iter()
                            .flat_map(|s| {
                                std::iter::once(s.order)
                                    .chain(s.star.map(|n| (s.order.0, STAR | n)))
                            })
                            .collect()
                    })
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
        let name = |l: &Location| match (&l.bates, l.star) {
            (Some(b), _) => b.clone(),
            (None, Some(star)) => format!("{} at *{star}", l.file),
            (None, None) => format!("{} page {}", l.file, l.page),
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

    /// Why an exhibit cite cannot be checked, when the sources cannot locate it and do not
    /// show it is missing: no slip sheet, index entry or file names it, no index lists the
    /// exhibits, and it is not beyond the last exhibit present. `None` when it is found, or
    /// is certainly not among the exhibits (then the cite is unsupported).
    pub fn exhibit_unlocated(&self, key: &Key) -> Option<String> {
        let Key::Exhibit { label, .. } = key else {
            return None;
        };
        if self.exhibit_pages.contains_key(label) || !self.exhibit_ranges.is_empty() {
            return None;
        }
        // Beyond the last exhibit present: `Ex. 14` where the exhibits run to 12, `Ex. F`
        // where they run to `E`.
        let rank = |l: &str| -> Option<(u8, u32)> {
            if let Ok(n) = l.parse::<u32>() {
                Some((0, n))
            } else if l.len() == 1 && l.as_bytes()[0].is_ascii_uppercase() {
                Some((1, u32::from(l.as_bytes()[0])))
            } else {
                None
            }
        };
        let ours = rank(label);
        let beyond = ours.is_some_and(|(kind, n)| {
            self.exhibit_pages
                .keys()
                .filter_map(|k| rank(k))
                .filter(|(k, _)| *k == kind)
                .map(|(_, m)| m)
                .max()
                .is_some_and(|last| n > last)
        });
        if beyond {
            return None;
        }
        Some(if self.exhibit_pages.is_empty() {
            format!(
                "Exhibit {label} is not located among the sources (no slip sheet, exhibit index or file named for it); add it to the sources, named for it (`Exhibit {label}.pdf`), to check the cite"
            )
        } else {
            let mut known: Vec<&String> = self.exhibit_pages.keys().collect();
            known.sort();
            format!(
                "Exhibit {label} is not among the exhibits the sources hold ({}); add it to the sources, named for it (`Exhibit {label}.pdf`), to check the cite",
                known.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// Holds a full case citation to the opinion among the sources that its page falls on:
    /// the case beginning on the cited page must be the one the draft names (`name`, as
    /// written before the citation), and a page inside an opinion that begins earlier is no
    /// case's first page. Either is `miscited`, naming the case the source has. A citation
    /// whose page no opinion among the sources covers is left as it was.
    pub fn check_case_behind(&self, o: &mut Outcome, name: Option<&str>) {
        let Key::Case {
            volume,
            reporter,
            page,
            ..
        } = &o.claim.key
        else {
            return;
        };
        if self.authorities.is_empty() {
            return;
        }
        let on_volume = |a: &&Authority| a.volume == *volume && a.reporter == *reporter;
        let written = {
            let t = o.claim.text.trim();
            let cut = t.find([',', '(']).unwrap_or(t.len());
            t[..cut].trim().to_string()
        };
        let begins: Vec<&Authority> = self
            .authorities
            .iter()
            .filter(on_volume)
            .filter(|a| a.first == *page)
            .collect();
        if !begins.is_empty() {
            let Some(name) = name else { return };
            if begins
                .iter()
                .any(|a| crate::names::may_be(name, &a.caption))
            {
                return;
            }
            let a = begins[0];
            o.status = Status::Miscited;
            o.source = Some(a.loc.clone());
            o.reason = Some(format!(
                "`{written}` begins {} ({}), not {name}; cite the case by the name and page the reporter gives it",
                a.caption, a.loc.file
            ));
            return;
        }
        // A case may begin on the page where the one before it ends: only a page strictly
        // inside an opinion is no first page.
        let Some(a) = self
            .authorities
            .iter()
            .filter(on_volume)
            .find(|a| a.first < *page && a.last.is_some_and(|l| *page < l))
        else {
            return;
        };
        let other = name.filter(|n| !crate::names::may_be(n, &a.caption));
        o.status = Status::Miscited;
        o.source = Some(a.loc.clone());
        o.reason = Some(match other {
            Some(n) => format!(
                "`{written}` is a page inside {} ({}), which begins at page {}, not {n}; cite the case by the name and page the reporter gives it",
                a.caption, a.loc.file, a.first
            ),
            None => format!(
                "`{written}` is a page inside {} ({}), which begins at page {}; cite it as `{} {}, {page}`",
                a.caption,
                a.loc.file,
                a.first,
                written.rsplit_once(' ').map_or(written.as_str(), |(r, _)| r),
                a.first
            ),
        });
    }

    /// Checks every claim.
    pub fn check_all(&self, claims: Vec<Claim>) -> Vec<Outcome> {
        claims.into_iter().map(|c| self.check(c)).collect()
    }

    /// Checks one claim.
    pub fn check(&self, claim: Claim) -> Outcome {
        let found: Result<Location, String> = match &claim.key {
            Key::Unresolved(why) | Key::Unrecognized(why) => Err(why.clone()),
            Key::Proposition => Err("a proposition is judged by a model, not looked up".into()),
            Key::Record { .. } => Err("a record cite is checked against the record".into()),
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
            } => match self.pin_outside(&claim.key) {
                Some(why) => Err(why),
                None => self
                    .check_case(*volume, reporter, *page, pin, *year)
                    .map_err(|e| {
                        e.unwrap_or_else(|| format!("no source cites {}", claim.text.trim()))
                    }),
            },
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
                judgement: None,
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
                judgement: None,
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

fn width_of(text: &str) -> usize {
    let digits: usize = text
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(6);
    digits.max(1)
}

/// `99-100` within `98-101`.
pub(super) fn pin_within(range: &str, pin: &str) -> bool {
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

/// The pages a pin cite names: `629`, `*629`, `629-30` (the later page's leading digits left
/// out), `629–631`, `629, 631`; a footnote (`629 n.4`) is on its page.
fn pin_pages(pin: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in pin.split([',', '&']) {
        let nums: Vec<&str> = part
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .collect();
        let Some(a) = nums.first().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let mut b = a;
        let ranged = part.contains(['-', '–', '—']) && !part.contains("n.");
        if let (true, Some(end)) = (ranged, nums.get(1)) {
            if let Ok(e) = end.parse::<u32>() {
                // `629-30`: the later page leaves out the leading digits it shares.
                b = if e < a && end.len() < nums[0].len() {
                    a - a % 10u32.pow(end.len() as u32) + e
                } else {
                    e
                };
            }
        }
        if b < a || b - a > 200 {
            b = a;
        }
        for p in a..=b {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

impl Index {
    /// The filing a record cite names and the paragraphs it cites, where that filing is among
    /// the sources with numbered paragraphs, so the cite can be checked.
    fn record_cited(&self, key: &Key) -> Option<(&RecordFile, Vec<u32>)> {
        let Key::Record { document, pin } = key else {
            return None;
        };
        let f = record_named(&self.records, document)?;
        let paras = cited_paragraphs(pin)?;
        (!f.paras.is_empty()).then_some((f, paras))
    }

    /// Whether a record cite can be checked against the sources.
    pub fn is_record_cite(&self, key: &Key) -> bool {
        !self.records.is_empty() && self.record_cited(key).is_some()
    }

    /// The pages a record cite's paragraphs are on.
    pub(super) fn record_pages(&self, key: &Key) -> Vec<((usize, u32), Location)> {
        let Some((f, paras)) = self.record_cited(key) else {
            return Vec::new();
        };
        let mut pages: Vec<u32> = paras
            .iter()
            .filter_map(|&n| f.pages_of(n))
            .flat_map(|(a, b)| a..=b)
            .collect();
        pages.sort_unstable();
        pages.dedup();
        pages
            .into_iter()
            .map(|p| {
                (
                    (f.file, p),
                    Location {
                        file: f.path.clone(),
                        page: p,
                        bates: f.stamps.get(p as usize - 1).cloned().flatten(),
                        star: None,
                        snippet: String::new(),
                        span: (0, 0),
                    },
                )
            })
            .collect()
    }

    /// Checks a record cite that names a filing among the sources: every paragraph it cites
    /// must be one of the filing's.
    pub fn check_record(&self, claim: Claim) -> Outcome {
        let (status, source, reason) = match self.record_cited(&claim.key) {
            None => (
                Status::Unsupported,
                None,
                Some("the record it cites is not among the sources".to_string()),
            ),
            Some((f, paras)) => {
                let missing: Vec<String> = paras
                    .iter()
                    .filter(|&&n| f.pages_of(n).is_none())
                    .map(u32::to_string)
                    .collect();
                if missing.is_empty() {
                    let at = self.record_pages(&claim.key);
                    (Status::Supported, at.first().map(|(_, l)| l.clone()), None)
                } else {
                    let last = f.paras.iter().map(|(n, _, _)| *n).max().unwrap_or(0);
                    (
                        Status::Unsupported,
                        None,
                        Some(format!(
                            "{} has no paragraph {} (its numbered paragraphs run to {last}); cite the paragraph that says it",
                            f.path,
                            missing.join(", ")
                        )),
                    )
                }
            }
        };
        Outcome {
            claim,
            status,
            source,
            reason,
            cited: Vec::new(),
            judgement: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pin_pages;

    #[test]
    fn pin_cites_name_their_pages() {
        assert_eq!(pin_pages("629"), vec![629]);
        assert_eq!(pin_pages("*629"), vec![629]);
        assert_eq!(pin_pages("629-30"), vec![629, 630]);
        assert_eq!(pin_pages("629–631"), vec![629, 630, 631]);
        assert_eq!(pin_pages("629, 631"), vec![629, 631]);
        assert_eq!(pin_pages("629 n.4"), vec![629]);
        assert_eq!(pin_pages("1099-102"), vec![1099, 1100, 1101, 1102]);
    }
}
