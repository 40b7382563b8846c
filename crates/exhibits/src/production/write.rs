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
    io, Doc, Fate, Held, Images, Pattern, Produced, ProductionError, Spec, VolumeRecord,
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
    /// Where each collected document went, by its index: none for one not written.
    pub(super) places: Vec<Option<Place>>,
    /// The `.dat`'s fields: the declared ones, with the status and the exception's reason
    /// when the volume has slip sheets.
    pub(super) fields: Vec<String>,
    /// The exceptions: each one's slip-sheet number, name and reason.
    pub(super) exceptions: Vec<(String, String, String)>,
    /// The withheld documents: each one's index, slip-sheet number and family's range.
    pub(super) held: Vec<(usize, String, String)>,
    /// Every redaction, for the redaction log.
    pub(super) log: Vec<LogEntry>,
}

/// One redaction as the redaction log lists it: never what it covered.
pub(super) struct LogEntry {
    bates: String,
    document: String,
    /// The page of the document (0 for its metadata).
    page: usize,
    reason: String,
    by: &'static str,
}

/// Where a collected document went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    Produced,
    Withheld,
    Exception,
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
    fields: Vec<String>,
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
        fields: dat_fields(spec, fates),
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
        places: vec![None; docs.len()],
        fields: vol.fields.clone(),
        exceptions: Vec::new(),
        held: Vec::new(),
        log: Vec::new(),
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
                bates: vol.ranges[i].map(|r| spec.number(r.0)).unwrap_or_default(),
            });
        }
        document(&vol, &mut w, i, fates[i], ready)?;
    }
    Ok(w)
}

/// The `.dat`'s fields: those declared, and when some documents are slip sheets, the
/// status of each document and the reason of each exception.
fn dat_fields(spec: &Spec, fates: &[Fate]) -> Vec<String> {
    let mut fields = spec.fields.clone();
    let slips = fates
        .iter()
        .any(|f| matches!(f, Fate::Withheld(_) | Fate::Exception));
    if slips {
        for f in ["PRODSTATUS", "EXCEPTION"] {
            if !fields.iter().any(|x| x == f) {
                fields.push(f.to_string());
            }
        }
    }
    fields
}

/// Writes document `i`: its pages or native, or its slip sheet; its text and its row.
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
    let redactions_before = w.redacted.len();
    let mut status = "Produced".to_string();
    let mut exception = String::new();
    let (text, native_path, place) = match fate {
        Fate::Imaged => {
            let pages = ready.pages[i].take().unwrap_or_default();
            let text = imaged(vol, w, d, (a, b), &legend, pages)?;
            (text, String::new(), Place::Produced)
        }
        Fate::Native => {
            let text = ready.native_texts.remove(&i).unwrap_or_default();
            let path = native(vol, w, d, a, &legend)?;
            (text, path, Place::Produced)
        }
        Fate::Withheld(k) => {
            let privilege = vol
                .spec
                .withhold
                .get(k)
                .map(|w| w.privilege.clone())
                .unwrap_or_default();
            status = "Withheld – Privileged".into();
            let page = withheld_page(&begin, &privilege, &vol.spec.patterns);
            let text = slip(vol, w, a, &legend, page)?;
            let family = match family_numbers(vol, d, (a, b)) {
                (fa, fb) if !fa.is_empty() => format!("{fa}–{fb}"),
                _ => String::new(),
            };
            w.held.push((i, begin.clone(), family));
            (text, String::new(), Place::Withheld)
        }
        Fate::Exception => {
            let why = ready.problems[i]
                .clone()
                .unwrap_or_else(|| "it could not be processed".into());
            let why = plain_reason(&why, d);
            exception = redact_text(&why, &vol.spec.patterns);
            status = "Exception – technical issue".into();
            let page = exception_page(d, &begin, &exception, &vol.spec.patterns);
            let text = slip(vol, w, a, &legend, page)?;
            w.exceptions
                .push((begin.clone(), d.shown(), exception.clone()));
            (text, String::new(), Place::Exception)
        }
    };
    w.places[i] = Some(place);
    let text_path = vol.staged.join("TEXT").join(format!("{begin}.txt"));
    crate::atomic::write(&text_path, text.as_bytes()).map_err(io(&text_path))?;
    let withheld = place == Place::Withheld;
    if !withheld {
        for (s, why) in redacted_meta(d, &vol.spec.patterns) {
            w.log.push(LogEntry {
                bates: begin.clone(),
                document: d.shown(),
                page: 0,
                reason: why.clone(),
                by: "metadata",
            });
            w.redacted.push(reread::Redacted {
                text: s,
                label: why,
                place: format!("{} metadata", d.name),
                page: None,
            });
        }
    }
    let cells = Cells {
        legend: &legend,
        native_path: &native_path,
        status: &status,
        exception: &exception,
        withheld,
        redacted: w.redacted.len() > redactions_before,
    };
    w.rows.push(row(vol, d, (a, b), &cells));
    if place == Place::Produced {
        w.record.documents.push(Produced {
            document: d.name.clone(),
            first: begin,
            last: vol.spec.number(b),
            pages: b - a + 1,
            hash: d.hash.clone(),
        });
    }
    Ok(())
}

