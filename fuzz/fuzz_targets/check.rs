//! Any bytes given to `check` give diagnostics, never a panic or a hang.
//!
//! Run: `cargo install cargo-fuzz && cargo +nightly fuzz run check` from the repository root
//! (cargo-fuzz needs a nightly toolchain). Seed it with the examples:
//! `mkdir -p fuzz/corpus/check && cp workflows/*.lex tests/diagnostics/*.lex fuzz/corpus/check/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let checked = lexrun::check::check_bytes(camino::Utf8Path::new("fuzz.lex"), data.to_vec());
    let _ = lexrun::diagnostic::render(&checked.diagnostics, &checked.sources, false);
    if let Some(w) = &checked.workflow {
        let _ = lexrun::plan::lower(w).to_json();
    }
});
