//! Which pages each fact of a draft is cited to. A fact (a date, amount, quotation, statute or
//! case citation) that a sentence cites to pages — Bates numbers or ranges — must be on one of
//! those pages; found elsewhere in the evidence, it is `miscited`.
//!
//! How far a cite reaches:
//! - **Its clause.** In a sentence with cites, each fact is bound to the first cite after it
//!   in the sentence (`paid $75.00 (SMITH000005), although … January 3 (SMITH000001)`). A
//!   clause after the sentence's last cite is not covered by it (`a late fee of $75.00
//!   (SMITH000005) although I paid on January 3`): a cite looks back, not forward.
//! - **String cites.** Cites next to each other, joined only by `;`, `,`, `and`, `see also`,
//!   brackets or spaces (`(SMITH000004; SMITH000006–SMITH000007)`), are one cite: any of their
//!   pages will do. A range cites every page between its ends.
//! - **Citation sentences.** A sentence that is nothing but cites (`… habitability." (SMITH000003)`)
//!   binds the sentence before it (the facts of that sentence after its own last cite). If it
//!   ends a paragraph whose sentences cite nothing themselves, it covers the whole paragraph.
//! - Facts in sentences that no cite reaches are checked against all the evidence, as before.
//!
//! The document's own dates — `Executed on March 18, 2024, at Oakland`, a jurat's `Subscribed
//! and sworn to before me this 5th day of …`, a `Dated:` line — say when the document was
//! made, not what the evidence says; they are reported as such and not checked.

use super::claim::{Claim, Key, Kind};
use super::sentences::{sentences, Sentence};
use std::collections::HashMap;

/// Where the case name just before a citation begins in `before` (`Ace v. Bay, ` in `… paid
/// $5.00. Ace v. Bay, `): the capitalised words around `v.` (or after `In re`) that end
/// `before` with a comma; `before.len()` when it ends with no case name.
fn case_name_start(before: &str) -> usize {
    let t = before.trim_end();
    let Some(t) = t.strip_suffix(',') else {
        return before.len();
    };
    // A word of a name: one with a capital (`Ace`, `eBay`, `Inc.`), or the small words
    // inside names.
    let small = |w: &str| matches!(w, "of" | "the" | "and" | "&" | "ex" | "rel." | "re" | "v.");
    let name_word = |w: &str| small(w) || w.chars().any(char::is_uppercase);
    let (anchor, at) = match (t.rfind(" v. "), t.rfind("In re ")) {
        (Some(v), _) => (v, v),
        (None, Some(r)) => (r, r),
        // A short form's name alone (`Ace, 10 Cal. 3d at 620`): the whole stretch is a name.
        _ => {
            let words: Vec<&str> = t.split_whitespace().collect();
            return if !words.is_empty()
                && words.len() <= 6
                && words
                    .iter()
                    .all(|w| name_word(w) && !w.ends_with([',', ';', ':']))
                && words[0].chars().next().is_some_and(char::is_uppercase)
            {
                before.len() - before.trim_start().len()
            } else {
                before.len()
            };
        }
    };
    // The words after the anchor must be a name, not a clause.
    if t[anchor..]
        .split_whitespace()
        .skip(1)
        .any(|w| !name_word(w.trim_end_matches(',')))
    {
        return before.len();
    }
    // Back from the anchor over the words of the name.
    let mut start = at;
    let mut offset = 0;
    let words: Vec<(usize, &str)> = t[..at]
        .split(' ')
        .map(|w| {
            let o = offset;
            offset += w.len() + 1;
            (o, w)
        })
        .collect();
    for &(o, w) in words.iter().rev() {
        if w.is_empty() || w.ends_with([',', ';', ':']) || !name_word(w) {
            break;
        }
        start = o;
    }
    if t[..start].trim().is_empty() {
        before.len() - before.trim_start().len()
    } else {
        start
    }
}

/// Whether a claim is a fact that a pinpoint can bind.
fn is_fact(c: &Claim) -> bool {
    matches!(
        c.kind,
        Kind::Date | Kind::Amount | Kind::Quote | Kind::Statute | Kind::Citation
    ) && !matches!(c.key, Key::Unresolved(_) | Key::Unrecognized(_))
}

