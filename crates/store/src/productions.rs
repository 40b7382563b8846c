//! Production volumes in the ledger: which document went out in which volume under which
//! Bates numbers, and which were withheld and why. The firm's ledger sees every volume a desk
//! produced, whatever folder it was written to, so a later volume continues the numbering and
//! no two volumes share a number; `lexrun audit --productions` reads it back.

use super::db::{vals, Row};
use super::types::{now, Store, StoreError};

/// One document of a volume, as the ledger keeps it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct VolumeDocument {
    pub document: String,
    /// `produced` or `withheld`.
    pub status: String,
    /// The document's first and last Bates numbers as numbers (produced documents only).
    pub first: Option<u64>,
    pub last: Option<u64>,
    /// The same, as stamped (`ACME000014`).
    pub first_bates: Option<String>,
    pub last_bates: Option<String>,
    pub pages: u64,
    /// The blake3 of the document as collected.
    pub hash: String,
    /// The privilege asserted, for a withheld document.
    pub privilege: Option<String>,
}

/// A volume, as the ledger keeps it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Volume {
    pub volume: String,
    pub prefix: String,
    /// The folder the volume was written to.
    pub folder: String,
    /// The run that produced it.
    pub run_id: String,
    pub created: i64,
    pub documents: Vec<VolumeDocument>,
}

impl Volume {
    /// The volume's first and last Bates numbers, when it produced anything.
    pub fn range(&self) -> Option<(u64, u64)> {
        let first = self.documents.iter().filter_map(|d| d.first).min()?;
        let last = self.documents.iter().filter_map(|d| d.last).max()?;
        Some((first, last))
    }
}

const COLS: &str = "volume, prefix, folder, run_id, created, document, status, first_no, last_no, first_bates, last_bates, pages, hash, privilege";

fn u(v: Option<i64>) -> Option<u64> {
    v.and_then(|n| u64::try_from(n).ok())
}

impl Store {
    /// Records a volume: replaces what the ledger held of a volume of the same name and
    /// prefix (a volume produced again), in one transaction, so that the ledger never holds
    /// half a volume.
    pub fn record_volume(&self, v: &Volume) -> Result<(), StoreError> {
        let mut stmts = vec![(
            "DELETE FROM produced WHERE volume = ?1 AND prefix = ?2".to_string(),
            vals![&v.volume, &v.prefix],
        )];
        let created = now();
        let int = |n: Option<u64>| n.and_then(|n| i64::try_from(n).ok());
        for d in &v.documents {
            stmts.push((
                format!("INSERT INTO produced ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT DO NOTHING"),
                vals![
                    &v.volume,
                    &v.prefix,
                    &v.folder,
                    &v.run_id,
                    created,
                    &d.document,
                    &d.status,
                    int(d.first),
                    int(d.last),
                    d.first_bates.as_deref(),
                    d.last_bates.as_deref(),
                    d.pages as i64,
                    &d.hash,
                    d.privilege.as_deref()
                ],
            ));
        }
        self.db.transaction(stmts).map_err(|e| self.lerr(e))
    }

    /// Every volume the ledger holds, oldest first, each with its documents in Bates order
    /// (withheld ones after).
    pub fn volumes(&self) -> Result<Vec<Volume>, StoreError> {
        let rows = self
            .db
            .query(
                &format!(
                    "SELECT {COLS} FROM produced ORDER BY created, volume, prefix, first_no IS NULL, first_no, document"
                ),
                vec![],
            )
            .map_err(|e| self.lerr(e))?;
        let mut out: Vec<Volume> = Vec::new();
        for r in &rows {
            let (volume, prefix) = (r.text(0), r.text(1));
            let same = out
                .last()
                .is_some_and(|v| v.volume == volume && v.prefix == prefix);
            if !same {
                out.push(Volume {
                    volume,
                    prefix,
                    folder: r.text(2),
                    run_id: r.text(3),
                    created: r.int(4),
                    documents: Vec::new(),
                });
            }
            if let Some(v) = out.last_mut() {
                v.documents.push(document(r));
            }
        }
        Ok(out)
    }
}

fn document(r: &Row) -> VolumeDocument {
    VolumeDocument {
        document: r.text(5),
        status: r.text(6),
        first: u(r.opt_int(7)),
        last: u(r.opt_int(8)),
        first_bates: r.opt_text(9),
        last_bates: r.opt_text(10),
        pages: u(Some(r.int(11))).unwrap_or(0),
        hash: r.text(12),
        privilege: r.opt_text(13),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, first: u64, last: u64) -> VolumeDocument {
        VolumeDocument {
            document: name.into(),
            status: "produced".into(),
            first: Some(first),
            last: Some(last),
            first_bates: Some(format!("ACME{first:06}")),
            last_bates: Some(format!("ACME{last:06}")),
            pages: last - first + 1,
            hash: "h".into(),
            privilege: None,
        }
    }

    #[test]
    fn a_volume_produced_again_replaces_its_rows_and_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        let st = Store::open(dir.path()).unwrap();
        let mut v1 = Volume {
            volume: "VOL001".into(),
            prefix: "ACME".into(),
            folder: "/out".into(),
            run_id: "r1".into(),
            created: 0,
            documents: vec![doc("a.pdf", 1, 3), doc("b.pdf", 4, 4)],
        };
        v1.documents.push(VolumeDocument {
            document: "memo.docx".into(),
            status: "withheld".into(),
            privilege: Some("Attorney-Client Privilege".into()),
            hash: "m".into(),
            ..Default::default()
        });
        st.record_volume(&v1).unwrap();
        let v2 = Volume {
            volume: "VOL002".into(),
            run_id: "r2".into(),
            documents: vec![doc("c.pdf", 5, 9)],
            ..v1.clone()
        };
        st.record_volume(&v2).unwrap();
        // The same volume again, with one document fewer.
        v1.documents.remove(1);
        v1.run_id = "r3".into();
        st.record_volume(&v1).unwrap();
        let all = st.volumes().unwrap();
        let names: Vec<(&str, usize)> = all
            .iter()
            .map(|v| (v.volume.as_str(), v.documents.len()))
            .collect();
        assert!(names.contains(&("VOL001", 2)) && names.contains(&("VOL002", 1)));
        let one = all.iter().find(|v| v.volume == "VOL001").unwrap();
        assert_eq!(one.run_id, "r3");
        assert_eq!(one.range(), Some((1, 3)));
        assert_eq!(one.documents[1].status, "withheld");
        assert_eq!(
            one.documents[1].privilege.as_deref(),
            Some("Attorney-Client Privilege")
        );
    }
}
