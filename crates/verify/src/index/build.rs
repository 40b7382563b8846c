//! Building the index: the draft's quotations keyed for the evidence pass, then every
//! source read once, on one thread per core (up to eight), and the threads' tables merged.

use std::sync::atomic::AtomicUsize;

use super::scan::{Scanner, MAX_THREADS};
use super::segment::{quote_segments, Segment};
use super::table::{Index, Wanted};
use crate::evidence::{Evidence, SourceFile};
use crate::wordkeys::Keys;

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
}
