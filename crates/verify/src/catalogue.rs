//! The catalogue of reporters, journals and laws that citations are recognised by: Free Law
//! Project's reporters-db (every reporter edition with its date range and every variant
//! spelling; journals; statute and regulation compilations), generated into
//! `catalogue/catalogue.tsv` by `scripts/reporters-catalogue`, plus lexrun's own additions in
//! `catalogue/additions.tsv`. Both are compiled into the binary, so lexrun never runs without
//! its catalogue.
//!
//! Spellings are compared in a squashed form — letters and digits only, lower case, with the
//! ordinals `2nd`/`3rd` written as `2d`/`3d` — so `Wn.2d`, `Wn. 2d` and `WN 2D` are one key.
//! Every spelling maps to its edition's canonical name; a spelling that names several editions
//! (reporters-db gives a few variants to two reporters) matches only itself.

use std::collections::HashMap;
use std::sync::LazyLock;

const GENERATED: &str = include_str!("catalogue/catalogue.tsv");
const ADDITIONS: &str = include_str!("catalogue/additions.tsv");

/// What kind of publication a reporter entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// A case reporter (federal, state, regional, specialty, neutral, Westlaw, Lexis).
    Reporter,
    /// A law review or journal.
    Journal,
}

/// A reporter edition (or a group of editions sharing a spelling).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edition {
    /// The canonical spelling, as reporters-db writes it: `Wash. 2d`.
    pub name: String,
    /// The squashed canonical spelling, used in claim keys: `wash2d`.
    pub key: String,
    /// First and last year of the edition, where known.
    pub start: Option<u16>,
    pub end: Option<u16>,
    pub series: Series,
}

/// How a law is cited after its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LawForm {
    /// `42 U.S.C. § 1983`: a title number before the name.
    Title,
    /// `Fla. Stat. § 83.56`: the name, then the section.
    Section,
    /// `Okla. Stat. tit. 12, § 1`.
    Tit,
    /// `Mass. Gen. Laws ch. 186, § 14`.
    Ch,
    /// `La. Civ. Code Ann. art. 2696`.
    Art,
    /// `735 ILCS 5/2-1001`.
    Act,
    /// `123 Stat. 456`, `85 Fed. Reg. 1234`: volume and page.
    Volume,
    /// `Pub. L. No. 111-148`.
    PubLaw,
}

#[derive(Clone, Debug)]
pub struct Law {
    /// The canonical name: `U.S.C.`, `Pa. Cons. Stat.`.
    pub name: String,
    /// The squashed canonical name without a trailing `Ann.`: `usc`, `paconsstat`.
    pub key: String,
    pub forms: Vec<LawForm>,
}

/// A code named by its subject: `Cal. * Code` covers `Cal. Bus. & Prof. Code`.
#[derive(Clone, Debug)]
pub struct Template {
    pub before: String,
    pub after: String,
    pub law: usize,
}

pub struct Catalogue {
    editions: Vec<Edition>,
    /// Squashed spelling → edition.
    spellings: HashMap<String, usize>,
    laws: Vec<Law>,
    law_spellings: HashMap<String, usize>,
    /// Every law spelling as written, for the statute pattern.
    pub law_written: Vec<(String, usize)>,
    pub templates: Vec<Template>,
    /// `reporters-db VERSION`.
    pub source: String,
    /// How many edition and variation spellings the catalogue holds.
    pub spelling_count: usize,
    /// The squashed first word of every law spelling and subject template.
    law_first_words: std::collections::HashSet<String>,
    /// Squashed spellings that the catalogue writes in lower case (`p.2d`, `wl`); any other
    /// reporter must be written with a capital, so `Exhibit 3 p. 4` names no reporter.
    lowercase: Vec<String>,
}

/// The catalogue, parsed on first use (about a millisecond).
pub static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(|| {
    Catalogue::parse(&[GENERATED, ADDITIONS]).expect("the compiled-in citation catalogue is valid")
});

