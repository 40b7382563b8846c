//! Bates numbering: where a volume starts (after the matter's earlier volumes with its
//! prefix, unless a start is declared), each produced document's first and last numbers in
//! family order, and the refusal of numbers an earlier volume already used.

use super::prepare::Ready;
use super::types::{Doc, Fate, ProductionError, Spec, VolumeRecord};

/// The volume's numbers: each document's range (none for one not produced), and the
/// volume's first and last.
pub(super) struct Numbers {
    pub(super) ranges: Vec<Option<(u64, u64)>>,
    pub(super) first: u64,
    pub(super) last: u64,
}

/// The earlier volumes with this volume's prefix (not this volume itself, made again).
pub(super) fn others<'a>(spec: &Spec, earlier: &'a [VolumeRecord]) -> Vec<&'a VolumeRecord> {
    earlier
        .iter()
        .filter(|v| v.volume != spec.volume && v.prefix == spec.prefix)
        .collect()
}

/// The first number: after the earlier volumes with this prefix, unless a start is declared.
pub(super) fn start(spec: &Spec, others: &[&VolumeRecord]) -> u64 {
    if spec.continues {
        others
            .iter()
            .map(|v| v.last + 1)
            .max()
            .unwrap_or(spec.start)
            .max(spec.start)
    } else {
        spec.start
    }
}

/// Numbers every document from `start`, in family order: an imaged document a number a
/// page; a native one for its placeholder page; a withheld document or an exception one for
/// its slip sheet. Every collected document has a number.
pub(super) fn number(
    docs: &[Doc],
    fates: &[Fate],
    ready: &Ready,
    start: u64,
) -> Result<Numbers, ProductionError> {
    let mut n = start;
    let mut ranges: Vec<Option<(u64, u64)>> = Vec::new();
    for (i, _) in docs.iter().enumerate() {
        let pages = match (&fates[i], &ready.pages[i]) {
            (Fate::Imaged, Some(p)) => p.len().max(1) as u64,
            _ => 1,
        };
        ranges.push(Some((n, n + pages - 1)));
        n += pages;
    }
    let produced = fates
        .iter()
        .any(|f| matches!(f, Fate::Imaged | Fate::Native));
    if n == start || !produced {
        return Err(ProductionError::Empty);
    }
    Ok(Numbers {
        ranges,
        first: start,
        last: n - 1,
    })
}

/// Refuses numbers that an earlier volume with the same prefix already used.
pub(super) fn check_collisions(
    spec: &Spec,
    (first, last): (u64, u64),
    others: &[&VolumeRecord],
) -> Result<(), ProductionError> {
    for v in others {
        if first <= v.last && v.first <= last {
            return Err(ProductionError::Collision(format!(
                "Bates numbers {}–{} of volume {} are already used by volume {} ({}–{}); start after {}, or leave out `start` to continue the numbering",
                spec.number(first),
                spec.number(last),
                spec.volume,
                v.volume,
                spec.number(v.first),
                spec.number(v.last),
                spec.number(v.last),
            )));
        }
    }
    Ok(())
}

/// Each document produced here whose native was already produced in an earlier volume, in
/// words: a review platform would hold it twice.
pub(super) fn again(docs: &[Doc], fates: &[Fate], others: &[&VolumeRecord]) -> Vec<String> {
    let mut out = Vec::new();
    for (d, f) in docs.iter().zip(fates) {
        if !matches!(f, Fate::Imaged | Fate::Native) || d.hash.is_empty() {
            continue;
        }
        let before = others.iter().find_map(|v| {
            v.documents
                .iter()
                .find(|p| p.hash == d.hash)
                .map(|p| (v.volume.as_str(), p.first.as_str()))
        });
        if let Some((volume, first)) = before {
            out.push(format!(
                "`{}` was already produced in volume {volume} as {first}",
                d.shown()
            ));
        }
    }
    out
}
