//! A mutation fuzzer for the front end, for machines without cargo-fuzz: it mutates the
//! example workflows and the diagnostics corpus (flips, deletions, duplications, splices, and
//! insertions of the tokens people get wrong — braces, quotes, `"""`, `/*`, `{{#each`, curly
//! quotes, look-alike letters) and runs every result through parse, check and rendering.
//! Any panic is saved and counted.
//!
//! Run: `cargo run --release --example fuzz_check -- 10000000 [THREADS]`. It prints the
//! executions, the panics and where their inputs were saved. (`fuzz/` holds the same target
//! for `cargo +nightly fuzz run check`.)

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const TOKENS: &[&str] = &[
    "{",
    "}",
    "\"",
    "\"\"\"",
    "/*",
    "*/",
    "//",
    "{{",
    "}}",
    "{{#each inputs}}",
    "{{/if}}",
    "{{#if a}}",
    "\n",
    " ",
    ",",
    ":",
    "==",
    "(",
    ")",
    "\u{0430}",
    "\u{201C}",
    "\u{201D}",
    "\u{00A0}",
    "\u{200B}",
    "\u{00E9}",
    "×",
    "stage",
    "model",
    "pool",
    "sources",
    "verify",
    "reads",
    "after",
    "when",
    "returns",
    "use \"lib/cluster.lex\"\n",
    "matter \"m\"\n",
    "32G",
    " x ",
    "list of ",
    "record {",
    "99999999999999999999",
    "-",
    ".",
    "std.prompts.gate",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn seeds(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in ["workflows", "tests/diagnostics"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "lex") {
                if let Ok(b) = std::fs::read(&p) {
                    // Huge seeds only slow the loop; their shapes are in the smaller ones.
                    if b.len() < 8192 {
                        out.push((p, b));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

fn mutate(rng: &mut Rng, seeds: &[(PathBuf, Vec<u8>)], input: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                let n = rng.below(16.min(len - i) + 1);
                input.drain(i..i + n);
            }
            2 if len > 0 => {
                let i = rng.below(len);
                let n = rng.below(32.min(len - i) + 1);
                let piece: Vec<u8> = input[i..i + n].to_vec();
                let at = rng.below(len + 1);
                input.splice(at..at, piece);
            }
            3 => {
                let (_, other) = &seeds[rng.below(seeds.len())];
                if !other.is_empty() {
                    let i = rng.below(other.len());
                    let n = rng.below(64.min(other.len() - i) + 1);
                    let at = rng.below(len + 1);
                    input.splice(at..at, other[i..i + n].iter().copied());
                }
            }
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let at = rng.below(len + 1);
                input.splice(at..at, t.iter().copied());
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let total: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let threads: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let seeds = Arc::new(seeds(&root));
    assert!(!seeds.is_empty(), "no seed files found");
    let crashes = std::env::temp_dir().join("lexrun-fuzz-crashes");
    panic::set_hook(Box::new(|_| {}));
    let done = Arc::new(AtomicU64::new(0));
    let panics = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (seeds, done, panics, crashes) =
                (seeds.clone(), done.clone(), panics.clone(), crashes.clone());
            std::thread::spawn(move || {
                let mut rng =
                    Rng(0x9E37_79B9_7F4A_7C15 ^ (t + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
                let share = total / threads + u64::from(t < total % threads);
                for i in 0..share {
                    let (path, seed) = &seeds[rng.below(seeds.len())];
                    let mut input = seed.clone();
                    mutate(&mut rng, &seeds, &mut input);
                    let utf8 = camino::Utf8PathBuf::from_path_buf(path.clone()).unwrap_or_default();
                    let render = i % 8 == 0;
                    let bytes = input.clone();
                    let r = panic::catch_unwind(AssertUnwindSafe(|| {
                        let checked = lexrun::check::check_bytes(&utf8, bytes);
                        if render {
                            let _ = lexrun::diagnostic::render(
                                &checked.diagnostics,
                                &checked.sources,
                                false,
                            );
                        }
                        if let Some(w) = &checked.workflow {
                            let _ = lexrun::plan::lower(w);
                        }
                    }));
                    if r.is_err() {
                        let n = panics.fetch_add(1, Ordering::Relaxed);
                        let _ = std::fs::create_dir_all(&crashes);
                        let _ = std::fs::write(crashes.join(format!("crash-{t}-{n}.lex")), &input);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
    let n = done.load(Ordering::Relaxed);
    let p = panics.load(Ordering::Relaxed);
    println!(
        "{n} executions in {:.0} s ({:.0}/s) from {} seeds, {p} panics{}",
        start.elapsed().as_secs_f64(),
        n as f64 / start.elapsed().as_secs_f64(),
        seeds.len(),
        if p > 0 {
            format!(" (inputs in {})", crashes.display())
        } else {
            String::new()
        }
    );
    if p > 0 {
        std::process::exit(1);
    }
}
