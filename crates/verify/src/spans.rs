//! Byte ranges of a draft (its citations, its dates and amounts), asked "does any of them
//! contain, or overlap, this claim?" once per claim: by binary search over the ranges sorted
//! by start with a running maximum of their ends, so a draft with a hundred thousand claims
//! is not checked pairwise.

pub struct Spans {
    starts: Vec<usize>,
    /// The largest end among the ranges up to and including each position.
    max_end: Vec<usize>,
}

impl Spans {
    pub fn new(mut ranges: Vec<(usize, usize)>) -> Spans {
        ranges.sort_unstable();
        let mut max_end = Vec::with_capacity(ranges.len());
        let mut m = 0;
        for (_, e) in &ranges {
            m = m.max(*e);
            max_end.push(m);
        }
        Spans {
            starts: ranges.into_iter().map(|(s, _)| s).collect(),
            max_end,
        }
    }

    /// The largest end among ranges whose start satisfies `before`.
    fn reach(&self, before: impl Fn(usize) -> bool) -> Option<usize> {
        let n = self.starts.partition_point(|&s| before(s));
        n.checked_sub(1).map(|i| self.max_end[i])
    }

    /// Whether one range holds all of `start..end`.
    pub fn contains(&self, start: usize, end: usize) -> bool {
        self.reach(|s| s <= start).is_some_and(|e| e >= end)
    }

    /// Whether a range shares a byte with `start..end`.
    pub fn overlaps(&self, start: usize, end: usize) -> bool {
        self.reach(|s| s < end).is_some_and(|e| e > start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn same_answers_as_checking_every_range(
            ranges in proptest::collection::vec((0usize..60, 0usize..15), 0..12),
            start in 0usize..70, len in 0usize..10,
        ) {
            let ranges: Vec<(usize, usize)> = ranges.into_iter().map(|(s, l)| (s, s + l)).collect();
            let end = start + len;
            let spans = Spans::new(ranges.clone());
            prop_assert_eq!(
                spans.contains(start, end),
                ranges.iter().any(|(s, e)| start >= *s && end <= *e)
            );
            prop_assert_eq!(
                spans.overlaps(start, end),
                ranges.iter().any(|(s, e)| start < *e && *s < end)
            );
        }
    }
}
