//! What the review page shows beside the draft: the text of each supporting page with the
//! match located in it, and for a claim nothing supports, the pages nearest to it.
//!
//! The verifier keeps no page text (it streams the evidence and drops it), so the sources are
//! read once more here, on one thread per core, keeping only the pages some claim cites and
//! scoring every page against the claims nothing supports. A file that can no longer be read
//! (moved or deleted since the verification) is reported, not fatal.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Mutex;

mod found;
mod scan;
mod words;

use crate::verify::{normalize, Evidence, Key, Outcome};
use found::{Best, Found, Sought, Vocab};
use scan::{keep, scan, would_keep, Wants};
use words::{term, terms, words};

/// A page shown on the review page.
pub struct Page {
    pub file: String,
    pub page: u32,
    pub bates: Option<String>,
    pub text: String,
    /// How the text was read (`ocr` for a scan), when known.
    pub from: Option<String>,
    /// The page rendered as an image (a data URL), for scans.
    pub image: Option<String>,
}

/// Where a claim is shown: a page and the highlighted ranges in its text (UTF-16 offsets, as
/// the page's script counts).
pub struct Shown {
    pub page: usize,
    pub highlights: Vec<(usize, usize)>,
}

/// A page near an unsupported claim: an excerpt around the claim's words, highlighted.
pub struct Candidate {
    pub file: String,
    pub page: u32,
    pub bates: Option<String>,
    pub excerpt: String,
    pub highlights: Vec<(usize, usize)>,
    /// The same ranges as byte offsets, for the printed list.
    pub spans: Vec<(usize, usize)>,
}

pub struct Gathered {
    pub pages: Vec<Page>,
    /// Per outcome: its supporting page, if the page could be read again.
    pub shown: Vec<Option<Shown>>,
    /// Per outcome: the nearest pages, for claims without support.
    pub candidates: Vec<Vec<Candidate>>,
    /// Files that a claim cites but that can no longer be read, with the problem.
    pub missing: Vec<(String, String)>,
}

pub fn gather(outcomes: &[Outcome], evidence: &Evidence, images: bool) -> Gathered {
    // The pages cited.
    let mut wanted: HashMap<(String, u32), ()> = HashMap::new();
    for o in outcomes {
        if let Some(l) = &o.source {
            wanted.insert((l.file.clone(), l.page), ());
        }
    }
    let wanted_files: HashSet<String> = wanted.keys().map(|(f, _)| f.clone()).collect();
    let (sought, vocab, bates_prefixes) = sought_claims(outcomes);
    let wants = Wants {
        pages: &wanted,
        files: &wanted_files,
        bates_prefixes: &bates_prefixes,
        sought: &sought,
        vocab: &vocab,
        images,
    };
    let mut all = scan_sources(evidence, &wants);
    rank_bates_pages(&sought, &mut all);
    let cited = cited_pages(outcomes, &all, images);
    Gathered {
        pages: cited.pages,
        shown: cited.shown,
        candidates: candidates_of(outcomes, &sought, &all),
        missing: cited.missing,
    }
}

/// The claims without support, each with its words (or its Bates number), the words indexed
/// in one vocabulary, and the Bates prefixes those claims name.
fn sought_claims(outcomes: &[Outcome]) -> (Vec<Sought>, Vocab, HashSet<String>) {
    let mut bates_prefixes: HashSet<String> = HashSet::new();
    let mut sought: Vec<Sought> = Vec::new();
    let mut vocab = Vocab {
        ids: HashMap::new(),
        uses: Vec::new(),
    };
    for (oi, o) in outcomes.iter().enumerate() {
        if o.source.is_some() {
            continue;
        }
        let si = sought.len() as u32;
        let bates = match &o.claim.key {
            Key::Bates { prefix, number } => Some((prefix.to_ascii_uppercase(), *number)),
            Key::BatesRange { prefix, from, .. } => Some((prefix.to_ascii_uppercase(), *from)),
            _ => None,
        };
        if let Some((p, _)) = &bates {
            bates_prefixes.insert(p.clone());
        }
        let ts = if bates.is_some() {
            Vec::new()
        } else {
            terms(&o.claim.text)
        };
        let weights: Vec<u32> = ts
            .iter()
            .map(|t| {
                if t.bytes().any(|b| b.is_ascii_digit()) {
                    3
                } else {
                    1
                }
            })
            .collect();
        for (ti, t) in ts.iter().enumerate() {
            let id = *vocab.ids.entry(t.clone()).or_insert_with(|| {
                vocab.uses.push(Vec::new());
                vocab.uses.len() - 1
            });
            vocab.uses[id].push((si, ti as u32));
        }
        sought.push(Sought {
            outcome: oi,
            terms: ts,
            total: weights.iter().sum(),
            weights,
            bates,
        });
    }
    (sought, vocab, bates_prefixes)
}

