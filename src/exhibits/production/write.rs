//! Writing the staged volume: each produced document's pages into `IMAGES/` stamped with
//! their Bates numbers and legend (a native into `NATIVES/`, with a placeholder page), its
//! text into `TEXT/` and its row of the `.dat`; then `DATA/`: the `.dat` and `.opt` load
//! files and the privilege log. What was written is kept for the re-reading.

use std::path::{Path, PathBuf};

use super::collect::legend_of;
use super::imaging::{self, Body, Prepared};
use super::number::Numbers;
use super::prepare::Ready;
use super::redact::{redact_text, redacted_meta};
use super::types::{
    io, Doc, Fate, Held, Images, Produced, ProductionError, Spec, VolumeRecord, Withhold,
};
use super::{loadfile, page, privlog, reread};

/// What was written, for the load files, the register and the re-reading.
pub(super) struct Written {
    /// The `.dat`'s rows, one value a field.
    pub(super) rows: Vec<Vec<String>>,
    pub(super) opt: Vec<loadfile::OptLine>,
    /// Every string redacted, and where.
    pub(super) redacted: Vec<reread::Redacted>,
    pub(super) record: VolumeRecord,
    /// Every page, with the stamps it must show.
    pub(super) stamps: Vec<reread::Page>,
}

/// The volume being written: where it is staged, and its documents and their numbers.
struct Volume<'a> {
    spec: &'a Spec,
    staged: &'a Path,
    /// The volume's first number.
    first: u64,
    /// Where a page is rasterised when it is written as a TIFF.
    scratch: PathBuf,
    docs: &'a [Doc],
    ranges: &'a [Option<(u64, u64)>],
}

/// Makes the volume's folders in `staged`.
pub(super) fn stage(staged: &Path) -> Result<(), ProductionError> {
    for sub in ["IMAGES", "NATIVES", "TEXT", "DATA"] {
        std::fs::create_dir_all(staged.join(sub)).map_err(io(staged))?;
    }
    Ok(())
}

/// Writes every produced document into `staged`, in family order; records what is
/// withheld.
pub(super) fn documents(
    spec: &Spec,
    staged: &Path,
    scratch: PathBuf,
    docs: &[Doc],
    fates: &[Fate],
    numbers: &Numbers,
    ready: &mut Ready,
) -> Result<Written, ProductionError> {
    let vol = Volume {
        spec,
        staged,
        first: numbers.first,
        scratch,
        docs,
        ranges: &numbers.ranges,
    };
    let mut w = Written {
        rows: Vec::new(),
        opt: Vec::new(),
        redacted: Vec::new(),
        record: VolumeRecord {
            volume: spec.volume.clone(),
            prefix: spec.prefix.clone(),
            first: numbers.first,
            last: numbers.last,
            ..VolumeRecord::default()
        },
        stamps: Vec::new(),
    };
    for (i, d) in docs.iter().enumerate() {
        if let Fate::Withheld(k) = fates[i] {
            w.record.withheld.push(d.name.clone());
            w.record.held.push(Held {
                document: d.name.clone(),
                hash: d.hash.clone(),
                privilege: spec
                    .withhold
                    .get(k)
                    .map(|w| w.privilege.clone())
                    .unwrap_or_default(),
            });
        }
        document(&vol, &mut w, i, fates[i], ready)?;
    }
    Ok(w)
}

/// Writes document `i`, if it is produced: its pages or native, its text and its row.
fn document(
    vol: &Volume,
    w: &mut Written,
    i: usize,
    fate: Fate,
    ready: &mut Ready,
) -> Result<(), ProductionError> {
    let d = &vol.docs[i];
    let Some((a, b)) = vol.ranges[i] else {
        return Ok(());
    };
    let (_, legend) = legend_of(d, vol.spec);
    let begin = vol.spec.number(a);
    let (text, native_path) = match fate {
        Fate::Imaged => {
            let pages = ready.pages[i].take().unwrap_or_default();
            (imaged(vol, w, d, (a, b), &legend, pages)?, String::new())
        }
        Fate::Native => {
            let text = ready.native_texts.remove(&i).unwrap_or_default();
            (text, native(vol, w, d, a, &legend)?)
        }
        Fate::Withheld(_) => return Ok(()),
    };
    let text_path = vol.staged.join("TEXT").join(format!("{begin}.txt"));
    crate::atomic::write(&text_path, text.as_bytes()).map_err(io(&text_path))?;
    for (s, why) in redacted_meta(d, &vol.spec.patterns) {
        w.redacted.push(reread::Redacted {
            text: s,
            label: why,
            place: format!("{} metadata", d.name),
            page: None,
        });
    }
    w.rows.push(row(vol, d, (a, b), &legend, &native_path));
    w.record.documents.push(Produced {
        document: d.name.clone(),
        first: begin,
        last: vol.spec.number(b),
        pages: b - a + 1,
        hash: d.hash.clone(),
    });
    Ok(())
}