fn is_page_cite(c: &Claim) -> bool {
    c.kind == Kind::Bates
}

/// Whether the text between two spans holds nothing but what joins cites in a string cite.
fn joins(between: &str) -> bool {
    let mut rest = between.trim();
    loop {
        rest = rest.trim_start_matches([';', ',', '(', ')', '[', ']', ' ', '\n', '\t']);
        let lower = rest.to_ascii_lowercase();
        let mut advanced = false;
        for w in ["see also", "see", "and", "also", "accord", "cf."] {
            if lower.starts_with(w) {
                rest = &rest[w.len()..];
                advanced = true;
                break;
            }
        }
        if !advanced {
            return rest.is_empty();
        }
    }
}

/// A stretch of the draft that cites pages: a sentence with cites, or the sentence or
/// paragraph a citation sentence covers (with the citation sentence). What a judge model
/// checks against the cited pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    pub start: usize,
    pub end: usize,
    /// The cites (indices of Bates and exhibit claims) of the stretch.
    pub cites: Vec<usize>,
}

/// What the cites of a draft bind: per claim, the cites that bind it (empty for none); and
/// the stretches of text that cite pages.
#[derive(Clone, Debug, Default)]
pub struct Binding {
    pub facts: Vec<Vec<usize>>,
    pub reaches: Vec<Reach>,
}

/// For each claim, the indices of the cites (Bates claims) that bind it, if any.
pub fn bind(text: &str, claims: &[Claim]) -> Vec<Vec<usize>> {
    bind_all(text, claims).facts
}

/// [`bind`], with the stretches of text that cite pages.
pub fn bind_all(text: &str, claims: &[Claim]) -> Binding {
    bind_all_with(text, claims, &|_| false)
}

/// [`bind_all`], where a case citation for which `opinion_cite` holds (its pin cite names
/// pages of an opinion the sources carry) is a cite as well: the facts before it in its
/// clause must be on those pages. Only Bates and exhibit cites make the stretches a judge
/// model checks.
pub fn bind_all_with(
    text: &str,
    claims: &[Claim],
    opinion_cite: &dyn Fn(&Claim) -> bool,
) -> Binding {
    Binder::new(text, claims, opinion_cite).bind()
}

/// A draft's sentences and cites, with the tables that keep binding linear (up to a log)
/// in the draft: every lookup is a binary search or one of these tables.
struct Binder<'a> {
    text: &'a str,
    claims: &'a [Claim],
    opinion_cite: &'a dyn Fn(&Claim) -> bool,
    sents: Vec<Sentence>,
    /// Where each claim starts.
    starts: Vec<usize>,
    /// Cites grouped into string cites, in text order.
    groups: Vec<Vec<usize>>,
    /// The groups that start in each sentence, in order.
    by_sentence: Vec<Vec<usize>>,
    /// Each sentence's paragraph's first and last sentence.
    para_first: Vec<usize>,
    para_last: Vec<usize>,
    /// Per paragraph, how many of its sentences hold a cite.
    citing: HashMap<usize, usize>,
}

impl<'a> Binder<'a> {
    /// The draft's sentences (none ending inside a citation or statute), its string cites,
    /// and where they stand in its sentences and paragraphs.
    fn new(text: &'a str, claims: &'a [Claim], opinion_cite: &'a dyn Fn(&Claim) -> bool) -> Self {
        // Claims come sorted by where they start, sentences in order.
        debug_assert!(claims.windows(2).all(|w| w[0].start <= w[1].start));
        let keep: Vec<(usize, usize)> = claims
            .iter()
            .filter(|c| matches!(c.kind, Kind::Citation | Kind::Statute))
            .map(|c| (c.start, c.end))
            .collect();
        let mut b = Binder {
            text,
            claims,
            opinion_cite,
            sents: sentences(text, &keep),
            starts: claims.iter().map(|c| c.start).collect(),
            groups: Vec::new(),
            by_sentence: Vec::new(),
            para_first: Vec::new(),
            para_last: Vec::new(),
            citing: HashMap::new(),
        };
        b.groups = b.string_cites();
        b.by_sentence = b.sentence_groups();
        b.paragraphs();
        b
    }

