//! Transcripts as evidence: a deposition or hearing page numbers its lines (1 to 25, in the
//! margin), and a quotation of the testimony runs across those numbers. The numbers are left
//! out of the text quotations are matched in; `Q.`, `A.` and speakers stay, as they are
//! quoted.

/// Lines a transcript page may number.
const MOST_LINES: u32 = 28;

/// The page without its line numbers, if it is a transcript page: at least five lines, six in
/// ten of them, begin with a line number, and the numbers mostly count up by one.
pub(super) fn without_line_numbers(page: &str) -> Option<String> {
    let mut numbered = 0usize;
    let mut lines = 0usize;
    let mut rising = 0usize;
    let mut last: Option<u32> = None;
    for l in page.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        // Most pages are no transcript: told by their first lines.
        if lines == 12 && numbered < 6 {
            return None;
        }
        if let Some((n, _)) = line_number(l) {
            numbered += 1;
            if last.is_some_and(|p| n == p + 1) {
                rising += 1;
            }
            last = Some(n);
        }
    }
    if numbered < 5 || numbered * 10 < lines * 6 || rising * 10 < (numbered - 1) * 8 {
        return None;
    }
    let mut out = String::with_capacity(page.len());
    for l in page.split_inclusive('\n') {
        match line_number(l) {
            Some((_, k)) => out.push_str(&l[k..]),
            None => out.push_str(l),
        }
    }
    Some(out)
}

/// A line's number and where its text begins after it.
fn line_number(l: &str) -> Option<(u32, usize)> {
    let t = l.trim_start();
    let lead = l.len() - t.len();
    let d = t.bytes().take_while(u8::is_ascii_digit).count();
    if d == 0 || d > 2 {
        return None;
    }
    let n: u32 = t[..d].parse().ok()?;
    if !(1..=MOST_LINES).contains(&n) {
        return None;
    }
    let rest = &t[d..];
    if !(rest.trim().is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((n, lead + d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_go_and_the_testimony_stays() {
        let page = "                                                   Page 45\n 1   Q.   Did you see the leak?\n 2   A.   Yes, I saw water coming\n 3        through the ceiling.\n 4   Q.   When?\n 5   A.   On March 3.\n 6\n";
        let t = without_line_numbers(page).unwrap();
        assert!(
            t.contains("A.   Yes, I saw water coming\n        through the ceiling."),
            "{t}"
        );
        assert!(!t.contains(" 3 "), "{t}");
        // A list or a table of figures is no transcript.
        assert_eq!(
            without_line_numbers("1 apple\n5 pears\n2 figs\n9 plums\n3 kiwis\n"),
            None
        );
        assert_eq!(without_line_numbers("The rent is 12 dollars.\n"), None);
    }
}