/// Writes an imaged document's pages, numbered from `a`; returns its text, page by page.
fn imaged(
    vol: &Volume,
    w: &mut Written,
    d: &Doc,
    (a, b): (u64, u64),
    legend: &str,
    pages: Vec<Prepared>,
) -> Result<String, ProductionError> {
    let spec = vol.spec;
    let mut text = String::new();
    for (k, p) in pages.into_iter().enumerate() {
        let bates = spec.number(a + k as u64);
        let stamps = page::Stamps {
            bates: &bates,
            legend,
        };
        let raster = matches!(p.body, Body::Raster { .. });
        let pdf = match p.body {
            Body::Raster { image, labels } => {
                page::raster_pdf(&image, spec.dpi as f64, &labels, &stamps)
            }
            Body::Text(t) => page::text_pdf(&t, &stamps),
            Body::Vector(v) => v.finish(&stamps),
        };
        let image = write_image(vol, a + k as u64, &pdf, &d.name)?;
        for (s, why, from_box) in p.redacted {
            w.redacted.push(reread::Redacted {
                text: s,
                label: why,
                place: format!("{} page {}", d.name, k + 1),
                page: from_box.then(|| bates.clone()),
            });
        }
        w.opt.push(loadfile::OptLine {
            key: bates.clone(),
            volume: spec.volume.clone(),
            path: image.replace('/', "\\"),
            doc_break: k == 0,
            pages: (k == 0).then_some((b - a + 1) as usize),
        });
        w.stamps.push(reread::Page {
            file: image,
            bates,
            legend: legend.to_string(),
            raster,
        });
        if k > 0 {
            text.push('\u{000C}');
        }
        text.push_str(&p.text);
    }
    Ok(text)
}

/// Writes a native document numbered `a` into `NATIVES/`, with its placeholder page;
/// returns its path as the load file gives it.
fn native(
    vol: &Volume,
    w: &mut Written,
    d: &Doc,
    a: u64,
    legend: &str,
) -> Result<String, ProductionError> {
    let begin = vol.spec.number(a);
    let pdf = page::text_pdf(
        &native_page(d, &begin),
        &page::Stamps {
            bates: &begin,
            legend,
        },
    );
    let image = write_image(vol, a, &pdf, &d.name)?;
    let ext = Path::new(&d.file_name)
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let native = vol.staged.join("NATIVES").join(format!("{begin}{ext}"));
    let bytes = match &d.bytes {
        Some(b) => b.clone(),
        None => std::fs::read(&d.path).map_err(io(&d.path))?,
    };
    crate::atomic::write(&native, &bytes).map_err(io(&native))?;
    w.opt.push(loadfile::OptLine {
        key: begin.clone(),
        volume: vol.spec.volume.clone(),
        path: image.replace('/', "\\"),
        doc_break: true,
        pages: Some(1),
    });
    w.stamps.push(reread::Page {
        file: image,
        bates: begin.clone(),
        legend: legend.to_string(),
        raster: false,
    });
    Ok(format!("NATIVES\\{begin}{ext}"))
}