    /// Whether a claim is a cite; a record cite binds like a page cite where its filing is
    /// among the sources.
    #[inline]
    fn is_cite(&self, c: &Claim) -> bool {
        is_page_cite(c)
            || (matches!(c.kind, Kind::Citation | Kind::Record) && (self.opinion_cite)(c))
    }

    /// The sentence that holds byte `at`, if any.
    fn sentence_of(&self, at: usize) -> Option<usize> {
        let sents = &self.sents;
        let i = sents.partition_point(|s| s.start <= at);
        let s = sents.get(i.checked_sub(1)?)?;
        (at < s.end.max(s.start + 1)).then(|| i - 1)
    }

    /// The claims that start in `from..to`.
    fn starting_in(&self, from: usize, to: usize) -> std::ops::Range<usize> {
        let starts = &self.starts;
        starts.partition_point(|&x| x < from)..starts.partition_point(|&x| x < to)
    }

    /// The facts (not cites) that start in `from..to`.
    fn facts_in(&self, from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
        self.starting_in(from, to)
            .filter(|&i| is_fact(&self.claims[i]) && !self.is_cite(&self.claims[i]))
    }

    /// What a judge model is given: the page cites among a stretch's cites.
    fn page_cites(&self, cites: Vec<usize>) -> Vec<usize> {
        cites
            .into_iter()
            .filter(|&c| is_page_cite(&self.claims[c]))
            .collect()
    }

