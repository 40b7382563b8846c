//! The verification contract: one row per kind of claim lexrun checks — the word a `verify`
//! rule names it by, what a rule may require of it, and the help a wrong rule gets. The parser,
//! the checker, the plan, the run and the review page all read this one table, as every layer
//! reads diagnostics from `diagnostic.rs`.

use serde::{Deserialize, Serialize};

/// A kind of claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Citation,
    Statute,
    Date,
    Bates,
    Quote,
    Amount,
    /// A sentence that cites pages, judged against them by a model.
    Proposition,
    /// A cite to the case's own record (`Compl. ¶ 59`, `Tr. 45:12`, `2-ER-145`), and an `Id.`
    /// that repeats one: listed in the report as unchecked; no rule names it yet.
    Record,
}

/// What a rule requires of its claims (`citations must appear`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Must {
    /// The claim is found in the sources (folded for case, spacing and typography).
    #[serde(rename = "appear")]
    Appear,
    /// A Bates number was stamped on a page of the sources.
    #[serde(rename = "exist")]
    Exist,
    /// A quotation is on the page, allowing ellipses and bracketed changes.
    #[serde(rename = "match")]
    Match,
    /// A quotation is on the page character for character: the same letters in the same
    /// case, the same punctuation and quotation marks; only runs of white space may differ
    /// (a line break in the source is a space in the draft). No ellipsis, no brackets.
    #[serde(rename = "match exactly")]
    MatchExactly,
    /// A sentence citing pages is judged to be supported by them.
    #[serde(rename = "hold")]
    Hold,
}

impl Must {
    pub const ALL: [Must; 5] = [
        Must::Appear,
        Must::Exist,
        Must::Match,
        Must::MatchExactly,
        Must::Hold,
    ];

    /// The words after `must`.
    pub fn as_str(self) -> &'static str {
        match self {
            Must::Appear => "appear",
            Must::Exist => "exist",
            Must::Match => "match",
            Must::MatchExactly => "match exactly",
            Must::Hold => "hold",
        }
    }

    /// The requirement a rule's words name, spacing ignored.
    pub fn parse(words: &str) -> Option<Must> {
        let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
        Must::ALL.into_iter().find(|m| m.as_str() == words)
    }
}

impl std::fmt::Display for Must {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One kind's row.
#[derive(Debug)]
pub struct Row {
    pub kind: Kind,
    /// The word a rule names the kind by (`citations`).
    pub plural: &'static str,
    /// The word for one claim (`citation`), in reports and the ledger.
    pub singular: &'static str,
    /// What a rule may require; the first is what `lexrun` suggests. None for a kind that is
    /// reported but that no rule names.
    pub musts: &'static [Must],
    /// The help a rule with another requirement gets.
    pub help: &'static str,
}

/// Every kind lexrun checks, in the order reports list them.
pub const KINDS: &[Row] = &[
    Row {
        kind: Kind::Citation,
        plural: "citations",
        singular: "citation",
        musts: &[Must::Appear],
        help: "write `citations must appear`: the citation must appear in the sources",
    },
    Row {
        kind: Kind::Statute,
        plural: "statutes",
        singular: "statute",
        musts: &[Must::Appear],
        help: "write `statutes must appear`: the statute must appear in the sources",
    },
    Row {
        kind: Kind::Date,
        plural: "dates",
        singular: "date",
        musts: &[Must::Appear],
        help: "write `dates must appear`: the date must appear in the sources",
    },
    Row {
        kind: Kind::Bates,
        plural: "bates",
        singular: "bates",
        musts: &[Must::Exist],
        help: "write `bates must exist`: a Bates number is supported when it was stamped on a page of the sources",
    },
    Row {
        kind: Kind::Quote,
        plural: "quotes",
        singular: "quote",
        musts: &[Must::MatchExactly, Must::Match],
        help: "write `quotes must match exactly` (or `must match`, which allows ellipses and bracketed changes)",
    },
    Row {
        kind: Kind::Amount,
        plural: "amounts",
        singular: "amount",
        musts: &[Must::Appear],
        help: "write `amounts must appear`: the amount must appear in the sources",
    },
    Row {
        kind: Kind::Proposition,
        plural: "propositions",
        singular: "proposition",
        musts: &[Must::Hold],
        help: "write `propositions must hold`: each sentence citing pages is judged against them by the block's `judge` model",
    },
    Row {
        kind: Kind::Record,
        plural: "records",
        singular: "record",
        musts: &[],
        help: "record cites are listed in the report as unchecked",
    },
];

impl Kind {
    /// This kind's row of the table.
    pub fn row(self) -> &'static Row {
        KINDS
            .iter()
            .find(|r| r.kind == self)
            .expect("every kind has a row")
    }

