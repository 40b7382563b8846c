//! Productions: the documents a party hands the other side, as one volume folder.
//!
//! `IMAGES/` holds one PDF per page, each stamped bottom-right with its Bates number and
//! bottom-left with its document's confidentiality legend (or, with `images tiff`, one
//! single-page Group IV TIFF per page, that PDF rasterised, in folders of a thousand);
//! `NATIVES/` the documents produced
//! as they are (with a placeholder page carrying their number); `TEXT/` one text file per
//! document, of what was produced; `DATA/` the Concordance `.dat` and Opticon `.opt` load
//! files, the privilege log (CSV and DOCX) for what was withheld, and the reconciliation.
//!
//! Redactions are burned in: a PDF or image page is rasterised and the pixels under each
//! redaction blacked out, and a text page is set without the redacted characters, so no
//! redacted byte is written anywhere; each box carries its reason. The whole volume is built
//! in a staging folder, then read back (`reread`) — every page's stamps, the load files
//! against the images, and every redacted string searched for in every byte, text layer and
//! OCR of every page — and only then moved into place. Any problem found before or while
//! building leaves nothing behind.

mod imaging;
pub mod loadfile;
pub mod page;
mod privlog;
pub mod reread;
pub mod tiff;
mod words;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::GlobMatcher;
use serde::{Deserialize, Serialize};

use crate::sources::{self, Kind};
use imaging::{Body, Hits, Prepared};

/// A pattern to redact, compiled.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// `ssn`, `account`, `dob`, or `pattern` for a declared expression.
    pub name: String,
    pub regex: regex::Regex,
    pub reason: String,
}

impl Pattern {
    pub fn label(&self) -> String {
        label(&self.reason)
    }
}

/// A declared box on one page of one document.
#[derive(Clone, Debug)]
pub struct BoxRule {
    /// The document's pattern (relative to the matter).
    pub file: String,
    pub page: u32,
    /// x, y, width, height in points from the page's top-left corner.
    pub rect: [f64; 4],
    pub reason: String,
}

impl BoxRule {
    pub fn label(&self) -> String {
        label(&self.reason)
    }
}

/// `REDACTED – PII`.
pub fn label(reason: &str) -> String {
    format!("REDACTED – {}", reason.trim().to_uppercase())
}

#[derive(Clone, Debug)]
pub struct Withhold {
    pub files: Vec<String>,
    pub privilege: String,
    pub description: Option<String>,
}

/// What to produce, and how.
#[derive(Clone, Debug)]
pub struct Spec {
    pub volume: String,
    pub prefix: String,
    pub start: u64,
    /// No start was declared: numbering continues after the matter's earlier volumes.
    pub continues: bool,
    pub width: u32,
    pub suffix: String,
    /// (name, words), least protective first.
    pub legends: Vec<(String, String)>,
    /// (legend name, document patterns).
    pub designate: Vec<(String, Vec<String>)>,
    pub patterns: Vec<Pattern>,
    pub boxes: Vec<BoxRule>,
    pub withhold: Vec<Withhold>,
    pub natives: Vec<String>,
    pub fields: Vec<String>,
    pub dpi: u32,
    pub lang: String,
    pub images: Images,
}

/// What each page of `IMAGES/` is written as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Images {
    /// One PDF a page, `IMAGES/<BATES>.pdf`, its stamps live text.
    #[default]
    Pdf,
    /// One single-page Group IV TIFF a page, `IMAGES/0001/<BATES>.tif`, its stamps and
    /// labels burned into the pixels.
    Tiff,
}

/// TIFF images to a folder of `IMAGES/`, as review platforms load them.
pub const IMAGES_PER_FOLDER: u64 = 1000;

impl Spec {
    /// Where page `n` of a volume that starts at `first` is written, relative to the
    /// volume, with `/` between folders.
    pub fn image_rel(&self, first: u64, n: u64) -> String {
        let bates = self.number(n);
        match self.images {
            Images::Pdf => format!("IMAGES/{bates}.pdf"),
            Images::Tiff => format!(
                "IMAGES/{:04}/{bates}.tif",
                n.saturating_sub(first) / IMAGES_PER_FOLDER + 1
            ),
        }
    }

    pub fn number(&self, n: u64) -> String {
        format!(
            "{}{:0w$}{}",
            self.prefix,
            n,
            self.suffix,
            w = self.width as usize
        )
    }
}