    /// The cites grouped into string cites, in text order: next to each other in one
    /// sentence, joined only by what joins a string cite.
    fn string_cites(&self) -> Vec<Vec<usize>> {
        let (claims, text) = (self.claims, self.text);
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, c) in claims.iter().enumerate().filter(|(_, c)| self.is_cite(c)) {
            match groups.last_mut() {
                Some(g)
                    if {
                        let prev = &claims[*g.last().expect("a group has a cite")];
                        prev.end <= c.start
                            && joins(&text[prev.end..c.start])
                            && self.sentence_of(prev.start) == self.sentence_of(c.start)
                    } =>
                {
                    g.push(i)
                }
                _ => groups.push(vec![i]),
            }
        }
        groups
    }

    /// The groups that start in each sentence, in order.
    fn sentence_groups(&self) -> Vec<Vec<usize>> {
        let mut by_sentence: Vec<Vec<usize>> = vec![Vec::new(); self.sents.len()];
        for (gi, g) in self.groups.iter().enumerate() {
            let start = self.claims[g[0]].start;
            if let Some(si) = self.sentence_of(start) {
                if start >= self.sents[si].start {
                    by_sentence[si].push(gi);
                }
            }
        }
        by_sentence
    }

    /// Each sentence's paragraph: its first and last sentence, and how many of its
    /// sentences hold a cite.
    fn paragraphs(&mut self) {
        let sents = &self.sents;
        let mut para_first = vec![0; sents.len()];
        let mut para_last = vec![0; sents.len()];
        for si in 0..sents.len() {
            para_first[si] = if si > 0 && sents[si - 1].paragraph == sents[si].paragraph {
                para_first[si - 1]
            } else {
                si
            };
            if !self.by_sentence[si].is_empty() {
                *self.citing.entry(sents[si].paragraph).or_default() += 1;
            }
        }
        for si in (0..sents.len()).rev() {
            para_last[si] =
                if si + 1 < sents.len() && sents[si + 1].paragraph == sents[si].paragraph {
                    para_last[si + 1]
                } else {
                    si
                };
        }
        self.para_first = para_first;
        self.para_last = para_last;
    }

    /// Whether sentence `si` is nothing but its cites.
    fn citation_only(&self, si: usize) -> bool {
        let s = self.sents[si];
        let mut rest = self.text[s.start..s.end].to_string();
        let mut cites: Vec<&Claim> = self.claims[self.starting_in(s.start, s.end)]
            .iter()
            .filter(|c| self.is_cite(c) && c.end <= s.end)
            .collect();
        if cites.is_empty() {
            return false;
        }
        cites.sort_by_key(|c| std::cmp::Reverse(c.start));
        for (k, c) in cites.iter().enumerate() {
            // A case citation's name before it (`Ace v. Bay, 150 Cal. App. 4th 300, 305`)
            // belongs to the cite.
            let mut from = c.start - s.start;
            if c.kind == Kind::Citation {
                let prev = cites.get(k + 1).map_or(0, |p| p.end - s.start).min(from);
                from = prev + case_name_start(&rest[prev..from]);
            }
            rest.replace_range(from..c.end - s.start, " ");
        }
        joins(rest.trim_end_matches(['.', ' ']))
    }

    /// Each claim's binding cites, and the stretches that cite pages, sentence by sentence.
    fn bind(&self) -> Binding {
        let mut out = vec![Vec::new(); self.claims.len()];
        let mut reaches: Vec<Reach> = Vec::new();
        for si in 0..self.sents.len() {
            let in_sentence: Vec<&Vec<usize>> = self.by_sentence[si]
                .iter()
                .map(|&g| &self.groups[g])
                .collect();
            if in_sentence.is_empty() {
                continue;
            }
            if self.citation_only(si) {
                self.bind_citation_sentence(si, &in_sentence, &mut out, &mut reaches);
            } else {
                self.bind_sentence(si, &in_sentence, &mut out, &mut reaches);
            }
        }
        Binding {
            facts: out,
            reaches,
        }
    }

    /// A sentence that is nothing but cites binds the sentence before it, after that
    /// sentence's own last cite; or, ending a paragraph whose other sentences cite nothing,
    /// the whole paragraph.
    fn bind_citation_sentence(
        &self,
        si: usize,
        in_sentence: &[&Vec<usize>],
        out: &mut [Vec<usize>],
        reaches: &mut Vec<Reach>,
    ) {
        let (sents, claims) = (&self.sents, self.claims);
        let s = sents[si];
        let cited: Vec<usize> = in_sentence.iter().flat_map(|g| g.iter().copied()).collect();
        // The paragraph's last sentence, in a paragraph whose other sentences cite nothing:
        // it covers the paragraph.
        let last_in_para = self.para_last[si] == si;
        let others_cite = self.citing.get(&s.paragraph).copied().unwrap_or(0) > 1;
        let from = if last_in_para && !others_cite {
            sents[self.para_first[si]].start
        } else if si > 0 && sents[si - 1].paragraph == s.paragraph {
            // The sentence before, after its own last cite.
            let p = sents[si - 1];
            self.by_sentence[si - 1]
                .iter()
                .map(|&g| claims[*self.groups[g].last().expect("a group has a cite")].end)
                .max()
                .unwrap_or(p.start)
        } else {
            s.start
        };
        for f in self.facts_in(from, s.start) {
            if out[f].is_empty() {
                out[f] = cited.clone();
            }
        }
        // What it covers, from the start of the sentence (or paragraph) it reaches back
        // into; a sentence before it that cites pages itself gains these cites too.
        let back = if last_in_para && !others_cite {
            Some(sents[self.para_first[si]].start)
        } else if si > 0 && sents[si - 1].paragraph == s.paragraph {
            Some(sents[si - 1].start)
        } else {
            None
        };
        let cited = self.page_cites(cited);
        match (back, reaches.last_mut()) {
            _ if cited.is_empty() => {}
            (Some(b), Some(r)) if r.start == b => {
                r.end = s.end;
                r.cites.extend(&cited);
            }
            (Some(b), _) if b < s.start => reaches.push(Reach {
                start: b,
                end: s.end,
                cites: cited,
            }),
            _ => {}
        }
    }

    /// A sentence with cites among its words: the stretch cites its pages, and each fact
    /// is bound to the first cite after it in the sentence.
    fn bind_sentence(
        &self,
        si: usize,
        in_sentence: &[&Vec<usize>],
        out: &mut [Vec<usize>],
        reaches: &mut Vec<Reach>,
    ) {
        let s = self.sents[si];
        let cited = self.page_cites(in_sentence.iter().flat_map(|g| g.iter().copied()).collect());
        if !cited.is_empty() {
            reaches.push(Reach {
                start: s.start,
                end: s.end,
                cites: cited,
            });
        }
        // A sentence that cites a case for the law and the record for the facts (`on May 3,
        // 2019 the tenant complained, and under Doe v. Roe, 1 F.3d 2, 5 (2001), that is
        // notice (WHIT0007)`): its dates and amounts belong to the record's cites.
        let record_groups: Vec<&Vec<usize>> = in_sentence
            .iter()
            .copied()
            .filter(|g| g.iter().any(|&c| self.claims[c].kind != Kind::Citation))
            .collect();
        let of_record = |f: usize| matches!(self.claims[f].kind, Kind::Date | Kind::Amount);
        let mut from = s.start;
        for g in in_sentence {
            let at = self.claims[g[0]].start;
            let opinion_only = g.iter().all(|&c| self.claims[c].kind == Kind::Citation);
            for f in self.facts_in(from, at) {
                let own = if opinion_only && of_record(f) {
                    record_groups
                        .iter()
                        .find(|r| self.claims[r[0]].start > at)
                        .or(record_groups.last())
                        .copied()
                        .unwrap_or(g)
                } else {
                    g
                };
                out[f] = own.clone();
            }
            from = self.claims[*g.last().expect("a group has a cite")].end;
        }
    }
}