/// A reason as the slip sheet gives it: the file's name in place of where it was collected.
fn plain_reason(why: &str, d: &Doc) -> String {
    let mut why = why.replace(&d.path.display().to_string(), &d.file_name);
    if let Some(dir) = d.path.parent().filter(|p| !p.as_os_str().is_empty()) {
        why = why.replace(&dir.display().to_string(), "");
    }
    let why = why.replace(&d.rel, &d.file_name);
    // A path of a scratch copy (an attachment read from a temporary file) is no more shown.
    static PATH: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:[A-Za-z]:)?[/\\][^\s`'\x22]*[/\\]([^/\\\s`'\x22]+)")
            .expect("a valid pattern")
    });
    PATH.replace_all(&why, |c: &regex::Captures| {
        let base = &c[1];
        if base == d.file_name || d.file_name.is_empty() {
            base.to_string()
        } else {
            d.file_name.clone()
        }
    })
    .into_owned()
}

/// Writes a slip sheet numbered `a`: one page standing in for a document not produced.
/// Returns its text.
fn slip(
    vol: &Volume,
    w: &mut Written,
    a: u64,
    legend: &str,
    page: page::TextPage,
) -> Result<String, ProductionError> {
    let begin = vol.spec.number(a);
    let text: String = page.lines.iter().map(|(l, _)| format!("{l}\n")).collect();
    let pdf = page::text_pdf(
        &page,
        &page::Stamps {
            bates: &begin,
            legend,
        },
    );
    let image = write_image(vol, a, &pdf, &begin)?;
    w.opt.push(loadfile::OptLine {
        key: begin.clone(),
        volume: vol.spec.volume.clone(),
        path: image.replace('/', "\\"),
        doc_break: true,
        pages: Some(1),
    });
    w.stamps.push(reread::Page {
        file: image,
        bates: begin,
        legend: legend.to_string(),
        raster: false,
    });
    Ok(text)
}

