//! A checked production: what a volume holds and how each document in it is numbered,
//! designated, redacted or withheld. The runtime hands it to `exhibits::production`.

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Bates {
    pub prefix: String,
    pub start: u64,
    pub width: u32,
    pub suffix: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Production {
    /// The volume's name, also its folder: `VOL001`.
    pub volume: String,
    pub bates: Bates,
    /// Whether `start` was written; without it a volume continues after the earlier ones.
    pub start_given: bool,
    /// Designations from least to most protective: (name, legend words).
    pub legends: Vec<(String, String)>,
    /// Which documents (patterns relative to the matter) carry which designation.
    pub designate: Vec<Designate>,
    pub redact: Vec<Redact>,
    pub withhold: Vec<Withhold>,
    /// Documents produced natively, by pattern.
    pub natives: Vec<String>,
    pub images: ImageFormat,
    /// The Concordance load file's fields, in order.
    pub fields: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Designate {
    pub legend: String,
    pub files: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Redact {
    #[serde(flatten)]
    pub what: RedactWhat,
    /// The label's reason: `PII` makes `REDACTED – PII`.
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "redact", rename_all = "snake_case")]
pub enum RedactWhat {
    /// A pattern lexrun knows (`ssn`, `account`, `dob`) or a declared one, as a regular
    /// expression.
    Pattern { name: String, regex: String },
    /// A box in points from the top-left corner of a page of one document.
    Box {
        file: String,
        page: u32,
        rect: [f64; 4],
    },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Withhold {
    pub files: Vec<String>,
    pub privilege: String,
    pub description: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Pdf,
    Tiff,
}

impl ImageFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ImageFormat::Pdf => "pdf",
            ImageFormat::Tiff => "tiff",
        }
    }
}

/// The patterns lexrun knows by name, as regular expressions. Where an expression has a
/// group, only the group is redacted (the number, not the words before it).
pub const KNOWN_PATTERNS: &[(&str, &str, &str)] = &[
    (
        "ssn",
        r"\b[0-9]{3}-[0-9]{2}-[0-9]{4}\b",
        "Social Security numbers written NNN-NN-NNNN",
    ),
    (
        "account",
        r"(?i)\b(?:account|acct)\.?\s*(?:no\.?|number|#)?\s*:?\s*([0-9][0-9 -]{5,}[0-9])\b",
        "account numbers after the word account or acct",
    ),
    (
        "dob",
        r"(?i)\b(?:date of birth|dob|born)\s*:?\s*([0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4}|[0-9]{4}-[0-9]{2}-[0-9]{2}|[A-Z][a-z]+ [0-9]{1,2}, [0-9]{4})",
        "dates of birth after `date of birth`, `DOB` or `born`",
    ),
];

/// The load-file fields lexrun writes.
pub const FIELDS: &[&str] = &[
    "BEGBATES",
    "ENDBATES",
    "BEGATTACH",
    "ENDATTACH",
    "PGCOUNT",
    "CUSTODIAN",
    "FILENAME",
    "DATESENT",
    "FROM",
    "TO",
    "CC",
    "SUBJECT",
    "CONFIDENTIALITY",
    "NATIVEPATH",
    "TEXTPATH",
    "HASH",
    "MD5HASH",
    "SHA1HASH",
    "BCC",
    "DATERCVD",
    "TIMESENT",
    "DATECREATED",
    "DATEMODIFIED",
    "AUTHOR",
    "FILEEXT",
    "FILESIZE",
    "MESSAGEID",
    "ATTACHCOUNT",
    "PRODVOL",
    "REDACTED",
    "ALLCUSTODIANS",
    "PRODSTATUS",
    "EXCEPTION",
];

/// The fields a load file has when its production declares none.
pub const DEFAULT_FIELDS: &[&str] = &[
    "BEGBATES",
    "ENDBATES",
    "BEGATTACH",
    "ENDATTACH",
    "PGCOUNT",
    "CUSTODIAN",
    "FILENAME",
    "DATESENT",
    "FROM",
    "TO",
    "CC",
    "SUBJECT",
    "CONFIDENTIALITY",
    "NATIVEPATH",
    "TEXTPATH",
    "HASH",
];

impl Production {
    /// The first Bates number, as stamped.
    pub fn first_number(&self) -> String {
        format!(
            "{}{:0w$}{}",
            self.bates.prefix,
            self.bates.start,
            self.bates.suffix,
            w = self.bates.width as usize
        )
    }

    /// Lines for `lexrun plan`, each saying one thing the volume will do.
    pub fn describe(&self) -> Vec<String> {
        let mut v = vec![format!(
            "volume {} · Bates from {} · images {}",
            self.volume,
            self.first_number(),
            self.images.as_str()
        )];
        for d in &self.designate {
            let words = self
                .legends
                .iter()
                .find(|(n, _)| *n == d.legend)
                .map_or("", |(_, w)| w.as_str());
            v.push(format!("designates {} {:?}", d.files.join(", "), words));
        }
        if !self.natives.is_empty() {
            v.push(format!("produces natively {}", self.natives.join(", ")));
        }
        for r in &self.redact {
            let what = match &r.what {
                RedactWhat::Pattern { name, regex } if name == "pattern" => {
                    format!("pattern {regex:?}")
                }
                RedactWhat::Pattern { name, .. } => name.clone(),
                RedactWhat::Box { file, page, rect } => format!(
                    "box on {file} page {page} at {}, {}, {}, {}",
                    rect[0], rect[1], rect[2], rect[3]
                ),
            };
            v.push(format!("redacts {what} as \"REDACTED – {}\"", r.reason));
        }
        for w in &self.withhold {
            v.push(format!(
                "withholds {} ({}), logged",
                w.files.join(", "),
                w.privilege
            ));
        }
        v.push(format!("load file fields {}", self.fields.join(", ")));
        v
    }
}
