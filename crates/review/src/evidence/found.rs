//! What the scan over the sources looks for and what it finds.

use std::collections::HashMap;

/// The words of the claims looked for: an id per word, and per id the (claim, word) pairs.
pub(super) struct Vocab {
    pub(super) ids: HashMap<String, usize>,
    pub(super) uses: Vec<Vec<(u32, u32)>>,
}

/// A claim looked for among the pages.
pub(super) struct Sought {
    pub(super) outcome: usize,
    pub(super) terms: Vec<String>,
    pub(super) weights: Vec<u32>,
    pub(super) total: u32,
    /// Bates claims are near the pages stamped with the nearest numbers.
    pub(super) bates: Option<(String, u64)>,
}

/// The best pages found so far for one claim: (score, -distance for Bates, source order).
#[derive(Clone)]
pub(super) struct Best {
    pub(super) score: i64,
    pub(super) order: (usize, u32),
    pub(super) cand: CandidateAt,
}

#[derive(Clone)]
pub(super) struct CandidateAt {
    pub(super) file: String,
    pub(super) page: u32,
    pub(super) bates: Option<String>,
    pub(super) excerpt: String,
    pub(super) highlights: Vec<(usize, usize)>,
}

/// What one thread found.
#[derive(Default)]
pub(super) struct Found {
    pub(super) pages: HashMap<(String, u32), (String, Option<String>)>,
    pub(super) best: Vec<Vec<Best>>,
    pub(super) unreadable: Vec<(String, String)>,
    pub(super) from: HashMap<(String, u32), String>,
    /// Stamped pages with a prefix some Bates claim has: prefix, number, order, the foot.
    pub(super) stamps: Vec<(String, u64, (usize, u32), CandidateAt)>,
}