/// Scans every source on up to eight threads and merges what each found.
fn scan_sources(evidence: &Evidence, wants: &Wants) -> Found {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(evidence.sources.len().max(1));
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let f = scan(evidence, &next, wants);
                results.lock().unwrap_or_else(|e| e.into_inner()).push(f);
            });
        }
    });
    let mut all = Found {
        best: vec![Vec::new(); wants.sought.len()],
        ..Found::default()
    };
    for f in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        all.pages.extend(f.pages);
        all.from.extend(f.from);
        all.unreadable.extend(f.unreadable);
        all.stamps.extend(f.stamps);
        for (si, b) in f.best.into_iter().enumerate() {
            for x in b {
                keep(&mut all.best[si], x);
            }
        }
    }
    all
}

/// Bates claims: the pages stamped nearest to the number.
fn rank_bates_pages(sought: &[Sought], all: &mut Found) {
    for (si, s) in sought.iter().enumerate() {
        let Some((p, want)) = &s.bates else { continue };
        for (prefix, n, order, cand) in &all.stamps {
            let score = -(n.abs_diff(*want).min(i64::MAX as u64) as i64);
            if prefix == p && would_keep(&all.best[si], score, *order) {
                keep(
                    &mut all.best[si],
                    Best {
                        score,
                        order: *order,
                        cand: cand.clone(),
                    },
                );
            }
        }
    }
}

/// The pages claims cite, as [`Gathered`] shows them.
struct Cited {
    pages: Vec<Page>,
    shown: Vec<Option<Shown>>,
    missing: Vec<(String, String)>,
}

/// The pages, in the order claims cite them, each once; each claim's page and highlights;
/// and the cited files with no such page, with why.
fn cited_pages(outcomes: &[Outcome], all: &Found, images: bool) -> Cited {
    let mut pages: Vec<Page> = Vec::new();
    let mut page_ix: HashMap<(String, u32), usize> = HashMap::new();
    let mut missing: Vec<(String, String)> = Vec::new();
    let mut shown = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        let Some(l) = &o.source else {
            shown.push(None);
            continue;
        };
        let key = (l.file.clone(), l.page);
        let Some((raw, _)) = all.pages.get(&key) else {
            if !missing.iter().any(|(f, _)| *f == l.file) {
                let problem = all
                    .unreadable
                    .iter()
                    .find(|(f, _)| *f == l.file)
                    .map(|(_, p)| p.clone())
                    .unwrap_or_else(|| format!("the file has no page {}", l.page));
                missing.push((l.file.clone(), problem));
            }
            shown.push(None);
            continue;
        };
        let pi = *page_ix.entry(key.clone()).or_insert_with(|| {
            let from = all.from.get(&key).cloned();
            let image = if images && from.as_deref() == Some("ocr") {
                page_image(Path::new(&l.file), l.page)
            } else {
                None
            };
            pages.push(Page {
                file: l.file.clone(),
                page: l.page,
                bates: l.bates.clone(),
                text: raw.clone(),
                from,
                image,
            });
            pages.len() - 1
        });
        let raw = &pages[pi].text;
        let found: Vec<(usize, usize)> = if l.span.1 > l.span.0 {
            let norm = normalize(raw);
            norm.get(l.span.0..l.span.1)
                .and_then(|m| locate(raw, m))
                .into_iter()
                .collect()
        } else if let Some(b) = &l.bates {
            locate(raw, b).into_iter().collect()
        } else {
            Vec::new()
        };
        shown.push(Some(Shown {
            page: pi,
            highlights: utf16(raw, &found),
        }));
    }
    Cited {
        pages,
        shown,
        missing,
    }
}

/// For each claim without support, the best pages found for it.
fn candidates_of(outcomes: &[Outcome], sought: &[Sought], all: &Found) -> Vec<Vec<Candidate>> {
    let mut candidates: Vec<Vec<Candidate>> = (0..outcomes.len()).map(|_| Vec::new()).collect();
    for (si, s) in sought.iter().enumerate() {
        candidates[s.outcome] = all.best[si]
            .iter()
            .map(|b| Candidate {
                file: b.cand.file.clone(),
                page: b.cand.page,
                bates: b.cand.bates.clone(),
                highlights: utf16(&b.cand.excerpt, &b.cand.highlights),
                spans: b.cand.highlights.clone(),
                excerpt: b.cand.excerpt.clone(),
            })
            .collect();
    }
    candidates
}