/// A collected document, by the file it is in and its place inside.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Produced {
    pub document: String,
    pub first: String,
    pub last: String,
    pub pages: u64,
    pub hash: String,
}

/// One earlier volume, as the register holds it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VolumeRecord {
    pub volume: String,
    pub prefix: String,
    pub first: u64,
    pub last: u64,
    pub documents: Vec<Produced>,
    pub withheld: Vec<String>,
    /// Each withheld document with its hash and the privilege asserted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Held>,
}

/// A withheld document: what it was, and why it was withheld.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Held {
    pub document: String,
    pub hash: String,
    pub privilege: String,
}

/// Why a volume was not produced. Nothing is left of it on disk.
#[derive(Debug, thiserror::Error)]
pub enum ProductionError {
    #[error("cannot read or write `{}`: {}", .0.display(), .1)]
    Io(PathBuf, #[source] std::io::Error),
    #[error("`{document}` cannot be imaged: {why}")]
    Unimageable { document: String, why: String },
    #[error("the redactions would black out the whole of page {page} of `{document}`; narrow the pattern, or withhold the document")]
    WholePage { document: String, page: u32 },
    #[error("the redaction box at {rect:?} on page {page} of `{document}` lies outside the page ({}); give the box in points from the page's top-left corner", describe_size(*size))]
    BoxOutside {
        document: String,
        page: u32,
        rect: [f64; 4],
        size: (f64, f64),
    },
    #[error("`{document}` is to be produced natively but holds text to redact ({what}); drop it from `natives` to produce it imaged and redacted, or withhold it")]
    NativeRedaction { document: String, what: String },
    /// Bates numbers an earlier volume already used (the message says which).
    #[error("{0}")]
    Collision(String),
    #[error("nothing to produce: every collected document is withheld or an exception")]
    Empty,
    #[error("page {page} of `{document}` cannot be made a TIFF image: {why}; nothing was written. pdftoppm (Debian `poppler-utils`, or scripts/install-tools) rasterises each page; or write `images pdf`")]
    Tiff {
        page: String,
        document: String,
        why: String,
    },
    #[error("the volume failed its re-reading and was not written:\n  {}", .0.join("\n  "))]
    Reread(Vec<String>),
}

fn describe_size((w, h): (f64, f64)) -> String {
    if w == 0.0 {
        "the document has fewer pages".into()
    } else {
        format!("{w:.0} × {h:.0} points")
    }
}

/// Metadata for the load file.
#[derive(Clone, Debug, Default)]
struct Meta {
    from: String,
    to: String,
    cc: String,
    date: String,
    subject: String,
}

/// One collected document.
struct Doc {
    /// `rivera/lease-email.eml` or `rivera/lease-email.eml › rent-ledger.xlsx`.
    name: String,
    /// The file it is in, relative to the matter.
    rel: String,
    path: PathBuf,
    /// Its own file name (an attachment's name for an attachment).
    file_name: String,
    kind: Kind,
    texts: Vec<String>,
    bytes: Option<Vec<u8>>,
    family: usize,
    attachment: bool,
    meta: Meta,
    hash: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    Imaged,
    Native,
    Withheld(usize),
}

/// The files the production reads, each with its path relative to the matter.
pub struct Input {
    pub path: PathBuf,
    pub rel: String,
}

/// What a volume came to.
#[derive(Debug)]
pub struct Report {
    pub folder: PathBuf,
    pub record: VolumeRecord,
    pub collected: usize,
    pub produced: usize,
    pub withheld: usize,
    pub exceptions: Vec<String>,
    pub pages: u64,
    pub redactions: usize,
    /// Patterns that matched nothing, listed in the reconciliation.
    pub unmatched: Vec<String>,
}

fn glob(p: &str) -> Option<GlobMatcher> {
    globset::GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

fn matches_any(globs: &[String], rel: &str, name: &str) -> bool {
    globs
        .iter()
        .filter_map(|g| glob(g))
        .any(|g| g.is_match(rel) || g.is_match(name))
}

fn email_meta(bytes: &[u8]) -> Meta {
    let Some(m) = mail_parser::MessageParser::default().parse(bytes) else {
        return Meta::default();
    };
    let addrs = |a: Option<&mail_parser::Address>| {
        a.map(|a| {
            a.iter()
                .map(|x| match (x.name(), x.address()) {
                    (Some(n), Some(e)) => format!("{n} <{e}>"),
                    (None, Some(e)) => e.to_string(),
                    (Some(n), None) => n.to_string(),
                    _ => String::new(),
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
    };
    Meta {
        from: addrs(m.from()),
        to: addrs(m.to()),
        cc: addrs(m.cc()),
        date: m
            .date()
            .map(|d| format!("{:04}-{:02}-{:02}", d.year, d.month, d.day))
            .unwrap_or_default(),
        subject: m.subject().unwrap_or_default().to_string(),
    }
}

/// Reads every input into documents, families kept together in the order of their files.
fn collect(inputs: &[Input], spec: &Spec) -> (Vec<Doc>, Vec<String>) {
    let opts = sources::Options {
        scan: sources::scan::Options {
            lang: spec.lang.clone(),
            dpi: spec.dpi,
            cache: sources::scan::default_cache(),
            ocr_optional: false,
        },
    };
    let mut docs = Vec::new();
    let mut exceptions = Vec::new();
    let mut sorted: Vec<&Input> = inputs.iter().collect();
    sorted.sort_by(|a, b| a.rel.cmp(&b.rel));
    sorted.dedup_by(|a, b| a.rel == b.rel);
    for (family, input) in sorted.into_iter().enumerate() {
        let bytes = match std::fs::read(&input.path) {
            Ok(b) => b,
            Err(e) => {
                exceptions.push(format!("`{}`: cannot be read: {e}", input.rel));
                continue;
            }
        };
        let read = match sources::read(&input.path, &opts) {
            Ok(d) => d,
            Err(e) => {
                exceptions.push(format!("`{}`: {e}", input.rel));
                continue;
            }
        };
        let parent_meta = if read.first().is_some_and(|d| d.kind == Kind::Eml) {
            email_meta(&bytes)
        } else {
            Meta::default()
        };
        let base = input
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for d in read {
            let attachment = !d.within.is_empty();
            let own = d.embedded.clone();
            let hash_of = own.as_deref().unwrap_or(&bytes);
            let meta = if attachment {
                match (&own, d.kind) {
                    (Some(b), Kind::Eml) => email_meta(b),
                    _ => Meta::default(),
                }
            } else {
                parent_meta.clone()
            };
            docs.push(Doc {
                name: d.shown(&input.rel),
                rel: input.rel.clone(),
                path: input.path.clone(),
                file_name: d.within.last().cloned().unwrap_or_else(|| base.clone()),
                kind: d.kind,
                texts: d.texts(),
                hash: blake3::hash(hash_of).to_hex().to_string(),
                bytes: own,
                family,
                attachment,
                meta,
            });
        }
    }
    (docs, exceptions)
}

fn fate(d: &Doc, spec: &Spec, docs: &[Doc]) -> Fate {
    // A family is withheld or produced whole: what its parent's file says decides.
    let parent_rel = docs
        .iter()
        .find(|x| x.family == d.family)
        .map_or(d.rel.as_str(), |x| x.rel.as_str());
    for (i, w) in spec.withhold.iter().enumerate() {
        if matches_any(&w.files, parent_rel, parent_rel) {
            return Fate::Withheld(i);
        }
    }
    if matches_any(&spec.natives, &d.rel, &d.file_name)
        && (d.attachment || !matches!(d.kind, Kind::Eml))
    {
        // A native of an email is its attachment, not the message.
        let own_name_native = spec
            .natives
            .iter()
            .filter_map(|g| glob(g))
            .any(|g| g.is_match(&d.file_name) || (!d.attachment && g.is_match(&d.rel)));
        if own_name_native {
            return Fate::Native;
        }
    }
    Fate::Imaged
}

/// The legend of the most protective designation that covers the document.
fn legend_of(d: &Doc, spec: &Spec) -> (String, String) {
    let mut best: Option<usize> = None;
    for (name, globs) in &spec.designate {
        if matches_any(globs, &d.rel, &d.file_name) {
            if let Some(i) = spec.legends.iter().position(|(n, _)| n == name) {
                best = Some(best.map_or(i, |b| b.max(i)));
            }
        }
    }
    best.map(|i| spec.legends[i].clone()).unwrap_or_default()
}

/// Every page of one document, prepared.
fn prepare(
    d: &Doc,
    spec: &Spec,
    work: &Path,
    hits: &mut Hits,
) -> Result<Vec<Prepared>, ProductionError> {
    let boxes: Vec<&BoxRule> = spec
        .boxes
        .iter()
        .filter(|b| glob(&b.file).is_some_and(|g| g.is_match(&d.rel) || g.is_match(&d.name)))
        .filter(|_| !d.attachment || d.kind == Kind::Pdf)
        .collect();
    match d.kind {
        Kind::Pdf | Kind::Png | Kind::Jpeg | Kind::Tiff => {
            let image = d.kind != Kind::Pdf;
            let file = match &d.bytes {
                Some(b) => {
                    std::fs::create_dir_all(work)
                        .map_err(|e| ProductionError::Io(work.into(), e))?;
                    let p = work.join(format!("embedded.{}", d.kind.extension()));
                    std::fs::write(&p, b).map_err(|e| ProductionError::Io(p.clone(), e))?;
                    p
                }
                None => d.path.clone(),
            };
            imaging::raster_pages(
                &d.name, &file, image, work, spec.dpi, &spec.lang, hits, &boxes,
            )
        }
        Kind::Heic => Err(ProductionError::Unimageable {
            document: d.name.clone(),
            why: "a HEIC photo: convert it to JPEG or PDF".into(),
        }),
        _ => imaging::text_pages(&d.name, &d.texts, hits, &boxes),
    }
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

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> ProductionError + '_ {
    move |e| ProductionError::Io(p.to_path_buf(), e)
}

/// Produces a volume into `out/VOLUME`, continuing or checked against the `earlier` volumes.
pub fn produce(
    spec: &Spec,
    inputs: &[Input],
    out: &Path,
    earlier: &[VolumeRecord],
) -> Result<Report, ProductionError> {
    let (docs, mut exceptions) = collect(inputs, spec);
    let collected = docs.len() + exceptions.len();
    // Numbering: after the earlier volumes with this prefix, unless a start is declared.
    let others: Vec<&VolumeRecord> = earlier
        .iter()
        .filter(|v| v.volume != spec.volume && v.prefix == spec.prefix)
        .collect();
    let start = if spec.continues {
        others
            .iter()
            .map(|v| v.last + 1)
            .max()
            .unwrap_or(spec.start)
            .max(spec.start)
    } else {
        spec.start
    };
    let fates: Vec<Fate> = docs.iter().map(|d| fate(d, spec, &docs)).collect();
    let work = tempfile::Builder::new()
        .prefix(".production-")
        .tempdir_in(out_parent(out)?)
        .map_err(io(out))?;
    // Every page prepared before a number is given, so that a document that cannot be
    // imaged is an exception, not a gap.
    let mut counts = vec![0usize; spec.patterns.len()];
    let mut prepared: Vec<Option<Vec<Prepared>>> = Vec::new();
    let mut native_texts: BTreeMap<usize, String> = BTreeMap::new();
    let mut skip = vec![false; docs.len()];
    for (i, d) in docs.iter().enumerate() {
        let mut hits = Hits {
            patterns: &spec.patterns,
            counts: &mut counts,
        };
        match fates[i] {
            Fate::Withheld(_) => prepared.push(None),
            Fate::Native => {
                let text = d.texts.join("\n\u{000C}");
                let found: Vec<&Pattern> = spec
                    .patterns
                    .iter()
                    .filter(|p| p.regex.is_match(&text))
                    .collect();
                if let Some(p) = found.first() {
                    return Err(ProductionError::NativeRedaction {
                        document: d.name.clone(),
                        what: format!("{} as {}", p.name, p.label()),
                    });
                }
                native_texts.insert(i, text);
                prepared.push(None);
            }
            Fate::Imaged => {
                let dir = work.path().join(format!("doc-{i}"));
                match prepare(d, spec, &dir, &mut hits) {
                    Ok(p) => prepared.push(Some(p)),
                    Err(e @ ProductionError::Unimageable { .. }) => {
                        exceptions.push(e.to_string());
                        skip[i] = true;
                        prepared.push(None);
                    }
                    Err(e) => return Err(e),
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
    // A family with a member that could not be imaged is held back whole: never a family
    // with a hole in it.
    let bad_families: Vec<usize> = docs
        .iter()
        .zip(&skip)
        .filter(|(_, s)| **s)
        .map(|(d, _)| d.family)
        .collect();
    for (i, d) in docs.iter().enumerate() {
        if bad_families.contains(&d.family) && !skip[i] && !matches!(fates[i], Fate::Withheld(_)) {
            exceptions.push(format!(
                "`{}`: held back with its family, which has a document that cannot be imaged",
                d.name
            ));
            skip[i] = true;
        }
    }
    // Numbers, in family order.
    let mut n = start;
    let mut ranges: Vec<Option<(u64, u64)>> = Vec::new();
    for (i, _) in docs.iter().enumerate() {
        if skip[i] {
            ranges.push(None);
            continue;
        }
        let pages = match (&fates[i], &prepared[i]) {
            (Fate::Imaged, Some(p)) => p.len() as u64,
            (Fate::Native, _) => 1,
            _ => {
                ranges.push(None);
                continue;
            }
        };
        ranges.push(Some((n, n + pages - 1)));
        n += pages;
    }
    if n == start {
        return Err(ProductionError::Empty);
    }
    let (first, last) = (start, n - 1);
    for v in &others {
        if first <= v.last && v.first <= last {
            return Err(ProductionError::Collision(format!(
                "Bates numbers {}–{} of volume {} are already used by volume {} ({}–{}); start after {}, or leave out `start` to continue the numbering",
                spec.number(first),
                spec.number(last),
                spec.volume,
                v.volume,
                spec.number(v.first),
                spec.number(v.last),
                spec.number(v.last),
            )));
        }
    }
    // Build the volume in a staging folder beside its destination.
    let staged = work.path().join(&spec.volume);
    for sub in ["IMAGES", "NATIVES", "TEXT", "DATA"] {
        std::fs::create_dir_all(staged.join(sub)).map_err(io(&staged))?;
    }
    let mut rows = Vec::new();
    let mut opt = Vec::new();
    let mut redacted: Vec<reread::Redacted> = Vec::new();
    let mut record = VolumeRecord {
        volume: spec.volume.clone(),
        prefix: spec.prefix.clone(),
        first,
        last,
        ..VolumeRecord::default()
    };
    let mut expected_stamps: Vec<reread::Page> = Vec::new();
    let scratch = work.path().join("raster");
    for (i, d) in docs.iter().enumerate() {
        if let Fate::Withheld(w) = fates[i] {
            record.withheld.push(d.name.clone());
            record.held.push(Held {
                document: d.name.clone(),
                hash: d.hash.clone(),
                privilege: spec
                    .withhold
                    .get(w)
                    .map(|w| w.privilege.clone())
                    .unwrap_or_default(),
            });
        }
        let Some((a, b)) = ranges[i] else { continue };
        let (_, legend) = legend_of(d, spec);
        let begin = spec.number(a);
        let mut text = String::new();
        let mut native_path = String::new();
        match fates[i] {
            Fate::Imaged => {
                let pages = prepared[i].take().unwrap_or_default();
                for (k, p) in pages.into_iter().enumerate() {
                    let bates = spec.number(a + k as u64);
                    let stamps = page::Stamps {
                        bates: &bates,
                        legend: &legend,
                    };
                    let pdf = match &p.body {
                        Body::Raster { image, labels } => {
                            page::raster_pdf(image, spec.dpi as f64, labels, &stamps)
                        }
                        Body::Text(t) => page::text_pdf(t, &stamps),
                    };
                    let n = a + k as u64;
                    let image = write_image(&staged, spec, (first, n), &pdf, &d.name, &scratch)?;
                    let raster = matches!(p.body, Body::Raster { .. });
                    for (s, why, from_box) in p.redacted {
                        redacted.push(reread::Redacted {
                            text: s,
                            label: why,
                            place: format!("{} page {}", d.name, k + 1),
                            page: from_box.then(|| bates.clone()),
                        });
                    }
                    opt.push(loadfile::OptLine {
                        key: bates.clone(),
                        volume: spec.volume.clone(),
                        path: image.replace('/', "\\"),
                        doc_break: k == 0,
                        pages: (k == 0).then_some((b - a + 1) as usize),
                    });
                    expected_stamps.push(reread::Page {
                        file: image,
                        bates,
                        legend: legend.clone(),
                        raster,
                    });
                    if k > 0 {
                        text.push('\u{000C}');
                    }
                    text.push_str(&p.text);
                }
            }
            Fate::Native => {
                let pdf = page::text_pdf(
                    &native_page(d, &begin),
                    &page::Stamps {
                        bates: &begin,
                        legend: &legend,
                    },
                );
                let image = write_image(&staged, spec, (first, a), &pdf, &d.name, &scratch)?;
                let ext = Path::new(&d.file_name)
                    .extension()
                    .map(|e| format!(".{}", e.to_string_lossy()))
                    .unwrap_or_default();
                let native = staged.join("NATIVES").join(format!("{begin}{ext}"));
                let bytes = match &d.bytes {
                    Some(b) => b.clone(),
                    None => std::fs::read(&d.path).map_err(io(&d.path))?,
                };
                crate::atomic::write(&native, &bytes).map_err(io(&native))?;
                native_path = format!("NATIVES\\{begin}{ext}");
                opt.push(loadfile::OptLine {
                    key: begin.clone(),
                    volume: spec.volume.clone(),
                    path: image.replace('/', "\\"),
                    doc_break: true,
                    pages: Some(1),
                });
                expected_stamps.push(reread::Page {
                    file: image,
                    bates: begin.clone(),
                    legend: legend.clone(),
                    raster: false,
                });
                text = native_texts.remove(&i).unwrap_or_default();
            }
            Fate::Withheld(_) => continue,
        }
        let text_path = staged.join("TEXT").join(format!("{begin}.txt"));
        crate::atomic::write(&text_path, text.as_bytes()).map_err(io(&text_path))?;
        // The family's first and last numbers, for attachments and their parent.
        let family: Vec<(u64, u64)> = docs
            .iter()
            .zip(&ranges)
            .filter(|(x, _)| x.family == d.family)
            .filter_map(|(_, r)| *r)
            .collect();
        let (fa, fb) = if family.len() > 1 {
            (
                spec.number(family.iter().map(|r| r.0).min().unwrap_or(a)),
                spec.number(family.iter().map(|r| r.1).max().unwrap_or(b)),
            )
        } else {
            (String::new(), String::new())
        };
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
                "CONFIDENTIALITY" => legend.clone(),
                "NATIVEPATH" => native_path.clone(),
                "TEXTPATH" => format!("TEXT\\{begin}.txt"),
                "HASH" => d.hash.clone(),
                _ => String::new(),
            }
        };
        for (s, why) in redacted_meta(d, &spec.patterns) {
            redacted.push(reread::Redacted {
                text: s,
                label: why,
                place: format!("{} metadata", d.name),
                page: None,
            });
        }
        rows.push(spec.fields.iter().map(|f| value(f)).collect::<Vec<_>>());
        record.documents.push(Produced {
            document: d.name.clone(),
            first: begin.clone(),
            last: spec.number(b),
            pages: b - a + 1,
            hash: d.hash.clone(),
        });
    }
    let data = staged.join("DATA");
    let dat = data.join(format!("{}.dat", spec.volume));
    crate::atomic::write(&dat, loadfile::dat(&spec.fields, &rows).as_bytes()).map_err(io(&dat))?;
    let optp = data.join(format!("{}.opt", spec.volume));
    crate::atomic::write(&optp, loadfile::opt(&opt).as_bytes()).map_err(io(&optp))?;
    // The privilege log, for what is withheld.
    let withheld: Vec<(&Doc, &Withhold)> = docs
        .iter()
        .zip(&fates)
        .filter_map(|(d, f)| match f {
            Fate::Withheld(w) => Some((d, &spec.withhold[*w])),
            _ => None,
        })
        .collect();
    privlog::write(&data, &spec.volume, &withheld, &spec.patterns)?;
    let unmatched: Vec<String> = spec
        .patterns
        .iter()
        .zip(&counts)
        .filter(|(_, c)| **c == 0)
        .map(|(p, _)| p.name.clone())
        .collect();
    let produced = record.documents.len();
    let report = Report {
        folder: out.join(&spec.volume),
        collected,
        produced,
        withheld: withheld.len(),
        pages: last - first + 1,
        redactions: redacted.len(),
        unmatched: unmatched.clone(),
        exceptions: exceptions.clone(),
        record: record.clone(),
    };
    let recon = reconciliation(spec, &report);
    let rp = data.join("reconciliation.md");
    crate::atomic::write(&rp, recon.as_bytes()).map_err(io(&rp))?;
    // Read everything back before the volume is put in place.
    let problems = reread::check(&staged, spec, &expected_stamps, &redacted, (first, last));
    if !problems.is_empty() {
        return Err(ProductionError::Reread(problems));
    }
    let dest = out.join(&spec.volume);
    crate::atomic::replace_dir(&staged, &dest).map_err(io(&dest))?;
    Ok(report)
}

/// Writes page `n` of the volume that starts at `first` into `IMAGES/`: its PDF as it is,
/// or that PDF rasterised as a Group IV TIFF. Returns where, relative to the volume.
fn write_image(
    staged: &Path,
    spec: &Spec,
    (first, n): (u64, u64),
    pdf: &[u8],
    document: &str,
    scratch: &Path,
) -> Result<String, ProductionError> {
    let rel = spec.image_rel(first, n);
    let path = staged.join(&rel);
    let tiff;
    let bytes = match spec.images {
        Images::Pdf => pdf,
        Images::Tiff => {
            tiff = imaging::tiff_page(pdf, scratch, spec.dpi).map_err(|why| {
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

fn out_parent(out: &Path) -> Result<&Path, ProductionError> {
    std::fs::create_dir_all(out).map_err(io(out))?;
    Ok(out)
}

/// What a pattern redacts in `text`: each match, or its first group where it has one.
pub(crate) fn spans(regex: &regex::Regex, text: &str) -> Vec<(usize, usize)> {
    regex
        .captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(0)))
        .filter(|m| m.start() < m.end())
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// A value with every redacted stretch replaced by its label.
fn redact_text(s: &str, patterns: &[Pattern]) -> String {
    let mut v = s.to_string();
    for p in patterns {
        let mut out = String::new();
        let mut at = 0;
        for (a, b) in spans(&p.regex, &v) {
            out.push_str(&v[at..a]);
            out.push_str(&format!("[{}]", p.label()));
            at = b;
        }
        out.push_str(&v[at..]);
        v = out;
    }
    v
}

fn redacted_meta(d: &Doc, patterns: &[Pattern]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in [
        &d.file_name,
        &d.meta.from,
        &d.meta.to,
        &d.meta.cc,
        &d.meta.subject,
    ] {
        for p in patterns {
            for (a, b) in spans(&p.regex, s) {
                out.push((s[a..b].to_string(), p.label()));
            }
        }
    }
    out
}

fn reconciliation(spec: &Spec, r: &Report) -> String {
    let mut s = format!("# Reconciliation of volume {}\n\n", spec.volume);
    s.push_str(&format!(
        "- collected: {}\n- produced: {} ({} pages, {}–{})\n- withheld: {}\n- exceptions: {}\n- redactions burned in: {}\n\n",
        r.collected,
        r.produced,
        r.pages,
        spec.number(r.record.first),
        spec.number(r.record.last),
        r.withheld,
        r.exceptions.len(),
        r.redactions
    ));
    let ok = r.produced + r.withheld + r.exceptions.len() == r.collected;
    s.push_str(&format!(
        "produced {} + withheld {} + exceptions {} = collected {}: {}\n",
        r.produced,
        r.withheld,
        r.exceptions.len(),
        r.collected,
        if ok { "balanced" } else { "NOT balanced" }
    ));
    if !r.exceptions.is_empty() {
        s.push_str("\n## Exceptions\n\n");
        for e in &r.exceptions {
            s.push_str(&format!("- {e}\n"));
        }
    }
    if !r.unmatched.is_empty() {
        s.push_str("\n## Redaction patterns that matched nothing\n\n");
        for u in &r.unmatched {
            s.push_str(&format!("- {u}\n"));
        }
    }
    s.push_str("\n## Documents\n\n");
    for d in &r.record.documents {
        s.push_str(&format!(
            "- {}–{} ({} pages): {}\n",
            d.first, d.last, d.pages, d.document
        ));
    }
    for w in &r.record.withheld {
        s.push_str(&format!("- withheld: {w}\n"));
    }
    s
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
