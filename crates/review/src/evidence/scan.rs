//! The scan over the sources: one file after another from a shared queue, keeping the pages
//! claims cite and scoring every page against the claims nothing supports, with the excerpt
//! around each match.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::found::{Best, CandidateAt, Found, Sought, Vocab};
use super::words::{term, words};
use crate::sources::stamp_of;
use crate::verify::{Doc, DocSource, Evidence};

/// How many candidates a claim gets.
const CANDIDATES: usize = 2;
/// Characters of context either side of a candidate's words.
const CONTEXT: usize = 160;

/// Keeps the best few, higher score first, then earlier in the sources.
pub(super) fn keep(best: &mut Vec<Best>, b: Best) {
    best.push(b);
    best.sort_by(|x, y| y.score.cmp(&x.score).then(x.order.cmp(&y.order)));
    best.truncate(CANDIDATES);
}

/// Whether a page with this score would enter the best few.
pub(super) fn would_keep(best: &[Best], score: i64, order: (usize, u32)) -> bool {
    best.len() < CANDIDATES
        || best
            .last()
            .is_some_and(|w| score > w.score || (score == w.score && order < w.order))
}

/// What the scan looks for.
pub(super) struct Wants<'a> {
    /// The pages claims cite, and their files.
    pub(super) pages: &'a HashMap<(String, u32), ()>,
    pub(super) files: &'a HashSet<String>,
    /// The prefixes of the Bates claims nothing supports.
    pub(super) bates_prefixes: &'a HashSet<String>,
    pub(super) sought: &'a [Sought],
    pub(super) vocab: &'a Vocab,
    pub(super) images: bool,
}

/// Reads one file after another from the shared queue.
pub(super) fn scan(ev: &Evidence, next: &AtomicUsize, wants: &Wants) -> Found {
    let Wants {
        pages: wanted,
        files: wanted_files,
        bates_prefixes,
        sought,
        vocab,
        images,
    } = *wants;
    let mut f = Found {
        best: vec![Vec::new(); sought.len()],
        ..Found::default()
    };
    let mut marks = Marks::new(sought.len(), vocab.uses.len());
    loop {
        let di = next.fetch_add(1, Ordering::Relaxed);
        let Some(source) = ev.sources.get(di) else {
            return f;
        };
        let (path, pages, from) = match load(source, images, wanted_files) {
            (Doc::Pages { path, pages }, from) => (path, pages, from),
            (Doc::Unreadable { path, problem }, _) => {
                f.unreadable.push((path, problem));
                continue;
            }
        };
        for (i, raw) in pages.iter().enumerate() {
            let number = i as u32 + 1;
            let bates = stamp_of(raw);
            let key = (path.clone(), number);
            if wanted.contains_key(&key) {
                if let Some(how) = from.get(i) {
                    f.from.insert(key.clone(), how.clone());
                }
                f.pages.insert(key, (raw.clone(), bates.clone()));
            }
            if sought.is_empty() {
                continue;
            }
            stamp_candidate(&mut f, bates_prefixes, (di, &path, number), &bates, raw);
            // Other claims: the share of their words on the page.
            marks.mark(raw, vocab);
            score_page(&mut f, sought, &marks, (di, &path, number), &bates, raw);
        }
    }
}

/// Per claim, which of its words the page has; the claims touched; per word, the last page
/// that had it (so a word met again on a page is not looked up again).
struct Marks {
    masks: Vec<u64>,
    touched: Vec<u32>,
    seen: Vec<u64>,
    page_no: u64,
    buf: String,
}

impl Marks {
    fn new(claims: usize, words: usize) -> Marks {
        Marks {
            masks: vec![0; claims],
            touched: Vec::new(),
            seen: vec![u64::MAX; words],
            page_no: 0,
            buf: String::new(),
        }
    }

    /// Marks, for the next page `raw`, each claim's words it holds.
    fn mark(&mut self, raw: &str, vocab: &Vocab) {
        self.page_no += 1;
        for &si in &self.touched {
            self.masks[si as usize] = 0;
        }
        self.touched.clear();
        for (s, e) in words(raw) {
            self.buf.clear();
            let w = &raw[s..e];
            if w.is_ascii() {
                self.buf.push_str(w);
                self.buf.make_ascii_lowercase();
            } else {
                self.buf.push_str(&w.to_lowercase());
            }
            let key: &str = if self.buf.bytes().all(|b| b.is_ascii_digit()) {
                let t = self.buf.trim_start_matches('0');
                if t.is_empty() {
                    "0"
                } else {
                    t
                }
            } else {
                &self.buf
            };
            if let Some(&id) = vocab.ids.get(key) {
                if self.seen[id] == self.page_no {
                    continue;
                }
                self.seen[id] = self.page_no;
                for &(si, ti) in &vocab.uses[id] {
                    let m = &mut self.masks[si as usize];
                    if *m == 0 {
                        self.touched.push(si);
                    }
                    *m |= 1 << ti;
                }
            }
        }
    }
}

/// A stamped page, for the Bates claims (which are nearest is decided at the end): its
/// foot, with the stamp's line highlighted, when its stamp's prefix is one they cite.
fn stamp_candidate(
    f: &mut Found,
    bates_prefixes: &HashSet<String>,
    (di, path, number): (usize, &str, u32),
    bates: &Option<String>,
    raw: &str,
) {
    let Some(b) = bates else { return };
    let split = b.find(|c: char| c.is_ascii_digit()).unwrap_or(b.len());
    let (prefix, digits) = b.split_at(split);
    let prefix = prefix
        .trim_end_matches([' ', '_', '-'])
        .to_ascii_uppercase();
    if let (Ok(n), true) = (digits.parse::<u64>(), bates_prefixes.contains(&prefix)) {
        // The page's foot, with the stamp's line highlighted.
        let t = raw.trim_end();
        let line = t.rfind('\n').map_or(0, |i| i + 1);
        let line = line + (t[line..].len() - t[line..].trim_start().len());
        let cand = excerpt(path, number, bates, raw, &[(line, t.len())]);
        f.stamps.push((prefix, n, (di, number), cand));
    }
}