/// Lines of at most `cols` characters, broken between words.
fn wrap_words(s: &str, cols: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        let mut word = word.to_string();
        while word.chars().count() > cols {
            let head: String = word.chars().take(cols).collect();
            word = word.chars().skip(cols).collect();
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            out.push(head);
        }
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > cols {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

fn slip_page(lines: Vec<String>) -> page::TextPage {
    let (cols, rows) = page::text_capacity();
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        if l.is_empty() {
            out.push(l);
        } else {
            out.extend(wrap_words(&l, cols));
        }
    }
    out.truncate(rows);
    page::TextPage {
        lines: out.into_iter().map(|l| (l, Vec::new())).collect(),
    }
}

/// The slip sheet of a withheld document: the privilege, never what the document is.
fn withheld_page(bates: &str, privilege: &str, patterns: &[Pattern]) -> page::TextPage {
    slip_page(vec![
        String::new(),
        String::new(),
        "Withheld – Privileged".into(),
        String::new(),
        format!(
            "This document is withheld from production under a claim of {}.",
            redact_text(privilege, patterns)
        ),
        "It is described in the privilege log under this Bates number.".into(),
        String::new(),
        format!("Bates number: {bates}"),
    ])
}

/// The slip sheet of an exception: the file, and why it could not be processed.
fn exception_page(d: &Doc, bates: &str, why: &str, patterns: &[Pattern]) -> page::TextPage {
    slip_page(vec![
        String::new(),
        String::new(),
        "Document not produced – technical issue".into(),
        String::new(),
        format!("File name: {}", redact_text(&d.shown(), patterns)),
        format!("Reason: {why}"),
        "It is listed in the volume's exceptions report.".into(),
        String::new(),
        format!("Bates number: {bates}"),
    ])
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
            w.log.push(LogEntry {
                bates: bates.clone(),
                document: d.shown(),
                page: k + 1,
                reason: why.clone(),
                by: if from_box { "declared box" } else { "pattern" },
            });
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

/// What a row says besides the document's own metadata.
struct Cells<'a> {
    legend: &'a str,
    native_path: &'a str,
    status: &'a str,
    exception: &'a str,
    /// A withheld document's row says nothing of what the document is.
    withheld: bool,
    /// Something of it was redacted.
    redacted: bool,
}

/// A document's row of the `.dat`: each field's value, its metadata redacted.
fn row(vol: &Volume, d: &Doc, (a, b): (u64, u64), c: &Cells) -> Vec<String> {
    let spec = vol.spec;
    let begin = spec.number(a);
    let (fa, fb) = family_numbers(vol, d, (a, b));
    // The custodian is the folder the document was collected into.
    let custodian = custodian_of(&d.rel);
    let redact_meta = |s: &str| {
        if c.withheld {
            String::new()
        } else {
            redact_text(s, &spec.patterns)
        }
    };
    let value = |f: &str| -> String {
        match f {
            "BEGBATES" => begin.clone(),
            "ENDBATES" => spec.number(b),
            "BEGATTACH" => fa.clone(),
            "ENDATTACH" => fb.clone(),
            "PGCOUNT" => (b - a + 1).to_string(),
            "CUSTODIAN" => custodian.clone(),
            "FILENAME" => redact_meta(&d.file_name),
            "DATESENT" => redact_meta(&d.meta.date),
            "FROM" => redact_meta(&d.meta.from),
            "TO" => redact_meta(&d.meta.to),
            "CC" => redact_meta(&d.meta.cc),
            "SUBJECT" => redact_meta(&d.meta.subject),
            "CONFIDENTIALITY" => c.legend.to_string(),
            "NATIVEPATH" => c.native_path.to_string(),
            "TEXTPATH" => format!("TEXT\\{begin}.txt"),
            "HASH" if !c.withheld => d.hash.clone(),
            "MD5HASH" | "SHA1HASH" | "FILESIZE" if !c.withheld && d.problem.is_none() => {
                native_facts(d).map(|n| n.get(f)).unwrap_or_default()
            }
            "DATECREATED" | "DATEMODIFIED" | "AUTHOR" if !c.withheld => match f {
                "AUTHOR" if !d.meta.from.is_empty() => redact_meta(&d.meta.from),
                _ => native_facts(d)
                    .map(|n| redact_meta(&n.get(f)))
                    .unwrap_or_default(),
            },
            "BCC" => redact_meta(&d.meta.bcc),
            "DATERCVD" => redact_meta(&d.meta.received),
            "TIMESENT" => redact_meta(&d.meta.time_sent),
            "MESSAGEID" => redact_meta(&d.meta.message_id),
            "FILEEXT" => redact_meta(
                &d.file_name
                    .rsplit_once('.')
                    .map(|(_, e)| e.to_ascii_lowercase())
                    .unwrap_or_default(),
            ),
            "ATTACHCOUNT" => {
                let prefix = format!("{} › ", d.name);
                vol.docs
                    .iter()
                    .filter(|x| x.family == d.family)
                    .filter_map(|x| x.name.strip_prefix(&prefix))
                    .filter(|rest| !rest.contains(" › "))
                    .count()
                    .to_string()
            }
            "PRODVOL" => spec.volume.clone(),
            "REDACTED" => if c.redacted { "Y" } else { "N" }.to_string(),
            "ALLCUSTODIANS" if !c.withheld => {
                let mut all: Vec<String> = vol
                    .docs
                    .iter()
                    .filter(|x| !d.hash.is_empty() && x.hash == d.hash)
                    .map(|x| custodian_of(&x.rel))
                    .filter(|x| !x.is_empty())
                    .collect();
                all.sort();
                all.dedup();
                all.join("; ")
            }
            "PRODSTATUS" => c.status.to_string(),
            "EXCEPTION" => c.exception.to_string(),
            _ => String::new(),
        }
    };
    vol.fields.iter().map(|f| value(f)).collect()
}

/// The custodian a document was collected from: the first folder of its path, in words.
fn custodian_of(rel: &str) -> String {
    rel.split_once('/')
        .map(|(c, _)| title_case(&c.replace(['-', '_'], " ")))
        .unwrap_or_default()
}

/// What a native file says of itself: its digests and size, and its author and dates as a
/// PDF's information dictionary or an Office document's core properties give them.
struct NativeFacts {
    md5: String,
    sha1: String,
    size: usize,
    author: String,
    created: String,
    modified: String,
}

impl NativeFacts {
    fn get(&self, field: &str) -> String {
        match field {
            "MD5HASH" => self.md5.clone(),
            "SHA1HASH" => self.sha1.clone(),
            "FILESIZE" => self.size.to_string(),
            "AUTHOR" => self.author.clone(),
            "DATECREATED" => self.created.clone(),
            "DATEMODIFIED" => self.modified.clone(),
            _ => String::new(),
        }
    }
}

fn native_facts(d: &Doc) -> Option<NativeFacts> {
    use sha1::Digest as _;
    let owned;
    let bytes: &[u8] = match &d.bytes {
        Some(b) => b,
        None => {
            owned = std::fs::read(&d.path).ok()?;
            &owned
        }
    };
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let (author, created, modified) = match d.kind {
        crate::sources::Kind::Pdf => pdf_info(bytes),
        crate::sources::Kind::Docx | crate::sources::Kind::Xlsx => office_core(bytes),
        _ => Default::default(),
    };
    let modified = if modified.is_empty() && d.bytes.is_none() {
        std::fs::metadata(&d.path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|t| utc_day(t.as_secs() / 86_400))
            .unwrap_or_default()
    } else {
        modified
    };
    Some(NativeFacts {
        md5: hex(&md5::Md5::digest(bytes)),
        sha1: hex(&sha1::Sha1::digest(bytes)),
        size: bytes.len(),
        author,
        created,
        modified,
    })
}

/// The date (`YYYY-MM-DD`, UTC) of a day counted from 1970-01-01.
fn utc_day(days: u64) -> String {
    let (y, m, d) = crate::calendar::civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A PDF's author, creation and modification dates (`YYYY-MM-DD`) from its information
/// dictionary.
fn pdf_info(bytes: &[u8]) -> (String, String, String) {
    let Ok(doc) = lopdf::Document::load_mem(bytes) else {
        return Default::default();
    };
    let info = doc
        .trailer
        .get(b"Info")
        .ok()
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_dict().ok());
    let Some(info) = info else {
        return Default::default();
    };
    let text = |k: &[u8]| {
        info.get(k)
            .ok()
            .and_then(|o| o.as_str().ok())
            .map(|b| match b {
                [0xFE, 0xFF, rest @ ..] => String::from_utf16_lossy(
                    &rest
                        .chunks_exact(2)
                        .map(|c| u16::from_be_bytes([c[0], c[1]]))
                        .collect::<Vec<_>>(),
                ),
                _ => b.iter().map(|&c| c as char).collect(),
            })
            .unwrap_or_default()
    };
    // `D:20240304091500-05'00'` → `2024-03-04`.
    let date = |k: &[u8]| {
        let t = text(k);
        let t = t.trim_start_matches("D:");
        let digits: String = t.chars().take(8).collect();
        if digits.len() == 8 && digits.chars().all(|c| c.is_ascii_digit()) {
            format!("{}-{}-{}", &digits[..4], &digits[4..6], &digits[6..8])
        } else {
            String::new()
        }
    };
    (
        text(b"Author").trim().to_string(),
        date(b"CreationDate"),
        date(b"ModDate"),
    )
}

/// An Office document's creator, created and modified dates from `docProps/core.xml`.
fn office_core(bytes: &[u8]) -> (String, String, String) {
    use std::io::Read as _;
    let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) else {
        return Default::default();
    };
    let mut xml = String::new();
    match zip.by_name("docProps/core.xml") {
        Ok(mut f) if f.size() < 1 << 20 => {
            let _ = f.read_to_string(&mut xml);
        }
        _ => return Default::default(),
    }
    let tag = |name: &str| {
        let open = format!("<{name}");
        let Some(at) = xml.find(&open) else {
            return String::new();
        };
        let rest = &xml[at..];
        let Some(gt) = rest.find('>') else {
            return String::new();
        };
        let body = &rest[gt + 1..];
        body[..body.find('<').unwrap_or(0)].trim().to_string()
    };
    let day = |s: String| s.chars().take(10).collect::<String>();
    (
        tag("dc:creator"),
        day(tag("dcterms:created")),
        day(tag("dcterms:modified")),
    )
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
    crate::atomic::write(&dat, loadfile::dat(&w.fields, &w.rows).as_bytes()).map_err(io(&dat))?;
    let optp = data.join(format!("{}.opt", spec.volume));
    crate::atomic::write(&optp, loadfile::opt(&w.opt).as_bytes()).map_err(io(&optp))?;
    let withheld: Vec<privlog::Entry> = w
        .held
        .iter()
        .filter_map(|(i, bates, family)| match fates[*i] {
            Fate::Withheld(k) => Some(privlog::Entry {
                doc: &docs[*i],
                withhold: &spec.withhold[k],
                bates: bates.clone(),
                family: family.clone(),
            }),
            _ => None,
        })
        .collect();
    privlog::write(&data, &spec.volume, &withheld, &spec.patterns)?;
    exceptions_report(&data, &spec.volume, &w.exceptions)?;
    redaction_log(&data, spec, &w.log)?;
    Ok(withheld.len())
}

