//! What the verifier finds in a draft and what it says of each: a claim and its canonical
//! key, where the evidence supports it, and its outcome.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::claim_kind::Kind;

/// What a claim asserts, in canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Key {
    Case {
        volume: u32,
        reporter: String,
        page: u32,
        pin: Option<String>,
        year: Option<u16>,
    },
    Statute {
        code: String,
        section: String,
    },
    Date {
        year: i32,
        month: u32,
        day: u32,
    },
    Bates {
        prefix: String,
        number: u64,
    },
    BatesRange {
        prefix: String,
        from: u64,
        to: u64,
    },
    /// A cite to an exhibit (`Ex. B at 2`, `Exhibit 3`), resolved through the binder's slip
    /// sheets or its exhibit index: the exhibit's label and, if given, its pages.
    Exhibit {
        label: String,
        pages: Option<(u32, u32)>,
    },
    Quote {
        text: String,
    },
    Money {
        cents: i64,
    },
    Percent {
        thousandths: i64,
    },
    /// A claim that cannot be checked as written (a short form with nothing to refer to, a
    /// Bates number with an undeclared prefix); always unsupported, with this reason.
    Unresolved(String),
    /// Text shaped like a citation whose reporter no catalogue knows; never supported, with
    /// this reason.
    Unrecognized(String),
    /// A sentence that cites pages: what it says is judged against them
    /// ([`proposition`]), not looked up.
    Proposition,
    /// A record cite: the filing or transcript (squashed: `compl`, `leedecl`, `tr`, `er`)
    /// and the paragraphs, pages or lines cited (`¶9`, `45:12-18`, `2-145`).
    Record {
        document: String,
        pin: String,
    },
}

impl Key {
    /// What every spelling of the same claim shares, whatever its pin cite or year: the
    /// claim's identity for the ledger (`citation:531 US 98`, `date:2024-01-05`).
    pub fn identity(&self, kind: Kind) -> String {
        match self {
            Key::Case {
                volume,
                reporter,
                page,
                ..
            } => format!("{}:{volume} {reporter} {page}", kind.as_str()),
            Key::Statute { code, section } => format!(
                "{}:{code} § {}",
                kind.as_str(),
                section.split('(').next().unwrap_or(section)
            ),
            other => format!("{}:{other}", kind.as_str()),
        }
    }

    /// The same citation at another pin cite (`Id. at 5`, `531 U.S. at 99`).
    pub fn with_pin(&self, pin: Option<String>) -> Key {
        match (self, pin) {
            (
                Key::Case {
                    volume,
                    reporter,
                    page,
                    year,
                    ..
                },
                Some(p),
            ) => Key::Case {
                volume: *volume,
                reporter: reporter.clone(),
                page: *page,
                pin: Some(p),
                year: *year,
            },
            (Key::Record { document, .. }, Some(p)) => Key::Record {
                document: document.clone(),
                pin: p,
            },
            (k, _) => k.clone(),
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Case {
                volume,
                reporter,
                page,
                pin,
                year,
            } => {
                write!(f, "{volume} {reporter} {page}")?;
                if let Some(p) = pin {
                    write!(f, ", {p}")?;
                }
                if let Some(y) = year {
                    write!(f, " ({y})")?;
                }
                Ok(())
            }
            Key::Statute { code, section } => write!(f, "{code} § {section}"),
            Key::Date {
                year,
                month,
                day: 0,
            } => write!(f, "{year:04}-{month:02}"),
            Key::Date { year, month, day } => write!(f, "{year:04}-{month:02}-{day:02}"),
            Key::Bates { prefix, number } => write!(f, "{prefix}{number:06}"),
            Key::BatesRange { prefix, from, to } => write!(f, "{prefix}{from:06}–{prefix}{to:06}"),
            Key::Exhibit { label, pages } => match pages {
                Some((a, b)) if a == b => write!(f, "Exhibit {label} at {a}"),
                Some((a, b)) => write!(f, "Exhibit {label} at {a}-{b}"),
                None => write!(f, "Exhibit {label}"),
            },
            Key::Quote { text } => f.write_str(text),
            Key::Money { cents } => write!(f, "${}.{:02}", cents / 100, cents % 100),
            Key::Percent { thousandths } => {
                let v = *thousandths as f64 / 1000.0;
                write!(f, "{v}%")
            }
            Key::Unresolved(why) | Key::Unrecognized(why) => f.write_str(why),
            Key::Proposition => f.write_str("proposition"),
            Key::Record { document, pin } => write!(f, "{document} {pin}"),
        }
    }
}

/// One checkable statement in a draft.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub kind: Kind,
    /// The claim as written.
    pub text: String,
    /// Byte offsets into the draft.
    pub start: usize,
    pub end: usize,
    pub key: Key,
}

impl Claim {
    /// The claim's identity for the ledger ([`Key::identity`]; a claim that cannot be
    /// checked is known by its words).
    pub fn identity(&self) -> String {
        match &self.key {
            Key::Unresolved(_) | Key::Unrecognized(_) => {
                format!("{}:{}", self.kind.as_str(), self.text.trim())
            }
            k => k.identity(self.kind),
        }
    }

    pub fn new(kind: Kind, source: &str, start: usize, end: usize, key: Key) -> Claim {
        Claim {
            kind,
            text: source[start..end].to_string(),
            start,
            end,
            key,
        }
    }
}

/// Where a claim is supported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    pub file: String,
    pub page: u32,
    pub bates: Option<String>,
    /// The page of a reported opinion the place is on, by the star markers of the source that
    /// carries it (`*629` in the text: page 629 begins there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub star: Option<u32>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub snippet: String,
    /// Where the match is in the page's normalised text (byte offsets), for a review that
    /// shows the page with the matched words highlighted; empty for a Bates stamp.
    #[serde(skip)]
    pub span: (usize, usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Supported,
    Unsupported,
    /// Shaped like a citation, but in no catalogue: it cannot be checked, so it is never
    /// passed silently.
    Unrecognized,
    /// In the evidence, but not on the page its sentence cites.
    Miscited,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Supported => "supported",
            Status::Unsupported => "unsupported",
            Status::Unrecognized => "unrecognized",
            Status::Miscited => "miscited",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub claim: Claim,
    pub status: Status,
    /// Where the claim is supported; for a miscited claim, where it really is.
    pub source: Option<Location>,
    pub reason: Option<String>,
    /// The pages the claim's sentence cites (empty when it cites none).
    pub cited: Vec<Location>,
    /// For a proposition: the judge's verdict and quotation.
    pub judgement: Option<Judgement>,
}

/// What a judge model said of a proposition, as it said it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// `supported`, `contradicted` or `not_found`.
    pub verdict: String,
    /// The verbatim quotation the judge gave from the cited pages.
    pub quote: String,
    pub reason: String,
}