/// Scores the page against every claim it touches: the share of the claim's words on it;
/// keeps it, with its excerpt, among the claim's best few.
fn score_page(
    f: &mut Found,
    sought: &[Sought],
    marks: &Marks,
    (di, path, number): (usize, &str, u32),
    bates: &Option<String>,
    raw: &str,
) {
    for &si in &marks.touched {
        let mask = marks.masks[si as usize];
        let s = &sought[si as usize];
        let score: u32 = (0..s.weights.len())
            .filter(|t| mask & (1 << t) != 0)
            .map(|t| s.weights[t])
            .sum();
        let matched = mask.count_ones();
        if score * 2 < s.total || (matched < 2 && s.weights.len() > 1) {
            continue;
        }
        let score = score as i64;
        if would_keep(&f.best[si as usize], score, (di, number)) {
            let at = term_places(raw, &s.terms, mask);
            let cand = excerpt(path, number, bates, raw, &at);
            keep(
                &mut f.best[si as usize],
                Best {
                    score,
                    order: (di, number),
                    cand,
                },
            );
        }
    }
}

/// The byte ranges of the words of `terms` on a page, for the terms set in `mask`, in the
/// densest stretch of the page.
fn term_places(raw: &str, terms: &[String], mask: u64) -> Vec<(usize, usize)> {
    let mut places: Vec<(usize, usize, usize)> = Vec::new();
    for (s, e) in words(raw) {
        let t = term(&raw[s..e]);
        if let Some(ti) = terms.iter().position(|x| *x == t) {
            if mask & (1 << ti) != 0 {
                places.push((s, e, ti));
            }
        }
    }
    // The shortest stretch holding every matched term.
    let need = mask.count_ones() as usize;
    let mut best: Option<(usize, usize)> = None;
    let mut count: HashMap<usize, usize> = HashMap::new();
    let mut lo = 0;
    for hi in 0..places.len() {
        *count.entry(places[hi].2).or_default() += 1;
        while count.len() == need {
            let span = places[hi].1 - places[lo].0;
            if best.is_none_or(|(a, b)| span < places[b].1 - places[a].0) {
                best = Some((lo, hi));
            }
            let t = places[lo].2;
            if let Some(c) = count.get_mut(&t) {
                *c -= 1;
                if *c == 0 {
                    count.remove(&t);
                }
            }
            lo += 1;
        }
    }
    best.map_or_else(Vec::new, |(a, b)| {
        places[a..=b].iter().map(|&(s, e, _)| (s, e)).collect()
    })
}

/// An excerpt of a page around byte ranges, with the ranges moved into it.
fn excerpt(
    file: &str,
    page: u32,
    bates: &Option<String>,
    raw: &str,
    at: &[(usize, usize)],
) -> CandidateAt {
    let first = at.first().map_or(0, |a| a.0);
    let last = at.last().map_or(0, |a| a.1);
    let mut s = first.saturating_sub(CONTEXT);
    while !raw.is_char_boundary(s) {
        s -= 1;
    }
    let mut e = (last + CONTEXT).min(raw.len());
    while !raw.is_char_boundary(e) {
        e += 1;
    }
    let mut text = String::new();
    if s > 0 {
        text.push('…');
    }
    let shift = text.len();
    text.push_str(&raw[s..e]);
    if e < raw.len() {
        text.push('…');
    }
    CandidateAt {
        file: file.to_string(),
        page,
        bates: bates.clone(),
        excerpt: text,
        highlights: at
            .iter()
            .map(|&(a, b)| (a - s + shift, b - s + shift))
            .collect(),
    }
}

/// Loads a source's pages, with how each page's text was read when that is known.
fn load(source: &DocSource, images: bool, wanted_files: &HashSet<String>) -> (Doc, Vec<String>) {
    let pdf_or_image = |p: &str| {
        let l = p.to_ascii_lowercase();
        [".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff"]
            .iter()
            .any(|e| l.ends_with(e))
    };
    match source {
        DocSource::File(p) => {
            let opts = crate::sources::Options::default();
            match crate::sources::read(p, &opts) {
                Ok(docs) => {
                    let pages: Vec<_> = docs.into_iter().flat_map(|d| d.pages).collect();
                    let from = pages.iter().map(|p| p.from.clone()).collect();
                    (
                        Doc::Pages {
                            path: p.display().to_string(),
                            pages: pages.into_iter().map(|p| p.text).collect(),
                        },
                        from,
                    )
                }
                Err(e) => (
                    Doc::Unreadable {
                        path: p.display().to_string(),
                        problem: e.to_string(),
                    },
                    Vec::new(),
                ),
            }
        }
        // Pages given in memory by a run: how they were read is known from the text cache
        // when the file is still there (it was read through it).
        DocSource::Memory(Doc::Pages { path, .. })
            if images && pdf_or_image(path) && wanted_files.contains(path) =>
        {
            let opts = crate::sources::pdf_text::Options::default();
            let from = crate::sources::pdf_text::pages(Path::new(path), &opts)
                .map(|p| p.into_iter().map(|p| p.from).collect())
                .unwrap_or_default();
            (source.load(), from)
        }
        _ => (source.load(), Vec::new()),
    }
}