/// Letters and digits only, lower case; `2nd`, `3rd` → `2d`, `3d`; so every spacing, period
/// and case of a spelling is one key.
pub fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let lower = word.to_lowercase();
        let digits = lower.chars().take_while(char::is_ascii_digit).count();
        let rest = &lower[digits..];
        if digits > 0 && (rest == "nd" || rest == "rd") {
            out.push_str(&lower[..digits]);
            out.push('d');
        } else {
            out.push_str(&lower);
        }
    }
    out
}

fn year(s: &str) -> Option<u16> {
    s.parse().ok()
}

/// An edition as the catalogue's lines give it, before spellings are grouped.
struct RawEdition {
    name: String,
    start: Option<u16>,
    end: Option<u16>,
    series: Series,
}

/// What the catalogue's lines say, in the order they say it.
#[derive(Default)]
struct Rows {
    raw: Vec<RawEdition>,
    by_name: HashMap<String, usize>,
    variations: Vec<(String, String)>,
    laws: Vec<Law>,
    law_by_name: HashMap<String, usize>,
    law_written: Vec<(String, usize)>,
    templates: Vec<Template>,
    source: String,
}

impl Rows {
    /// Reads every line of every file; a malformed line is an error naming it.
    fn read(files: &[&str]) -> Result<Rows, String> {
        let mut rows = Rows::default();
        for file in files {
            for (n, line) in file.lines().enumerate() {
                if let Some(rest) = line.strip_prefix("# source\t") {
                    rows.source = rest.split('\t').take(2).collect::<Vec<_>>().join(" ");
                    continue;
                }
                if line.starts_with('#') || line.trim().is_empty() {
                    continue;
                }
                let f: Vec<&str> = line.split('\t').collect();
                rows.line(&f)
                    .ok_or_else(|| format!("catalogue line {}: `{line}` is malformed", n + 1))?;
            }
        }
        Ok(rows)
    }

    /// One line's fields: an edition or journal, a variant spelling, a law, or a subject
    /// template; `None` if it is none of these.
    fn line(&mut self, f: &[&str]) -> Option<()> {
        match f[0] {
            "E" | "J" if f.len() >= 4 => {
                let series = if f[0] == "E" {
                    Series::Reporter
                } else {
                    Series::Journal
                };
                self.edition(f[1], year(f[2]), year(f[3]), series);
            }
            "V" | "JV" if f.len() >= 3 => {
                self.variations.push((f[1].to_string(), f[2].to_string()));
            }
            "L" if f.len() >= 5 => {
                let form = match f[4] {
                    "title" => LawForm::Title,
                    "section" => LawForm::Section,
                    "tit" => LawForm::Tit,
                    "ch" => LawForm::Ch,
                    "art" => LawForm::Art,
                    "act" => LawForm::Act,
                    "volume" => LawForm::Volume,
                    "publaw" => LawForm::PubLaw,
                    _ => return None,
                };
                let li = self.law(f[2], Vec::new());
                let laws = &mut self.laws;
                if !laws[li].forms.contains(&form) {
                    laws[li].forms.push(form);
                }
                if !self.law_written.iter().any(|(s, i)| s == f[1] && *i == li) {
                    self.law_written.push((f[1].to_string(), li));
                }
            }
            "T" if f.len() >= 3 => {
                let (before, after) = f[1].split_once('*')?;
                let law = self.law(f[2], vec![LawForm::Section]);
                self.templates.push(Template {
                    before: before.trim_end().to_string(),
                    after: after.trim_start().to_string(),
                    law,
                });
            }
            _ => return None,
        }
        Some(())
    }

    /// An edition; one listed twice (two reporters share it) widens its years, and an
    /// unknown bound stays unknown.
    fn edition(&mut self, name: &str, start: Option<u16>, end: Option<u16>, series: Series) {
        match self.by_name.get(name) {
            Some(&i) => {
                let r = &mut self.raw[i];
                r.start = r.start.zip(start).map(|(a, b)| a.min(b));
                r.end = r.end.zip(end).map(|(a, b)| a.max(b));
            }
            None => {
                self.by_name.insert(name.to_string(), self.raw.len());
                self.raw.push(RawEdition {
                    name: name.to_string(),
                    start,
                    end,
                    series,
                });
            }
        }
    }

