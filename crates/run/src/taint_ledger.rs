//! The ledger's facts as claim taint reads them: the store answers the questions
//! `verify::taint::Ledger` asks, and the verifier decides.

use lexrun_store::Store;
use lexrun_verify::taint::{Ledger, LedgerClaim};

/// The store, read for claim taint.
pub struct LedgerFacts<'a>(pub &'a Store);

impl Ledger for LedgerFacts<'_> {
    fn model_claims(&self, matter: Option<&str>) -> Vec<LedgerClaim> {
        self.0
            .model_claims(matter)
            .unwrap_or_default()
            .into_iter()
            .map(|c| LedgerClaim {
                kind: c.kind,
                key: c.key,
                text: c.text,
                run: c.run_id,
                stage: c.stage,
                status: c.status,
                at: c.created,
            })
            .collect()
    }

    fn admitted(&self, text_hash: &str) -> bool {
        self.0.admitted_text(text_hash).is_some()
    }

    fn matters_seen(&self, text_hash: &str) -> Vec<String> {
        self.0.matters_seen(text_hash)
    }

    fn first_seen(&self, text_hash: &str) -> Option<i64> {
        self.0.first_seen(None, text_hash)
    }
}