/// `DATA/<VOLUME>-redaction-log.csv`: each redaction by the Bates number of the page it is
/// on, its document (redacted as the load file is) and page, its reason and what made it.
fn redaction_log(data: &Path, spec: &Spec, log: &[LogEntry]) -> Result<(), ProductionError> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let _ = out.write_record(["Bates", "Document", "Page", "Reason", "Redacted by"]);
    for e in log {
        let page = if e.page == 0 {
            "metadata".to_string()
        } else {
            e.page.to_string()
        };
        let _ = out.write_record([
            e.bates.as_str(),
            &redact_text(&e.document, &spec.patterns),
            &page,
            &e.reason,
            e.by,
        ]);
    }
    let bytes = out.into_inner().unwrap_or_default();
    let path = data.join(format!("{}-redaction-log.csv", spec.volume));
    crate::atomic::write(&path, &bytes).map_err(io(&path))
}

/// `DATA/<VOLUME>-exceptions.csv`: each document not produced for a technical issue, by its
/// slip sheet's number, with why.
fn exceptions_report(
    data: &Path,
    volume: &str,
    exceptions: &[(String, String, String)],
) -> Result<(), ProductionError> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let _ = out.write_record(["Bates", "Document", "Reason"]);
    for (b, d, why) in exceptions {
        let _ = out.write_record([b, d, why]);
    }
    let bytes = out.into_inner().unwrap_or_default();
    let path = data.join(format!("{volume}-exceptions.csv"));
    crate::atomic::write(&path, &bytes).map_err(io(&path))
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
