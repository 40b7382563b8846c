//! The record among the sources: a complaint, a declaration or an affidavit, known by its
//! file's name or by its title, with the page each numbered paragraph begins on, so that a
//! record cite (`Compl. ¶ 59`, `Decl. of Ann Lee ¶ 7`) is checked on that paragraph's pages.
//!
//! Matching is conservative: a cite names a file only when the kind of filing and its
//! amendment (`Compl.` never names a first amended complaint) or its declarant agree, or
//! when the file is named exactly as the cite (`lee-decl.txt` for `Lee Decl.`). Otherwise the
//! cite stays unchecked, never supported from the wrong document.

use crate::catalogue::squash;

/// What a filing of the record is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Title {
    /// A complaint: `Some(0)` the original, `Some(n)` the nth amended one, `None` an amended
    /// one whose number is not given; and whether it is supplemental.
    Complaint {
        amended: Option<u8>,
        supplemental: bool,
    },
    /// A declaration (or, with `affidavit`, an affidavit), by its declarant's name, squashed.
    Declaration { affidavit: bool, name: String },
}

const ORDINALS: &[(&str, u8)] = &[
    ("first", 1),
    ("1st", 1),
    ("second", 2),
    ("2nd", 2),
    ("2d", 2),
    ("third", 3),
    ("3rd", 3),
    ("3d", 3),
    ("fourth", 4),
    ("4th", 4),
    ("fifth", 5),
    ("5th", 5),
];

/// Words a complaint's name may carry besides its amendment.
const COMPLAINT_WORDS: &[&str] = &[
    "verified",
    "class",
    "action",
    "pls",
    "pl",
    "plaintiffs",
    "plaintiff",
    "s",
    "the",
];

/// Reads a complaint's qualifiers, squashed and run together (`fourtham`, `firstamended`,
/// `suppl`), as a whole; `None` if anything else is left.
fn complaint(mut q: &str) -> Option<Title> {
    let mut ordinal = None;
    let mut amended = false;
    let mut supplemental = false;
    'next: while !q.is_empty() {
        for (w, n) in ORDINALS {
            if let Some(r) = q.strip_prefix(w) {
                ordinal = Some(*n);
                q = r;
                continue 'next;
            }
        }
        for w in ["amended", "am"] {
            if let Some(r) = q.strip_prefix(w) {
                amended = true;
                q = r;
                continue 'next;
            }
        }
        for w in ["supplemental", "suppl", "supp"] {
            if let Some(r) = q.strip_prefix(w) {
                supplemental = true;
                q = r;
                continue 'next;
            }
        }
        for w in COMPLAINT_WORDS {
            if let Some(r) = q.strip_prefix(w) {
                q = r;
                continue 'next;
            }
        }
        return None;
    }
    let amended = match (amended, ordinal) {
        (false, None) => Some(0),
        (false, Some(_)) => return None,
        (true, n) => n,
    };
    Some(Title::Complaint {
        amended,
        supplemental,
    })
}

/// The filing a record cite's squashed document names (`compl`, `fourthamcompl`, `leedecl`,
/// `declofannlee`, `leeaff`), if it is a complaint, a declaration or an affidavit.
pub(super) fn cited_title(document: &str) -> Option<Title> {
    for end in ["complaint", "compl"] {
        if let Some(q) = document.strip_suffix(end) {
            return complaint(q);
        }
    }
    for (word, affidavit) in [
        ("declaration", false),
        ("decl", false),
        ("affidavit", true),
        ("aff", true),
    ] {
        if let Some(at) = document.find(word) {
            let before = &document[..at];
            let after = &document[at + word.len()..];
            let after = after.strip_prefix("of").unwrap_or(after);
            if !before.is_empty() && !after.is_empty() {
                return None;
            }
            let name = format!("{before}{after}");
            return (!name.is_empty()).then_some(Title::Declaration { affidavit, name });
        }
    }
    None
}

/// A title line as a filing prints it (`FIRST AMENDED COMPLAINT FOR DAMAGES`,
/// `DECLARATION OF ANN LEE IN SUPPORT OF …`).
fn title_line(line: &str) -> Option<Title> {
    let words: Vec<String> = line
        .split_whitespace()
        .map(squash)
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() || words.len() > 24 {
        return None;
    }
    if let Some(i) = words
        .iter()
        .take(6)
        .position(|w| w == "complaint" || w == "compl")
    {
        return complaint(&words[..i].concat());
    }
    let first = words[0].as_str();
    let affidavit = match first {
        "declaration" | "decl" => false,
        "affidavit" | "aff" => true,
        _ => return None,
    };
    if words.get(1).map(String::as_str) != Some("of") {
        return None;
    }
    let name: String = words[2..]
        .iter()
        .take_while(|w| {
            !matches!(
                w.as_str(),
                "in" | "re" | "regarding" | "pursuant" | "filed" | "for" | "and" | "with"
            )
        })
        .take(5)
        .cloned()
        .collect();
    (!name.is_empty()).then_some(Title::Declaration { affidavit, name })
}