/// Phrases that introduce the document's own date.
const OWN_DATE_LEADS: &[&str] = &[
    "executed on",
    "executed this",
    "executed at",
    "signed on",
    "signed this",
    "dated:",
    "dated this",
    "dated on",
    "sworn to before me",
    "subscribed and sworn",
    "affirmed before me",
    "commission expires",
    "commission expiration",
];

/// Headings of the parts of a filing whose dates are its own: a certificate or proof of
/// service runs from its heading to the end of the filing (or to an exhibit's slip sheet).
const SERVICE_HEADINGS: &[&str] = &[
    "certificate of service",
    "proof of service",
    "certificate of electronic service",
    "declaration of service",
];

/// The date claims that are the document's own (its execution, signature or jurat date).
pub fn own_dates(text: &str, claims: &[Claim]) -> Vec<bool> {
    let service = service_parts(text);
    claims
        .iter()
        .map(|c| {
            if c.kind != Kind::Date {
                return false;
            }
            if service.iter().any(|&(a, b)| a <= c.start && c.start < b) {
                return true;
            }
            // The line the date is on, up to the date, and no more than 80 bytes of it: the
            // search for the line's start stops there too, so a draft of one long line is
            // not searched back to its start for every date.
            let mut from = c.start.saturating_sub(80);
            while !text.is_char_boundary(from) {
                from += 1;
            }
            if let Some(nl) = text[from..c.start].rfind('\n') {
                from += nl + 1;
            }
            let before = text[from..c.start].to_lowercase();
            // A signature block's `Date:` or `Dated` opens its line. A bare `Date:` is the
            // document's own only beside a signature: elsewhere (an email's header quoted, a
            // record's field) it is a fact to check.
            let line = before.trim_start();
            OWN_DATE_LEADS.iter().any(|lead| before.contains(lead))
                || line.starts_with("dated") && line.len() <= "dated this day of".len()
                || line.starts_with("date:")
                    && line.len() <= "date:  ".len()
                    && near_signature(text, from)
        })
        .collect()
}

/// What marks a signature block.
const SIGNATURE_MARKS: &[&str] = &[
    "/s/",
    "___",
    "signature",
    "respectfully submitted",
    "penalty of perjury",
    "sincerely",
    "attorney for",
    "attorneys for",
    "counsel for",
];

