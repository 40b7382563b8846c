//! Reviewers' decisions on claims the verifier did not support, as data: what was decided, on
//! which claim, by whom and on which page. The ledger (`lexrun-store`) keeps them; what a
//! decision changes is the verifier's to say.

use serde::{Deserialize, Serialize};

/// What a reviewer decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Supported by the page the reviewer names.
    Confirmed,
    /// Must come out of the draft: it stays blocking until it is gone.
    Struck,
    /// Not a claim (a defined term, a caption), for the reason given.
    Waived,
    /// The earlier decision undone: the claim is undecided again.
    Withdrawn,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::Struck => "struck",
            Verdict::Waived => "waived",
            Verdict::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        [
            Verdict::Confirmed,
            Verdict::Struck,
            Verdict::Waived,
            Verdict::Withdrawn,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// The page a confirmed claim is supported by, as the reviewer named it and as it was then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionPage {
    /// The source file as the verification names it.
    pub file: String,
    pub page: u32,
    pub bates: Option<String>,
    /// blake3 of the page's text when the decision was made.
    pub hash: String,
}

/// One decision, as the ledger keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The ledger's number for it, in the order decisions were recorded (0 before).
    pub seq: i64,
    pub matter: String,
    /// The claim's id as the report shows it (`date-3f9a2b41c07e`).
    pub claim_id: String,
    pub kind: String,
    /// The claim as written.
    pub claim: String,
    /// The sentence it stands in, and that sentence's hash.
    pub sentence: String,
    pub sentence_hash: String,
    /// blake3 of the draft decided on.
    pub draft_hash: String,
    /// The run and stage whose report it was made on (empty for `lexrun verify`'s).
    pub run_id: String,
    pub stage: String,
    #[serde(rename = "decision")]
    pub verdict: Verdict,
    pub page: Option<DecisionPage>,
    pub note: Option<String>,
    /// Why a claim was waived.
    pub reason: Option<String>,
    pub reviewer: String,
    /// Milliseconds since the epoch.
    pub created: i64,
    /// The decision that replaced this one, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<i64>,
}

impl Decision {
    /// Whether the decision leaves the claim decided (it is not an undo).
    pub fn stands(&self) -> bool {
        self.verdict != Verdict::Withdrawn
    }
}