    /// The word for one claim of this kind.
    pub fn as_str(self) -> &'static str {
        self.row().singular
    }

    /// The word a rule names this kind by.
    pub fn plural(self) -> &'static str {
        self.row().plural
    }

    /// The kind a rule's word names.
    pub fn from_plural(word: &str) -> Option<Kind> {
        KINDS
            .iter()
            .find(|r| r.plural == word && !r.musts.is_empty())
            .map(|r| r.kind)
    }

    /// Whether a rule may require `must` of this kind.
    pub fn allows(self, must: Must) -> bool {
        self.row().musts.contains(&must)
    }
}

/// How many kinds a rule can name.
const RULED: usize = {
    let (mut n, mut i) = (0, 0);
    while i < KINDS.len() {
        if !KINDS[i].musts.is_empty() {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The words rules name kinds by, in table order.
pub const PLURALS: [&str; RULED] = {
    let mut out = [""; RULED];
    let (mut n, mut i) = (0, 0);
    while i < KINDS.len() {
        if !KINDS[i].musts.is_empty() {
            out[n] = KINDS[i].plural;
            n += 1;
        }
        i += 1;
    }
    out
};

/// The words rules name kinds by, in table order.
pub fn plurals() -> impl Iterator<Item = &'static str> {
    PLURALS.into_iter()
}

/// A verification's decision on a stage's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Every claim was supported, or every unsupported one falls under no rule.
    Passed,
    /// Unsupported claims under `flag`: let through with the report.
    Flagged,
    /// Sent back to the model with the unsupported claims.
    Revised,
    /// Unsupported claims under `block` (or `revise` with no rounds left): nothing written.
    Blocked,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Passed => "passed",
            Decision::Flagged => "flagged",
            Decision::Revised => "revised",
            Decision::Blocked => "blocked",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_row_and_distinct_words() {
        let all = [
            Kind::Citation,
            Kind::Statute,
            Kind::Date,
            Kind::Bates,
            Kind::Quote,
            Kind::Amount,
            Kind::Proposition,
            Kind::Record,
        ];
        assert_eq!(KINDS.len(), all.len());
        for k in all {
            assert_eq!(KINDS.iter().filter(|r| r.kind == k).count(), 1, "{k:?}");
            let ruled = !k.row().musts.is_empty();
            assert_eq!(Kind::from_plural(k.plural()), ruled.then_some(k));
        }
        let words: std::collections::BTreeSet<_> = plurals().collect();
        assert_eq!(words.len(), PLURALS.len());
        assert!(!words.contains("records"), "no rule names record cites yet");
    }

    #[test]
    fn requirements_read_back_and_serialise_as_written() {
        for m in Must::ALL {
            assert_eq!(Must::parse(m.as_str()), Some(m));
            assert_eq!(
                serde_json::to_value(m).unwrap(),
                serde_json::Value::String(m.as_str().into())
            );
        }
        assert_eq!(Must::parse("match   exactly"), Some(Must::MatchExactly));
        assert_eq!(Must::parse("matches"), None);
        assert!(Kind::Quote.allows(Must::MatchExactly) && !Kind::Date.allows(Must::Exist));
    }
}
