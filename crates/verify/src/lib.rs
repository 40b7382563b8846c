//! The verifier: every citation, statute, date, Bates number, quotation and amount in a draft,
//! checked against the evidence, each with its byte span and the page that supports it — or
//! the reason nothing does.
//!
//! Needs only text: `evidence` reads sources (every kind, through `sources`) into pages,
//! `extract` finds claims, `index` looks them up, `report` writes what an attorney reads.

use lexrun_base::{calendar, claim_kind, confine};
use lexrun_sources as sources;

pub mod catalogue;
mod cites;
mod claim;
pub mod decisions;
mod draft;
pub mod evidence;
mod exact;
mod extract;
mod index;
mod injection;
mod names;
mod needs;
mod normalize;
pub mod pinpoint;
pub mod proposition;
pub mod report;
mod sentences;
mod spans;
pub mod taint;
mod wordkeys;

pub use cites::Allowed;
pub use claim::{Claim, Judgement, Key, Location, Outcome, Status};
pub use draft::{claims, claims_allowing, verify, Verification};
pub use evidence::{Doc, DocSource, Evidence, SourceFile};
pub use exact::hold_quotes_exactly;
pub use index::{Index, Wanted};
pub use normalize::normalize;

pub use crate::claim_kind::Kind;

use draft::verify_indexed;

/// Compiles the verifier's patterns now (about 90 ms), so that a later check is quick; a run
/// calls this in the background while its first model calls are under way.
pub fn warm() {
    let sample = "Doe v. Roe, 1 U.S. 1, 2 (2000); 28 U.S.C. § 1332(a); Fed. R. Civ. P. 12(b)(6); \
                  January 5, 2024; 01/05/2024; $1.00; 5%; SMITH000001; \"a quote\"; id. at 2.";
    let mut ev = Evidence::new(vec!["SMITH".into()]);
    ev.add_pages("warm".into(), vec![sample.into()]);
    let _ = verify(sample, &ev);
}

/// [`verify`], where support that only files which entered the matter after a model wrote
/// the claim give does not count (see [`taint`]).
pub fn verify_with(draft: &str, evidence: &Evidence, taint: &taint::Taint) -> Verification {
    let (mut v, index) = verify_indexed(draft, evidence);
    taint::apply(&mut v, &index, draft, evidence, taint);
    v
}

/// [`verify_with`], where what the ledger knows is asked for only once the evidence has been
/// read (so that `taint` can use what an [`evidence::Observer`] saw of each file); its error
/// stops the check.
pub fn verify_then<E>(
    draft: &str,
    evidence: &Evidence,
    taint: impl FnOnce() -> Result<taint::Taint, E>,
) -> Result<Verification, E> {
    let (mut v, index) = verify_indexed(draft, evidence);
    let t = taint()?;
    taint::apply(&mut v, &index, draft, evidence, &t);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_inside_a_citation_belongs_to_the_citation() {
        let c = claims(
            "Doe v. Roe, 123 F.3d 456 (9th Cir. Jan. 5, 1999), decided later.",
            &[],
        );
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].kind, Kind::Citation);
        assert_eq!(c[0].key.to_string(), "123 f3d 456 (1999)");
    }

    #[test]
    fn offsets_are_byte_offsets_into_the_draft() {
        let draft = "Café — paid $5.00 on 1/2/2024 (SMITH000001).";
        for c in claims(draft, &["SMITH".to_string()]) {
            assert_eq!(&draft[c.start..c.end], c.text);
        }
    }
}
