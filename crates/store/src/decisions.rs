//! Reviewers' decisions on claims the verifier did not support: confirmed by a page the
//! reviewer names, struck, or waived as no claim, each with who decided, when, and what it was
//! about (the claim, its sentence, the draft's and the page's hashes). Decisions are never
//! deleted: a later decision on the same claim of the same matter supersedes the earlier one,
//! and `withdrawn` (an undo) leaves the claim undecided. The ledger only records; what a
//! decision changes is `verify::decisions`'s to say.

use super::db::{vals, Row};
use super::types::{Store, StoreError};
pub use lexrun_base::decision::{Decision, DecisionPage, Verdict};

const COLS: &str = "matter, claim_id, kind, claim, sentence, sentence_hash, draft_hash, run_id, stage, decision, page_file, page_no, page_bates, page_hash, note, reason, reviewer, created";

fn decision_from_row(seq: i64, r: &Row) -> Option<Decision> {
    let page = r.opt_text(10).map(|file| DecisionPage {
        file,
        page: r.int(11).clamp(0, u32::MAX as i64) as u32,
        bates: r.opt_text(12),
        hash: r.text(13),
    });
    Some(Decision {
        seq,
        matter: r.text(0),
        claim_id: r.text(1),
        kind: r.text(2),
        claim: r.text(3),
        sentence: r.text(4),
        sentence_hash: r.text(5),
        draft_hash: r.text(6),
        run_id: r.text(7),
        stage: r.text(8),
        verdict: Verdict::parse(&r.text(9))?,
        page,
        note: r.opt_text(14),
        reason: r.opt_text(15),
        reviewer: r.text(16),
        created: r.int(17),
        superseded_by: None,
    })
}

impl Store {
    /// Records a decision in one statement: it is in the ledger whole, or not at all.
    /// Returns its number.
    pub fn add_decision(&self, d: &Decision) -> Result<i64, StoreError> {
        let p = d.page.as_ref();
        let r = self
            .db
            .one(
                &format!(
                    "INSERT INTO decisions ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) RETURNING {}",
                    self.db.rowid()
                ),
                vals![
                    &d.matter,
                    &d.claim_id,
                    &d.kind,
                    &d.claim,
                    &d.sentence,
                    &d.sentence_hash,
                    &d.draft_hash,
                    &d.run_id,
                    &d.stage,
                    d.verdict.as_str(),
                    p.map(|p| p.file.as_str()),
                    p.map(|p| p.page as i64),
                    p.and_then(|p| p.bates.as_deref()),
                    p.map(|p| p.hash.as_str()),
                    d.note.as_deref(),
                    d.reason.as_deref(),
                    &d.reviewer,
                    d.created,
                ],
            )
            .map_err(|e| self.lerr(e))?;
        Ok(r.map(|r| r.int(0)).unwrap_or(0))
    }

    /// Every decision on claims of `matter`, in the order they were recorded, each marked with
    /// the decision that superseded it.
    pub fn decisions(&self, matter: &str) -> Result<Vec<Decision>, StoreError> {
        let rows = self
            .db
            .query(
                &format!(
                    "SELECT {COLS}, {id} FROM decisions WHERE matter = ?1 ORDER BY {id}",
                    id = self.db.rowid()
                ),
                vals![matter],
            )
            .map_err(|e| self.lerr(e))?;
        Ok(superseded(rows))
    }

    /// Every decision recorded on a run's reports, in order, with what superseded each.
    pub fn run_decisions(&self, run_id: &str) -> Result<Vec<Decision>, StoreError> {
        let matters = self
            .db
            .query(
                "SELECT DISTINCT matter FROM decisions WHERE run_id = ?1",
                vals![run_id],
            )
            .map_err(|e| self.lerr(e))?;
        let mut out = Vec::new();
        for m in matters {
            out.extend(
                self.decisions(&m.text(0))?
                    .into_iter()
                    .filter(|d| d.run_id == run_id),
            );
        }
        out.sort_by_key(|d| d.seq);
        Ok(out)
    }

    /// The decision standing on each claim of `matter`: the latest, unless it was withdrawn.
    pub fn standing_decisions(&self, matter: &str) -> Result<Vec<Decision>, StoreError> {
        Ok(self
            .decisions(matter)?
            .into_iter()
            .filter(|d| d.superseded_by.is_none() && d.stands())
            .collect())
    }
}

