//! Claim taint in the ledger: every claim a model wrote (its kind and canonical form, with
//! run, stage and time) and how verification judged it; and when each evidence file was first
//! seen in each matter. Together they answer "did this file appear after lexrun generated
//! the claim it supports?" — the ledger only records; `verify::taint` decides.

use serde::{Deserialize, Serialize};

use super::db::vals;
use super::types::{Store, StoreError};

pub use lexrun_base::now_ms;

/// A claim a model wrote, as the ledger keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimRecord {
    pub matter: String,
    pub kind: String,
    /// What two spellings of the same claim share (the verifier's canonical identity).
    pub ident: String,
    /// The verifier's canonical key, serialised, so it can be looked for again.
    pub key: String,
    /// The claim as the model wrote it.
    pub text: String,
    pub run_id: String,
    pub stage: String,
    /// When lexrun first saw it (milliseconds since the epoch).
    pub created: i64,
    /// `unchecked` until verification judges it: `supported`, `unsupported`, `miscited`,
    /// `unrecognized`.
    pub status: String,
}

impl ClaimRecord {
    /// Whether verification found it wanting.
    pub fn flagged(&self) -> bool {
        matches!(
            self.status.as_str(),
            "unsupported" | "miscited" | "unrecognized"
        )
    }
}

/// When a file (by its text) was first seen in a matter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    pub matter: String,
    pub text_hash: String,
    pub path: String,
    pub first_seen: i64,
}

impl Store {
    /// Records the claims of one stage's text; a claim already recorded for that run and
    /// stage keeps its first record.
    pub fn add_claims(&self, claims: &[ClaimRecord]) -> Result<(), StoreError> {
        if claims.is_empty() {
            return Ok(());
        }
        let stmts = claims
            .iter()
            .map(|c| {
                (
                    "INSERT INTO claims (matter, kind, ident, key, text, run_id, stage, created, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING".to_string(),
                    vals![&c.matter, &c.kind, &c.ident, &c.key, &c.text, &c.run_id, &c.stage, c.created, &c.status],
                )
            })
            .collect();
        self.db.transaction(stmts).map_err(|e| self.lerr(e))
    }

    /// Records verification's verdict on claims of a run's stage: (identity, status).
    pub fn mark_claims(
        &self,
        matter: &str,
        run_id: &str,
        stage: &str,
        verdicts: &[(String, String)],
    ) -> Result<(), StoreError> {
        if verdicts.is_empty() {
            return Ok(());
        }
        let stmts = verdicts
            .iter()
            .map(|(ident, status)| {
                (
                    "UPDATE claims SET status = ?5 WHERE matter = ?1 AND run_id = ?2 AND stage = ?3 AND ident = ?4".to_string(),
                    vals![matter, run_id, stage, ident, status],
                )
            })
            .collect();
        self.db.transaction(stmts).map_err(|e| self.lerr(e))
    }

    /// The claims models wrote in `matter` (every matter when `None`), one per matter and
    /// identity: the first record of it, flagged if verification ever flagged it, else
    /// `supported` if verification ever found it in the evidence.
    pub fn model_claims(&self, matter: Option<&str>) -> Result<Vec<ClaimRecord>, StoreError> {
        let cols = "matter, kind, ident, key, text, run_id, stage, created, status";
        let rows = match matter {
            Some(m) => self.db.query(
                &format!("SELECT {cols} FROM claims WHERE matter = ?1 ORDER BY created"),
                vals![m],
            ),
            None => self.db.query(
                &format!("SELECT {cols} FROM claims ORDER BY created"),
                vec![],
            ),
        }
        .map_err(|e| self.lerr(e))?;
        let mut out: Vec<ClaimRecord> = Vec::new();
        let mut at: std::collections::HashMap<(String, String), usize> = Default::default();
        for r in rows {
            let c = ClaimRecord {
                matter: r.text(0),
                kind: r.text(1),
                ident: r.text(2),
                key: r.text(3),
                text: r.text(4),
                run_id: r.text(5),
                stage: r.text(6),
                created: r.int(7),
                status: r.text(8),
            };
            match at.get(&(c.matter.clone(), c.ident.clone())) {
                Some(&i) => {
                    if (c.flagged() && !out[i].flagged())
                        || (c.status == "supported" && out[i].status == "unchecked")
                    {
                        out[i].status = c.status;
                    }
                }
                None => {
                    at.insert((c.matter.clone(), c.ident.clone()), out.len());
                    out.push(c);
                }
            }
        }
        Ok(out)
    }