/// Whether a signature mark is within three lines of the line starting at `at`.
fn near_signature(text: &str, at: usize) -> bool {
    let before: Vec<&str> = text[..at].lines().rev().take(3).collect();
    let after = text[at..].lines().take(4);
    before.into_iter().chain(after).any(|l| {
        let l = l.to_lowercase();
        SIGNATURE_MARKS.iter().any(|m| l.contains(m))
    })
}

/// Where the filing's certificates of service are: from a heading line that names one to the
/// next exhibit's slip sheet, or the end.
fn service_parts(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let t = line.trim().trim_end_matches(':').to_lowercase();
        if t.len() < 60
            && SERVICE_HEADINGS
                .iter()
                .any(|h| t.trim_matches(['#', '*', ' ']) == *h)
        {
            out.push((start, text.len()));
        } else if t.starts_with("exhibit") && t.len() < 14 {
            if let Some(last) = out.last_mut() {
                if last.1 == text.len() {
                    last.1 = start;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(t: &str) -> Vec<Claim> {
        super::super::claims(t, &["SMITH".to_string()])
    }

    fn bound(t: &str) -> Vec<(String, Vec<String>)> {
        let cs = claims(t);
        let b = bind(t, &cs);
        cs.iter()
            .zip(b)
            .filter(|(c, _)| c.kind != Kind::Bates)
            .map(|(c, b)| {
                (
                    c.text.clone(),
                    b.iter().map(|&i| cs[i].text.clone()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn sentences_do_not_end_inside_citations_or_after_abbreviations() {
        let t = "Green v. Superior Court, 10 Cal. 3d 616 (1974), held so. Mr. Lee paid $5.00 on Jan. 5, 2024. \"It ends.\" (SMITH000003)\n\nNext paragraph.";
        let cs = claims(t);
        let keep: Vec<(usize, usize)> = cs
            .iter()
            .filter(|c| c.kind == Kind::Citation)
            .map(|c| (c.start, c.end))
            .collect();
        let s: Vec<&str> = sentences(t, &keep)
            .iter()
            .map(|s| &t[s.start..s.end])
            .collect();
        assert_eq!(
            s,
            vec![
                "Green v. Superior Court, 10 Cal. 3d 616 (1974), held so.",
                "Mr. Lee paid $5.00 on Jan. 5, 2024.",
                "\"It ends.\"",
                "(SMITH000003)",
                "Next paragraph."
            ]
        );
    }

    #[test]
    fn each_fact_goes_to_the_cite_after_it_in_its_clause() {
        let t = "Acme charged a late fee of $75.00 on January 5, 2024 (SMITH000005), although I paid on January 3, 2024 (SMITH000001).";
        assert_eq!(
            bound(t),
            vec![
                ("$75.00".into(), vec!["SMITH000005".into()]),
                ("January 5, 2024".into(), vec!["SMITH000005".into()]),
                ("January 3, 2024".into(), vec!["SMITH000001".into()]),
            ]
        );
    }

    #[test]
    fn a_clause_after_the_last_cite_is_not_covered() {
        let t =
            "Acme charged a late fee of $75.00 (SMITH000005) although I paid on January 3, 2024.";
        let b = bound(t);
        assert_eq!(b[0].1, vec!["SMITH000005"]);
        assert!(b[1].1.is_empty(), "{b:?}");
        // A citation sentence after it does cover it.
        let t = "I paid $9.00 (SMITH000001) and rent of $20.00. (SMITH000002)";
        let b = bound(t);
        assert_eq!(b[0].1, vec!["SMITH000001"]);
        assert_eq!(b[1].1, vec!["SMITH000002"], "{b:?}");
    }

    #[test]
    fn string_cites_ranges_citation_sentences_and_paragraphs() {
        let t = "I paid $10.00 on May 1, 2024 (SMITH000004; SMITH000006–SMITH000007).";
        assert_eq!(
            bound(t)[0].1,
            vec!["SMITH000004", "SMITH000006–SMITH000007"]
        );
        let t = "The lease says \"repairs within thirty days.\" (SMITH000003)";
        assert_eq!(bound(t)[0].1, vec!["SMITH000003"]);
        let t = "Rent was $2,150.00. It rose on May 1, 2024. (SMITH000002)\n\nI paid $9.00.";
        let b = bound(t);
        assert_eq!(
            b[0].1,
            vec!["SMITH000002"],
            "the paragraph's cite covers it: {b:?}"
        );
        assert_eq!(b[1].1, vec!["SMITH000002"]);
        assert!(b[2].1.is_empty(), "another paragraph: {b:?}");
        let t = "I paid $9.00 (SMITH000001). Rent was $2,150.00. See SMITH000002.";
        let b = bound(t);
        assert_eq!(b[0].1, vec!["SMITH000001"]);
        assert_eq!(b[1].1, vec!["SMITH000002"], "{b:?}");
    }

    fn reaches(t: &str) -> Vec<(String, Vec<String>)> {
        let cs = claims(t);
        bind_all(t, &cs)
            .reaches
            .iter()
            .map(|r| {
                (
                    t[r.start..r.end].to_string(),
                    r.cites.iter().map(|&i| cs[i].text.clone()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn the_stretches_that_cite_pages() {
        // A sentence with cites is one stretch, with all its cites.
        let t =
            "The landlord never came (SMITH000005), though I called (SMITH000001). No cite here.";
        assert_eq!(
            reaches(t),
            vec![(
                "The landlord never came (SMITH000005), though I called (SMITH000001).".into(),
                vec!["SMITH000005".into(), "SMITH000001".into()]
            )]
        );
        // A citation sentence covers the sentence before it, and joins its cites when that
        // sentence has its own.
        let t = "I paid (SMITH000001). The roof leaked. (SMITH000003)";
        assert_eq!(
            reaches(t)[1],
            (
                "The roof leaked. (SMITH000003)".into(),
                vec!["SMITH000003".into()]
            )
        );
        let t = "I paid (SMITH000001) and rent rose. See SMITH000002.";
        assert_eq!(
            reaches(t)[0].1,
            vec!["SMITH000001".to_string(), "SMITH000002".to_string()]
        );
        // A paragraph-final citation sentence covers the paragraph; one alone covers nothing.
        let t = "Rent was due. It was late. (SMITH000002)\n\n(SMITH000004)";
        assert_eq!(
            reaches(t),
            vec![(
                "Rent was due. It was late. (SMITH000002)".into(),
                vec!["SMITH000002".into()]
            )]
        );
    }

    #[test]
    fn a_bare_date_line_is_the_documents_own_only_beside_a_signature() {
        let own = |t: &str| -> Vec<String> {
            let cs = claims(t);
            cs.iter()
                .zip(own_dates(t, &cs))
                .filter(|(c, o)| *o && c.kind == Kind::Date)
                .map(|(c, _)| c.text.clone())
                .collect()
        };
        // An email's header quoted in a draft, and a record's date field: facts to check.
        assert!(
            own("From: Robert Kline\nDate: January 5, 2024\nSubject: rent (SMITH000005)")
                .is_empty()
        );
        assert!(own("amount: $3,875.00\ndate: 2024-01-09\nbates: SMITH000006").is_empty());
        // A signature block's date line.
        assert_eq!(
            own("I declare under penalty of perjury that the foregoing is true.\n\nDate: April 6, 2024\n\n/s/ Jane Smith"),
            vec!["April 6, 2024".to_string()]
        );
    }

    #[test]
    fn the_documents_own_dates() {
        let t = "I paid on May 1, 2024.\n\nExecuted on March 18, 2024, at Oakland, California.\n\nSubscribed and sworn to before me this 5th day of April, 2024.\nDated: April 6, 2024";
        let cs = claims(t);
        let own: Vec<&str> = cs
            .iter()
            .zip(own_dates(t, &cs))
            .filter(|(_, o)| *o)
            .map(|(c, _)| c.text.as_str())
            .collect();
        assert_eq!(
            own,
            vec![
                "March 18, 2024",
                "this 5th day of April, 2024",
                "April 6, 2024"
            ]
        );
    }
}
