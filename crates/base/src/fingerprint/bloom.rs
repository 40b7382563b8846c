//! A Bloom filter over every stored fingerprint, kept beside the ledger
//! (`fingerprints.bloom`), so that the intake guard probes the ledger only for the few
//! fingerprints of a source that may be there. It is a cache of the ledger, never trusted
//! blindly: its header names the last artifact it covers, and it is brought up to date from
//! the ledger (or rebuilt) before use. A false positive costs one probe; there are no false
//! negatives.

use std::path::Path;

const MAGIC: &[u8; 8] = b"LXBLOOM3";
const K: u32 = 4;

pub struct Bloom {
    bits: Vec<u64>,
    /// The highest artifact id whose fingerprints are in the filter.
    pub covers: i64,
    /// Fingerprints inserted.
    pub count: u64,
}

impl Bloom {
    /// A filter for about `n` fingerprints at 16 bits each (false positives under 1%).
    pub fn with_capacity(n: usize) -> Bloom {
        let nbits = (n.max(1 << 16) * 16).next_power_of_two();
        Bloom {
            bits: vec![0; nbits / 64],
            covers: 0,
            count: 0,
        }
    }

    fn nbits(&self) -> u64 {
        (self.bits.len() * 64) as u64
    }
    /// One word of the filter and the `K` bits of it that stand for `fp`: a blocked filter,
    /// one memory access per test.
    fn slot(&self, fp: u64) -> (usize, u64) {
        let h = fp.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let word = (h >> 32) as usize & (self.bits.len() - 1);
        let mut mask = 0u64;
        for i in 0..K {
            mask |= 1 << ((fp >> (6 * i)) & 63);
        }
        (word, mask)
    }

    pub fn insert(&mut self, fp: u64) {
        self.count += 1;
        let (w, m) = self.slot(fp);
        self.bits[w] |= m;
    }

    pub fn may_contain(&self, fp: u64) -> bool {
        let (w, m) = self.slot(fp);
        self.bits[w] & m == m
    }

    /// Whether the filter still has room at its intended density.
    pub fn fits(&self) -> bool {
        self.count * 16 <= self.nbits()
    }

    pub fn load(path: &Path) -> Option<Bloom> {
        let b = std::fs::read(path).ok()?;
        if b.len() < 24 || &b[..8] != MAGIC || (b.len() - 24) % 8 != 0 {
            return None;
        }
        let covers = i64::from_le_bytes(b[8..16].try_into().ok()?);
        let count = u64::from_le_bytes(b[16..24].try_into().ok()?);
        let bits: Vec<u64> = b[24..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        (bits.len().is_power_of_two()).then_some(Bloom {
            bits,
            covers,
            count,
        })
    }

    /// Writes the filter atomically, readable by its owner only (it holds fingerprints of
    /// client text).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(16 + self.bits.len() * 8);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.covers.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        for w in &self.bits {
            out.extend_from_slice(&w.to_le_bytes());
        }
        crate::atomic::write_private(path, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_few_false_positives() {
        let mut b = Bloom::with_capacity(10_000);
        for i in 0..10_000u64 {
            b.insert(i.wrapping_mul(0x2545_f491_4f6c_dd1d));
        }
        assert!((0..10_000u64).all(|i| b.may_contain(i.wrapping_mul(0x2545_f491_4f6c_dd1d))));
        let fp = (10_000..110_000u64)
            .filter(|i| b.may_contain(i.wrapping_mul(0x2545_f491_4f6c_dd1d)))
            .count();
        assert!(fp < 1000, "{fp} false positives in 100,000");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bloom");
        b.covers = 42;
        b.save(&p).unwrap();
        let c = Bloom::load(&p).unwrap();
        assert_eq!(c.covers, 42);
        assert!(c.may_contain(0));
    }
}