    /// Notes that a file with this text is in the matter now; when it was first seen there.
    pub fn see(
        &self,
        matter: &str,
        text_hash: &str,
        raw_hash: &str,
        path: &str,
    ) -> Result<i64, StoreError> {
        // One statement (one round trip to a shared ledger): the row as it was, or as made.
        let r = self
            .db
            .one(
                "INSERT INTO seen (matter, text_hash, raw_hash, path, first_seen) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (matter, text_hash) DO UPDATE SET first_seen = seen.first_seen RETURNING first_seen",
                vals![matter, text_hash, raw_hash, path, now_ms()],
            )
            .map_err(|e| self.lerr(e))?;
        Ok(r.and_then(|r| r.opt_int(0)).unwrap_or_else(now_ms))
    }

    /// When a file with this text was first seen in `matter` (in any matter when `None`).
    pub fn first_seen(&self, matter: Option<&str>, text_hash: &str) -> Option<i64> {
        let r = match matter {
            Some(m) => self.db.one(
                "SELECT first_seen FROM seen WHERE matter = ?1 AND text_hash = ?2",
                vals![m, text_hash],
            ),
            None => self.db.one(
                "SELECT MIN(first_seen) FROM seen WHERE text_hash = ?1",
                vals![text_hash],
            ),
        };
        r.ok().flatten().and_then(|r| r.opt_int(0))
    }

    /// The matters a file with this text was seen in.
    pub fn matters_seen(&self, text_hash: &str) -> Vec<String> {
        self.db
            .query(
                "SELECT DISTINCT matter FROM seen WHERE text_hash = ?1",
                vals![text_hash],
            )
            .map(|rows| rows.iter().map(|r| r.text(0)).collect())
            .unwrap_or_default()
    }

    /// The reason a person gave for admitting a file with this text, if one did.
    pub fn admitted_text(&self, text_hash: &str) -> Option<String> {
        self.db
            .one(
                "SELECT reason FROM admissions WHERE text_hash = ?1 LIMIT 1",
                vals![text_hash],
            )
            .ok()
            .flatten()
            .map(|r| r.text(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(ident: &str, run: &str, at: i64, status: &str) -> ClaimRecord {
        ClaimRecord {
            matter: "smith".into(),
            kind: "citation".into(),
            ident: ident.into(),
            key: "{}".into(),
            text: ident.into(),
            run_id: run.into(),
            stage: "draft".into(),
            created: at,
            status: status.into(),
        }
    }

    #[test]
    fn a_claim_is_known_from_its_first_record_and_flagged_if_ever_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.add_claims(&[claim("999 F.3d 1", "r1", 10, "unchecked")])
            .unwrap();
        s.add_claims(&[claim("999 F.3d 1", "r2", 20, "supported")])
            .unwrap();
        s.mark_claims(
            "smith",
            "r1",
            "draft",
            &[("999 F.3d 1".into(), "unsupported".into())],
        )
        .unwrap();
        let all = s.model_claims(Some("smith")).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!((all[0].run_id.as_str(), all[0].created), ("r1", 10));
        assert!(all[0].flagged());
        assert!(s.model_claims(Some("other")).unwrap().is_empty());
        let t = s.see("smith", "t1", "r", "a.txt").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3));
        assert_eq!(s.see("smith", "t1", "r", "a.txt").unwrap(), t);
        assert_eq!(s.first_seen(None, "t1"), Some(t));
        assert_eq!(s.first_seen(Some("other"), "t1"), None);
    }
}