/// What a source file is, by its title on its first page (the first line that reads as one,
/// among the first forty) or, failing that, by its file name.
pub(super) fn title_of(path: &str, first_page: &str) -> Option<Title> {
    let caption_title = first_page
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(40)
        .find_map(|l| {
            // A title is set in capitals; a line of prose that mentions a complaint is not.
            let letters: Vec<char> = l.chars().filter(|c| c.is_alphabetic()).collect();
            (letters.len() >= 6 && letters.iter().all(|c| c.is_uppercase()))
                .then(|| title_line(l))
                .flatten()
        });
    caption_title.or_else(|| cited_title(&squash(stem(path))))
}

/// A file's name without its folders and extension.
pub(super) fn stem(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

/// Whether a cite's filing is this one.
pub(super) fn names(cited: &Title, file: &Title) -> bool {
    match (cited, file) {
        (
            Title::Complaint {
                amended: a,
                supplemental: s,
            },
            Title::Complaint {
                amended: b,
                supplemental: t,
            },
        ) => {
            s == t
                && match (a, b) {
                    (Some(x), Some(y)) => x == y,
                    // `Am. Compl.`: any amended complaint, never the original.
                    (None, Some(y)) | (Some(y), None) => *y > 0,
                    (None, None) => true,
                }
        }
        (
            Title::Declaration {
                affidavit: a,
                name: n,
            },
            Title::Declaration {
                affidavit: b,
                name: m,
            },
        ) => a == b && (n == m || m.ends_with(n.as_str()) && n.len() >= 3),
        _ => false,
    }
}

/// The numbered paragraphs that begin on a page (`12. Plaintiff …`, `¶ 12 …`, and after a
/// pleading paper's line number, `5  12. Plaintiff …`).
#[cfg(test)]
fn paragraphs(text: &str) -> Vec<u32> {
    numbered(text).into_iter().map(|(n, _)| n).collect()
}

/// [`paragraphs`], each with whether it opens its page (nothing but a stamp or page number
/// before it).
fn numbered(text: &str) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    let mut top = true;
    for line in text.lines() {
        let first_line = top;
        if !line.trim().is_empty() && !line.trim().bytes().all(|c| c.is_ascii_digit()) {
            top = false;
        }
        let mut t = line.trim_start();
        // A pleading paper's line number before the paragraph's.
        let lead = t.bytes().take_while(u8::is_ascii_digit).count();
        if (1..=2).contains(&lead) && t[lead..].starts_with("  ") {
            let rest = t[lead..].trim_start();
            if rest.starts_with(|c: char| c.is_ascii_digit() || c == '¶') {
                t = rest;
            }
        }
        if let Some(r) = t.strip_prefix('¶') {
            t = r.trim_start();
        }
        let d = t.bytes().take_while(u8::is_ascii_digit).count();
        if !(1..=4).contains(&d) {
            continue;
        }
        let rest = &t[d..];
        let Some(rest) = rest
            .strip_prefix(['.', ')'])
            .or_else(|| line.trim_start().starts_with('¶').then_some(rest))
        else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        if rest.starts_with(|c: char| c.is_uppercase() || matches!(c, '"' | '“' | '(' | '[')) {
            if let Ok(n) = t[..d].parse() {
                out.push((n, first_line));
            }
        }
    }
    out
}

