//! Star paging: a reported opinion as a source carries its reporter's page breaks as markers
//! in the text — `*629` (Westlaw) or `[*629]` (Lexis) where page 629 begins; a double star
//! marks a parallel reporter's pages and is not read, and so does a pin cite inside the
//! opinion's text (`2019 WL 1234, at *3`). Pages only go forward: a marker not above the one
//! before it is someone else's page. The text before the first marker is on the opinion's
//! first page, given as 0 here (the first page is known only from the citation the file
//! carries).

/// The star markers of one document: (page index from 1, byte offset, opinion page), in order.
#[derive(Debug, Default)]
pub(super) struct Stars(Vec<(u32, usize, u32)>);

impl Stars {
    pub(super) fn of<'a>(pages: impl Iterator<Item = &'a str>) -> Stars {
        let mut out: Vec<(u32, usize, u32)> = Vec::new();
        for (i, text) in pages.enumerate() {
            for (at, n) in markers(text) {
                if out.last().is_none_or(|&(_, _, last)| n > last) {
                    out.push((i as u32 + 1, at, n));
                }
            }
        }
        Stars(out)
    }

    /// The numbered paragraphs of an opinion cited by paragraph (`2022 IL App (1st) 210454,
    /// ¶ 33`), as its pages: `¶ 33` where paragraph 33 begins. Paragraphs count by one, so a
    /// paragraph cited inside the text (`Smith, 2019 IL 1234, ¶ 12`) is no marker.
    pub(super) fn paragraphs<'a>(pages: impl Iterator<Item = &'a str>) -> Stars {
        let mut out: Vec<(u32, usize, u32)> = Vec::new();
        for (i, text) in pages.enumerate() {
            let b = text.as_bytes();
            for (at, _) in text.match_indices('¶') {
                if at > 0 && !b[at - 1].is_ascii_whitespace() {
                    continue;
                }
                let rest = &text[at + '¶'.len_utf8()..];
                let lead = rest.len() - rest.trim_start_matches(' ').len();
                let digits = rest[lead..].bytes().take_while(u8::is_ascii_digit).count();
                let next = rest.as_bytes().get(lead + digits);
                if digits == 0 || digits > 4 || next.is_some_and(|c| !c.is_ascii_whitespace()) {
                    continue;
                }
                let Ok(n) = rest[lead..lead + digits].parse::<u32>() else {
                    continue;
                };
                let follows = match out.last() {
                    None => (1..=3).contains(&n),
                    Some(&(_, _, last)) => n == last + 1,
                };
                if follows {
                    out.push((i as u32 + 1, at, n));
                }
            }
        }
        if out.len() < 3 {
            out.clear();
        }
        Stars(out)
    }

    /// The opinion page at byte `at` of page `page`: the last marker before it, 0 before the
    /// first marker; `None` in a document without markers.
    pub(super) fn at(&self, page: u32, at: usize) -> Option<u32> {
        if self.0.is_empty() {
            return None;
        }
        let i = self.0.partition_point(|&(p, o, _)| (p, o) <= (page, at));
        Some(i.checked_sub(1).map_or(0, |i| self.0[i].2))
    }

    /// The first marker's page.
    pub(super) fn first(&self) -> Option<u32> {
        self.0.first().map(|m| m.2)
    }

    /// Each opinion page with the document page it begins on (the first page: page 1).
    pub(super) fn starts(&self) -> Vec<(u32, u32)> {
        let mut v = vec![(0, 1)];
        for &(p, _, n) in &self.0 {
            if !v.iter().any(|&(m, _)| m == n) {
                v.push((n, p));
            }
        }
        v
    }
}

/// The star markers on one page of normalised text: (byte offset, opinion page).
fn markers(text: &str) -> Vec<(usize, u32)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(k) = text[from..].find('*') {
        let star = from + k;
        from = star + 1;
        let before = star.checked_sub(1).map(|i| b[i]);
        // One star, at the start of a word or after an opening bracket.
        if before.is_some_and(|c| !(c.is_ascii_whitespace() || c == b'[' || c == b'('))
            || b.get(star + 1) == Some(&b'*')
        {
            continue;
        }
        // `at *3`: a pin cite to another report, not a page break of this one.
        let lead = text[..star].trim_end_matches([' ', '[', '(']);
        let lb = lead.as_bytes();
        if lb.len() >= 2 && lb[lb.len() - 2..].eq_ignore_ascii_case(b"at") && {
            let w = lb.len() - 2;
            w == 0 || !lb[w - 1].is_ascii_alphanumeric()
        } {
            continue;
        }
        let digits = b[star + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 || digits > 5 {
            continue;
        }
        let end = star + 1 + digits;
        let after = b.get(end).copied();
        if after.is_some_and(|c| !(c.is_ascii_whitespace() || b"],.;:)".contains(&c))) {
            continue;
        }
        if let Ok(n) = text[star + 1..end].parse::<u32>() {
            if n > 0 {
                out.push((star, n));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_single_stars_before_a_page_number() {
        let t = "held so. *629 The court [*630] then said 2*3 and **5 and *7a, (*631).";
        let m: Vec<u32> = markers(t).into_iter().map(|(_, n)| n).collect();
        assert_eq!(m, vec![629, 630, 631]);
        // A pin cite to another report is no page break; nor is a page going back.
        let t = "*629 See Doe v. Roe, 2019 WL 1234, at *3. As held, at *4, and *630 more; *12.";
        let s = Stars::of([t].into_iter());
        let pages: Vec<u32> = s.0.iter().map(|m| m.2).collect();
        assert_eq!(pages, vec![629, 630]);
    }

    #[test]
    fn a_place_is_on_the_page_of_the_last_marker_before_it() {
        let s = Stars::of(["first page text *2 second", "more of two *3 three"].into_iter());
        assert_eq!(s.at(1, 0), Some(0));
        assert_eq!(s.at(1, 20), Some(2));
        assert_eq!(s.at(2, 0), Some(2), "a page carries the last marker over");
        assert_eq!(s.at(2, 15), Some(3));
        assert_eq!(s.starts(), vec![(0, 1), (2, 1), (3, 2)]);
        assert_eq!(Stars::of(["no markers"].into_iter()).at(1, 0), None);
    }
}