fn superseded(rows: Vec<Row>) -> Vec<Decision> {
    let mut out: Vec<Decision> = rows
        .iter()
        .filter_map(|r| decision_from_row(r.int(18), r))
        .collect();
    // In the order the ledger recorded them, whatever the clocks of the desks that made them;
    // a decision supersedes an earlier one on the same claim: same id, sentence, kind and words.
    out.sort_by_key(|d| d.seq);
    let mut latest: std::collections::HashMap<(String, String, String, String), usize> =
        Default::default();
    for i in 0..out.len() {
        let key = (
            out[i].claim_id.clone(),
            out[i].sentence_hash.clone(),
            out[i].kind.clone(),
            out[i]
                .claim
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        );
        if let Some(&j) = latest.get(&key) {
            out[j].superseded_by = Some(out[i].seq);
        }
        latest.insert(key, i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn decision(claim_id: &str, verdict: Verdict, at: i64) -> Decision {
        Decision {
            seq: 0,
            matter: "smith".into(),
            claim_id: claim_id.into(),
            kind: "date".into(),
            claim: "January 5, 2024".into(),
            sentence: "Paid on January 5, 2024.".into(),
            sentence_hash: "s".into(),
            draft_hash: "d".into(),
            run_id: "r1".into(),
            stage: "draft".into(),
            verdict,
            page: (verdict == Verdict::Confirmed).then(|| DecisionPage {
                file: "lease.txt".into(),
                page: 3,
                bates: Some("SMITH000003".into()),
                hash: "p".into(),
            }),
            note: Some("read it".into()),
            reason: None,
            reviewer: "ann".into(),
            created: at,
            superseded_by: None,
        }
    }

    #[test]
    fn the_ledger_order_decides_not_the_desk_clock_and_only_the_same_claim_supersedes() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        // A desk with a fast clock decides first; a later decision from a slow desk wins.
        s.add_decision(&decision("date-aaaaaaaaaaaa", Verdict::Struck, 100))
            .unwrap();
        let later = s
            .add_decision(&decision("date-aaaaaaaaaaaa", Verdict::Confirmed, 50))
            .unwrap();
        let standing = s.standing_decisions("smith").unwrap();
        assert_eq!(standing.len(), 1);
        assert_eq!(standing[0].seq, later);
        assert_eq!(standing[0].verdict, Verdict::Confirmed);
        // The same id on other words (a hash collision) does not supersede.
        let mut other = decision("date-aaaaaaaaaaaa", Verdict::Waived, 60);
        other.claim = "March 1, 2024".into();
        other.sentence_hash = "t".into();
        s.add_decision(&other).unwrap();
        assert_eq!(s.standing_decisions("smith").unwrap().len(), 2);
    }

    #[test]
    fn a_later_decision_supersedes_and_nothing_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let a = s
            .add_decision(&decision("date-aaaaaa", Verdict::Struck, 10))
            .unwrap();
        let b = s
            .add_decision(&decision("date-aaaaaa", Verdict::Confirmed, 20))
            .unwrap();
        s.add_decision(&decision("date-bbbbbb", Verdict::Waived, 15))
            .unwrap();
        let all = s.decisions("smith").unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].superseded_by, Some(b));
        assert_eq!(all[0].seq, a);
        let standing = s.standing_decisions("smith").unwrap();
        assert_eq!(standing.len(), 2);
        let confirmed = standing
            .iter()
            .find(|d| d.claim_id == "date-aaaaaa")
            .unwrap();
        assert_eq!(confirmed.verdict, Verdict::Confirmed);
        assert_eq!(confirmed.page.as_ref().unwrap().page, 3);
        assert_eq!(confirmed.reviewer, "ann");
        s.add_decision(&decision("date-aaaaaa", Verdict::Withdrawn, 30))
            .unwrap();
        assert_eq!(s.standing_decisions("smith").unwrap().len(), 1);
        assert_eq!(s.decisions("smith").unwrap().len(), 4);
        assert!(s.standing_decisions("other").unwrap().is_empty());
        assert_eq!(s.run_decisions("r1").unwrap().len(), 4);
    }
}