/// The paragraphs a record cite's pin names: `¶12` → [12], `¶¶5,7-9` → [5, 7, 8, 9]; `None`
/// for a page or line cite, or a range of more than a hundred.
pub(super) fn cited_paragraphs(pin: &str) -> Option<Vec<u32>> {
    let body = pin.trim_start_matches('¶');
    if body.len() == pin.len() || body.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for part in body.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if b < a || b - a > 100 {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cites_and_titles_name_the_same_filing_or_none() {
        let c = |d: &str| cited_title(d);
        let t = |l: &str| title_line(l);
        let orig = t("COMPLAINT FOR DAMAGES").unwrap();
        let first = t("FIRST AMENDED COMPLAINT FOR DAMAGES AND INJUNCTIVE RELIEF").unwrap();
        assert!(names(&c("compl").unwrap(), &orig));
        assert!(
            !names(&c("compl").unwrap(), &first),
            "never the wrong complaint"
        );
        assert!(names(&c("amcompl").unwrap(), &first));
        assert!(names(&c("firstamcompl").unwrap(), &first));
        assert!(!names(&c("secondamcompl").unwrap(), &first));
        assert!(!names(&c("amcompl").unwrap(), &orig));
        assert!(c("countercl").is_none());
        let lee = t("DECLARATION OF ANN LEE IN SUPPORT OF PLAINTIFF'S MOTION").unwrap();
        assert!(names(&c("leedecl").unwrap(), &lee));
        assert!(names(&c("declofannlee").unwrap(), &lee));
        assert!(!names(&c("gomezdecl").unwrap(), &lee));
        assert!(
            !names(&c("leeaff").unwrap(), &lee),
            "an affidavit is no declaration"
        );
        assert_eq!(
            title_of("intake/lee-decl.txt", "Some text without a title."),
            c("leedecl")
        );
        assert_eq!(
            title_of("x.txt", "The complaint alleges that …"),
            None,
            "prose is no title"
        );
    }

    #[test]
    fn numbered_paragraphs_and_pins() {
        let page = "1. Plaintiff is a resident.\n 2.  Defendant is a company.\n5  3. On pleading paper.\n¶ 4 Jurisdiction.\n2024. was a year\n(a) not one\n10 lines";
        assert_eq!(paragraphs(page), vec![1, 2, 3, 4]);
        assert_eq!(cited_paragraphs("¶12"), Some(vec![12]));
        assert_eq!(cited_paragraphs("¶¶5,7-9"), Some(vec![5, 7, 8, 9]));
        assert_eq!(cited_paragraphs("45:12-18"), None);
    }
}

/// A source file that is a filing of the record the draft cites: where its numbered
/// paragraphs begin.
#[derive(Clone, Debug)]
pub(super) struct RecordFile {
    pub(super) file: usize,
    pub(super) path: String,
    pub(super) stem: String,
    pub(super) title: Option<Title>,
    /// Each numbered paragraph (its first sighting), the page it begins on, and whether it
    /// opens that page.
    pub(super) paras: Vec<(u32, u32, bool)>,
    /// Each page's Bates stamp, by page number from 1.
    pub(super) stamps: Vec<Option<String>>,
}

impl RecordFile {
    /// The file as a filing of the record, if some cite the draft makes may name it.
    pub(super) fn read(
        wanted: &[String],
        file: usize,
        path: &str,
        raw: &[String],
        stamps: Vec<Option<String>>,
    ) -> Option<RecordFile> {
        let stem = squash(stem(path));
        let title = title_of(path, raw.first().map_or("", String::as_str));
        let named = wanted.iter().any(|d| {
            *d == stem
                || cited_title(d)
                    .zip(title.as_ref())
                    .is_some_and(|(c, t)| names(&c, t))
        });
        if !named {
            return None;
        }
        let mut paras: Vec<(u32, u32, bool)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, page) in raw.iter().enumerate() {
            for (n, top) in numbered(page) {
                if seen.insert(n) {
                    paras.push((n, i as u32 + 1, top));
                }
            }
        }
        Some(RecordFile {
            file,
            path: path.to_string(),
            stem,
            title,
            paras,
            stamps,
        })
    }

    /// Whether a cite's squashed document names this file.
    fn is_named_by(&self, document: &str) -> bool {
        document == self.stem
            || cited_title(document)
                .zip(self.title.as_ref())
                .is_some_and(|(c, t)| names(&c, t))
    }

    /// The pages paragraph `n` is on: from the page it begins on to the page the next one
    /// begins on; `None` if the file has no such paragraph.
    pub(super) fn pages_of(&self, n: u32) -> Option<(u32, u32)> {
        let start = self.paras.iter().find(|(p, _, _)| *p == n)?.1;
        // It ends where the next begins, or on the page before if the next opens its page.
        let end = self
            .paras
            .iter()
            .filter(|(p, _, _)| *p > n)
            .min_by_key(|(p, _, _)| *p)
            .map_or(
                start + 1,
                |&(_, pg, top)| if top && pg > start { pg - 1 } else { pg },
            )
            .min(self.stamps.len() as u32);
        Some((start, end.max(start)))
    }
}

/// The one file a record cite names, if exactly one does.
pub(super) fn record_named<'a>(files: &'a [RecordFile], document: &str) -> Option<&'a RecordFile> {
    if document.is_empty() {
        return None;
    }
    let exact: Vec<&RecordFile> = files.iter().filter(|f| f.stem == document).collect();
    if exact.len() == 1 {
        return Some(exact[0]);
    }
    let mut by_title = files.iter().filter(|f| f.is_named_by(document));
    match (by_title.next(), by_title.next()) {
        (Some(f), None) => Some(f),
        _ => None,
    }
}