    /// The index of the law named `name`, added with `forms` if it is new.
    fn law(&mut self, name: &str, forms: Vec<LawForm>) -> usize {
        let laws = &mut self.laws;
        *self.law_by_name.entry(name.to_string()).or_insert_with(|| {
            laws.push(Law {
                name: name.to_string(),
                key: law_key(name),
                forms,
            });
            laws.len() - 1
        })
    }

    /// Every squashed spelling (canonical names and variations) → the editions it names;
    /// and the squashed spellings the catalogue writes in lower case.
    fn spellings(&self) -> (HashMap<String, Vec<usize>>, Vec<String>) {
        let mut names: HashMap<String, Vec<usize>> = HashMap::new();
        let mut lowercase: Vec<String> = Vec::new();
        let spelled = self
            .raw
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.as_str(), Some(i)))
            .chain(
                self.variations
                    .iter()
                    .map(|(v, ed)| (v.as_str(), self.by_name.get(ed).copied())),
            );
        for (spelling, ed) in spelled {
            let Some(i) = ed else {
                continue;
            };
            let k = squash(spelling);
            if spelling.starts_with(|c: char| c.is_lowercase()) {
                lowercase.push(k.clone());
            }
            let v = names.entry(k).or_default();
            if !v.contains(&i) {
                v.push(i);
            }
        }
        (names, lowercase)
    }

    /// One entry per edition; a spelling that names several editions is an entry of its
    /// own, keyed by the spelling itself (so it matches only what is written the same way)
    /// and dated by the widest of its editions' ranges. Also each spelling's entry.
    fn editions(
        &self,
        names: &HashMap<String, Vec<usize>>,
    ) -> (Vec<Edition>, HashMap<String, usize>) {
        let raw = &self.raw;
        let mut editions: Vec<Edition> = raw
            .iter()
            .map(|r| Edition {
                name: r.name.clone(),
                key: squash(&r.name),
                start: r.start,
                end: r.end,
                series: r.series,
            })
            .collect();
        let mut spellings: HashMap<String, usize> = HashMap::new();
        let mut keys: Vec<&String> = names.keys().collect();
        keys.sort();
        for k in keys {
            let eds = &names[k];
            if let [one] = eds.as_slice() {
                spellings.insert(k.clone(), *one);
                continue;
            }
            let bound = |f: fn(&RawEdition) -> Option<u16>, pick: fn(u16, u16) -> u16| {
                eds.iter()
                    .map(|&i| f(&raw[i]))
                    .try_fold(None, |acc: Option<u16>, y| {
                        y.map(|y| Some(acc.map_or(y, |a| pick(a, y))))
                    })
                    .flatten()
            };
            editions.push(Edition {
                name: eds
                    .iter()
                    .map(|&i| raw[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(" or "),
                key: k.clone(),
                start: bound(|r| r.start, u16::min),
                end: bound(|r| r.end, u16::max),
                series: raw[eds[0]].series,
            });
            spellings.insert(k.clone(), editions.len() - 1);
        }
        (editions, spellings)
    }
}

impl Catalogue {
    /// The catalogue from its files' lines: editions and their spellings, laws and templates.
    pub fn parse(files: &[&str]) -> Result<Catalogue, String> {
        let rows = Rows::read(files)?;
        if rows.raw.len() < 1000 || rows.laws.len() < 300 {
            return Err(format!(
                "the citation catalogue holds {} editions and {} laws; it is damaged",
                rows.raw.len(),
                rows.laws.len()
            ));
        }
        let (names, lowercase) = rows.spellings();
        let (editions, spellings) = rows.editions(&names);
        let spelling_count = names.len();
        let Rows {
            laws,
            law_written,
            templates,
            source,
            ..
        } = rows;
        let law_spellings = law_written.iter().map(|(s, i)| (squash(s), *i)).collect();
        let law_first_words = law_written
            .iter()
            .map(|(s, _)| s.as_str())
            .chain(templates.iter().map(|t| t.before.as_str()))
            .filter_map(|s| s.split_whitespace().next())
            .map(squash)
            .collect();
        Ok(Catalogue {
            editions,
            spellings,
            laws,
            law_spellings,
            law_written,
            templates,
            source,
            spelling_count,
            lowercase,
            law_first_words,
        })
    }

    /// The edition a reporter spelling names, if any.
    pub fn edition(&self, spelling: &str) -> Option<&Edition> {
        self.spellings
            .get(&squash(spelling))
            .map(|&i| &self.editions[i])
    }

    /// Whether a (squashed) word begins some law's name, as the catalogue spells it.
    pub fn may_begin_law(&self, squashed_word: &str) -> bool {
        self.law_first_words.contains(squashed_word)
    }

    /// Whether some lower-case spelling of the catalogue starts with this byte.
    pub fn lowercase_starts(&self, c: u8) -> bool {
        self.lowercase
            .iter()
            .any(|l| l.as_bytes().first() == Some(&c))
    }

    /// The reporter or journal a spelling names, as written: one written in lower case must
    /// be a lower-case spelling of the catalogue.
    pub fn edition_written(&self, written: &str, squashed: &str) -> Option<&Edition> {
        let lower = written
            .trim_start_matches(['(', '['])
            .starts_with(|c: char| c.is_lowercase());
        if lower && !self.lowercase.iter().any(|l| l == squashed) {
            return None;
        }
        self.spellings.get(squashed).map(|&i| &self.editions[i])
    }

    /// The law a spelling names, if any (not subject templates).
    pub fn law(&self, spelling: &str) -> Option<&Law> {
        self.law_spellings
            .get(&squash(spelling))
            .map(|&i| &self.laws[i])
    }

    pub fn law_at(&self, i: usize) -> &Law {
        &self.laws[i]
    }

    pub fn editions(&self) -> &[Edition] {
        &self.editions
    }
}

/// A law's key: squashed, without `Ann.` (annotated editions cite the same sections):
/// `Tex. Prop. Code Ann.` → `texpropcode`, `Md. Code Ann., Real Prop.` → `mdcoderealprop`.
pub fn law_key(name: &str) -> String {
    let kept: Vec<&str> = name
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| {
            !w.is_empty()
                && !matches!(
                    w.trim_end_matches('.').to_ascii_lowercase().as_str(),
                    "ann" | "annotated"
                )
        })
        .collect();
    squash(&kept.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squashing_folds_spacing_periods_case_and_ordinals() {
        assert_eq!(squash("Wn. 2d"), "wn2d");
        assert_eq!(squash("So. 2nd"), "so2d");
        assert_eq!(squash("F.Supp. 3D"), "fsupp3d");
        assert_eq!(squash("P. [2d]"), "p2d");
        assert_eq!(squash("Cal.Rptr.3d"), squash("Cal. Rptr. 3d"));
    }

    #[test]
    fn variants_name_their_canonical_edition() {
        let c = &*CATALOGUE;
        assert!(c.source.starts_with("reporters-db "), "{}", c.source);
        assert_eq!(c.edition("Wn.2d").unwrap().name, "Wash. 2d");
        assert_eq!(c.edition("Fed. Appx.").unwrap().key, "fappx");
        assert_eq!(c.edition("F.4th").unwrap().start, Some(2021));
        assert!(c.edition("Betts Dec").is_some() || c.edition("Betts' Dec.").is_some());
        assert!(c.edition("S.W. 12th St.").is_none());
        assert_eq!(c.law("Pa.C.S.").unwrap().key, "paconsstat");
        assert_eq!(c.law("U.S.C.A.").unwrap().key, "usc");
    }

    #[test]
    fn a_damaged_catalogue_is_refused() {
        assert!(Catalogue::parse(&["E\tF.\n"]).is_err());
        assert!(Catalogue::parse(&["Q\tnonsense\tline\n"]).is_err());
        assert!(Catalogue::parse(&[""]).is_err());
    }
}