/// A document's row of the `.dat`: each field's value, its metadata redacted.
fn row(vol: &Volume, d: &Doc, (a, b): (u64, u64), legend: &str, native_path: &str) -> Vec<String> {
    let spec = vol.spec;
    let begin = spec.number(a);
    let (fa, fb) = family_numbers(vol, d, (a, b));
    // The custodian is the folder the document was collected into.
    let custodian = d
        .rel
        .split_once('/')
        .map(|(c, _)| title_case(&c.replace(['-', '_'], " ")))
        .unwrap_or_default();
    let redact_meta = |s: &str| redact_text(s, &spec.patterns);
    let value = |f: &str| -> String {
        match f {
            "BEGBATES" => begin.clone(),
            "ENDBATES" => spec.number(b),
            "BEGATTACH" => fa.clone(),
            "ENDATTACH" => fb.clone(),
            "PGCOUNT" => (b - a + 1).to_string(),
            "CUSTODIAN" => custodian.clone(),
            "FILENAME" => redact_meta(&d.file_name),
            "DATESENT" => d.meta.date.clone(),
            "FROM" => redact_meta(&d.meta.from),
            "TO" => redact_meta(&d.meta.to),
            "CC" => redact_meta(&d.meta.cc),
            "SUBJECT" => redact_meta(&d.meta.subject),
            "CONFIDENTIALITY" => legend.to_string(),
            "NATIVEPATH" => native_path.to_string(),
            "TEXTPATH" => format!("TEXT\\{begin}.txt"),
            "HASH" => d.hash.clone(),
            _ => String::new(),
        }
    };
    spec.fields.iter().map(|f| value(f)).collect()
}

/// The family's first and last numbers, for attachments and their parent (none for a
/// document alone in its family).
fn family_numbers(vol: &Volume, d: &Doc, (a, b): (u64, u64)) -> (String, String) {
    let family: Vec<(u64, u64)> = vol
        .docs
        .iter()
        .zip(vol.ranges)
        .filter(|(x, _)| x.family == d.family)
        .filter_map(|(_, r)| *r)
        .collect();
    if family.len() > 1 {
        (
            vol.spec
                .number(family.iter().map(|r| r.0).min().unwrap_or(a)),
            vol.spec
                .number(family.iter().map(|r| r.1).max().unwrap_or(b)),
        )
    } else {
        (String::new(), String::new())
    }
}

/// Writes `DATA/`'s load files and the privilege log for what is withheld; returns how
/// many documents were withheld.
pub(super) fn data(
    spec: &Spec,
    staged: &Path,
    w: &Written,
    docs: &[Doc],
    fates: &[Fate],
) -> Result<usize, ProductionError> {
    let data = staged.join("DATA");
    let dat = data.join(format!("{}.dat", spec.volume));
    crate::atomic::write(&dat, loadfile::dat(&spec.fields, &w.rows).as_bytes())
        .map_err(io(&dat))?;
    let optp = data.join(format!("{}.opt", spec.volume));
    crate::atomic::write(&optp, loadfile::opt(&w.opt).as_bytes()).map_err(io(&optp))?;
    let withheld: Vec<(&Doc, &Withhold)> = docs
        .iter()
        .zip(fates)
        .filter_map(|(d, f)| match f {
            Fate::Withheld(w) => Some((d, &spec.withhold[*w])),
            _ => None,
        })
        .collect();
    privlog::write(&data, &spec.volume, &withheld, &spec.patterns)?;
    Ok(withheld.len())
}

/// Writes page `n` of the volume into `IMAGES/`: its PDF as it is, or that PDF rasterised
/// as a Group IV TIFF. Returns where, relative to the volume.
fn write_image(
    vol: &Volume,
    n: u64,
    pdf: &[u8],
    document: &str,
) -> Result<String, ProductionError> {
    let spec = vol.spec;
    let rel = spec.image_rel(vol.first, n);
    let path = vol.staged.join(&rel);
    let tiff;
    let bytes = match spec.images {
        Images::Pdf => pdf,
        Images::Tiff => {
            tiff = imaging::tiff_page(pdf, &vol.scratch, spec.dpi).map_err(|why| {
                ProductionError::Tiff {
                    page: spec.number(n),
                    document: document.to_string(),
                    why,
                }
            })?;
            &tiff
        }
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    crate::atomic::write(&path, bytes).map_err(io(&path))?;
    Ok(rel)
}

/// The placeholder page of a native, and its text.
fn native_page(d: &Doc, bates: &str) -> page::TextPage {
    let lines = [
        "".to_string(),
        "".to_string(),
        "Document produced natively".to_string(),
        "".to_string(),
        format!("File name: {}", d.file_name),
        format!("Bates number: {bates}"),
    ];
    page::TextPage {
        lines: lines.into_iter().map(|l| (l, Vec::new())).collect(),
    }
}

fn title_case(s: &str) -> String {
    s.split(' ')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}
