//! Text fingerprints: text folded to what survives a copy (`fold.rs`), word shingles and the
//! text hash (`shingles.rs`), and the Bloom filter that screens them (`bloom.rs`).

pub mod bloom;
pub mod fold;
pub mod shingles;