/// The first place a normalised text's words appear in order in a raw page, as a byte range.
pub(crate) fn locate(raw: &str, wanted: &str) -> Option<(usize, usize)> {
    let want: Vec<String> = words(wanted).map(|(s, e)| term(&wanted[s..e])).collect();
    if want.is_empty() {
        return None;
    }
    let have: Vec<(usize, usize)> = words(raw).collect();
    let terms: Vec<String> = have.iter().map(|&(s, e)| term(&raw[s..e])).collect();
    (0..terms.len().saturating_sub(want.len() - 1))
        .find(|&i| terms[i..i + want.len()] == want[..])
        .map(|i| (have[i].0, have[i + want.len() - 1].1))
}

/// Byte ranges of `text` as UTF-16 offsets, as a browser's script counts them.
fn utf16(text: &str, ranges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut bounds: Vec<usize> = ranges.iter().flat_map(|&(a, b)| [a, b]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut map = HashMap::new();
    let mut units = 0;
    let mut bi = 0;
    for (i, c) in text.char_indices() {
        while bi < bounds.len() && bounds[bi] <= i {
            map.insert(bounds[bi], units);
            bi += 1;
        }
        units += c.len_utf16();
    }
    for &b in &bounds[bi..] {
        map.insert(b, units);
    }
    ranges.iter().map(|&(a, b)| (map[&a], map[&b])).collect()
}

/// A scanned page as a small greyscale JPEG (a data URL), rendered by `pdftoppm`; an image
/// source as it is, when it is small and a browser can show it.
fn page_image(path: &Path, page: u32) -> Option<String> {
    let lower = path.display().to_string().to_ascii_lowercase();
    if lower.ends_with(".png") || lower.ends_with(".jpg") || lower.ends_with(".jpeg") {
        let bytes = std::fs::read(path).ok()?;
        if bytes.len() > 2_000_000 {
            return None;
        }
        let kind = if lower.ends_with(".png") {
            "png"
        } else {
            "jpeg"
        };
        return Some(format!("data:image/{kind};base64,{}", base64(&bytes)));
    }
    if !lower.ends_with(".pdf") {
        return None;
    }
    let tool = crate::sources::pdf_text::tool("pdftoppm", "LEXRUN_PDFTOPPM")?;
    let dir = tempfile::tempdir().ok()?;
    let out = dir.path().join("p");
    let n = page.to_string();
    let ok = std::process::Command::new(tool)
        .args([
            "-f",
            &n,
            "-l",
            &n,
            "-r",
            "60",
            "-gray",
            "-jpeg",
            "-singlefile",
        ])
        .arg(path)
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    let bytes = std::fs::read(out.with_extension("jpg")).ok()?;
    Some(format!("data:image/jpeg;base64,{}", base64(&bytes)))
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_matches_are_found_in_the_raw_page() {
        let raw = "The lease,\ndated  January 5,\n2024, says “rent is due”.";
        let at = locate(raw, "January 5, 2024").unwrap();
        assert_eq!(&raw[at.0..at.1], "January 5,\n2024");
        let at = locate(raw, "\"rent is due\"").unwrap();
        assert_eq!(&raw[at.0..at.1], "rent is due");
    }

    #[test]
    fn an_unsupported_claim_is_shown_the_nearest_pages() {
        let mut ev = Evidence::new(vec!["DOC".into()]);
        ev.add_pages(
            "a.txt".into(),
            vec![
                "Nothing about the invoice.\n\nDOC000001".into(),
                "Paid. The invoice of March 4, 2024 was paid in full.\n\nDOC000003".into(),
            ],
        );
        let draft = "The invoice was paid on March 5, 2024 (DOC000002).";
        let v = crate::verify::verify(draft, &ev);
        let g = gather(&v.outcomes, &ev, false);
        let date = v
            .outcomes
            .iter()
            .position(|o| o.claim.text == "March 5, 2024");
        let c = &g.candidates[date.unwrap()];
        assert_eq!(c.len(), 1, "only the page with the month and the year");
        assert_eq!(c[0].page, 2);
        let hl: Vec<&str> = c[0]
            .highlights
            .iter()
            .map(|&(a, b)| &c[0].excerpt[a..b])
            .collect();
        assert_eq!(hl, ["March", "2024"]);
        // A Bates number: the pages stamped nearest to it.
        let bates = v.outcomes.iter().position(|o| o.claim.text == "DOC000002");
        let c = &g.candidates[bates.unwrap()];
        let pages: Vec<u32> = c.iter().map(|c| c.page).collect();
        assert_eq!(pages, [1, 2]);
        assert!(c[1].excerpt.ends_with("DOC000003"));
    }

    #[test]
    fn offsets_count_utf16_units() {
        let t = "é😀 ab";
        let ab = t.find("ab").unwrap();
        assert_eq!(utf16(t, &[(ab, ab + 2)]), vec![(4, 6)]);
    }

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
    }
}
