//! Bates stamping: a number in real, extractable text on every page, running continuously
//! across the input files in order. Inputs are never modified; each output is a new file,
//! and nothing is written unless every input could be stamped.
//!
//! Each page's existing content is wrapped in `q … Q`, so whatever graphics state it leaves
//! behind cannot move or scale the stamp, and the stamp is placed in the visible box (the crop
//! box when there is one) in the page's displayed orientation, whatever its `/Rotate`.
//!
//! A page tree that lists one page object twice gets a copy of the page for the second place,
//! so each page carries one number of its own. Stamps are drawn in Helvetica's WinAnsi
//! encoding; a number the font cannot show is refused. The stamped set and its map are
//! written into a new folder and switched with the old one in one step
//! ([`crate::atomic::replace_dir`]): an interrupted or failed re-stamp leaves the old set,
//! map and all, as it was.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};
use serde::Serialize;

use super::metrics;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    BottomRight,
    BottomCenter,
    BottomLeft,
    TopRight,
    TopCenter,
    TopLeft,
}

impl Position {
    pub fn parse(s: &str) -> Option<Position> {
        Some(match s {
            "bottom-right" => Position::BottomRight,
            "bottom-center" => Position::BottomCenter,
            "bottom-left" => Position::BottomLeft,
            "top-right" => Position::TopRight,
            "top-center" => Position::TopCenter,
            "top-left" => Position::TopLeft,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub prefix: String,
    pub start: u64,
    pub width: u32,
    pub suffix: String,
    pub position: Position,
    pub font_size: f64,
}

impl Options {
    pub fn number(&self, n: u64) -> String {
        bates_number(&self.prefix, n, &self.suffix, self.width)
    }
}

/// Bates number `n`: the prefix, `n` zero-padded to `width` digits, the suffix.
pub(crate) fn bates_number(prefix: &str, n: u64, suffix: &str, width: u32) -> String {
    format!("{prefix}{n:0w$}{suffix}", w = width as usize)
}

/// One stamped page, for the page map.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Stamp {
    pub file: String,
    pub output: String,
    pub page: u32,
    pub bates: String,
    /// What was repaired in the input before it could be stamped (a damaged cross-reference
    /// table, a page tree with loops), when anything was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repaired: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum BatesError {
    #[error(
        "`{0}` is encrypted with a password needed to open it; decrypt a copy with it first (e.g. `qpdf --password=PASSWORD --decrypt IN OUT`) and stamp that"
    )]
    Encrypted(String),
    #[error("`{0}` is not a readable PDF: {1}")]
    Damaged(String, String),
    #[error("`{0}` has no pages")]
    NoPages(String),
    #[error("two inputs are named `{0}`; outputs keep their input's name, so rename one")]
    DuplicateName(String),
    #[error("the output `{0}` would overwrite its input; choose another output folder")]
    WouldOverwrite(String),
    #[error("Bates numbers would pass {0} digits; raise --width or lower --start")]
    Overflow(u32),
    #[error("cannot write `{0}`: {1}")]
    Write(String, String),
    #[error("{0}")]
    Sources(#[from] crate::sources::Unreadables),
    #[error("the Bates number `{0}` holds `{1}`, which the stamp's font (Helvetica, WinAnsi) cannot show; use Latin letters, digits and punctuation")]
    Unencodable(String, char),
    #[error("`{0}` is both an input and the output; write the output somewhere else")]
    InputIsOutput(String),
}

/// The width of `s` in Helvetica at `size` points, to right-align and centre the stamp
/// exactly.
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    s.chars()
        .map(|c| metrics::width(metrics::Standard::Helvetica, c).unwrap_or(556.0))
        .sum::<f64>()
        * size
        / 1000.0
}

/// Stamps `inputs` in order and writes each to `out_dir` under its own name. Returns the page
/// map, also written as `bates-map.json` in `out_dir`.
pub fn stamp_files(
    inputs: &[PathBuf],
    out_dir: &Path,
    opts: &Options,
) -> Result<Vec<Stamp>, BatesError> {
    let first = opts.number(opts.start);
    if let Err(c) = super::winansi::encode(&first) {
        return Err(BatesError::Unencodable(first, c));
    }
    // Sources of other kinds are stamped as PDFs of them (`lease.docx` → `lease.pdf`).
    let prepared = crate::sources::as_pdf::prepare(inputs).map_err(crate::sources::Unreadables)?;
    let mut names = BTreeSet::new();
    let mut plans = Vec::new();
    for (input, pdf) in inputs.iter().zip(&prepared.pdfs) {
        let name = pdf
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !names.insert(name.clone()) {
            return Err(BatesError::DuplicateName(name));
        }
        let output = out_dir.join(&name);
        let same = std::fs::canonicalize(input)
            .ok()
            .zip(std::fs::canonicalize(&output).ok())
            .is_some_and(|(a, b)| a == b);
        if same {
            return Err(BatesError::WouldOverwrite(output.display().to_string()));
        }
        plans.push((input.clone(), pdf.clone(), output));
    }
    // Stamp everything in memory first: a bad input leaves no partial output behind.
    let mut next = opts.start;
    let mut stamped = Vec::new();
    let mut map = Vec::new();
    for (input, pdf, output) in &plans {
        let shown = input.display().to_string();
        let (mut doc, repaired, _fixed) = open(pdf, &shown)?;
        unshare_pages(&mut doc);
        let pages: Vec<ObjectId> = doc.get_pages().into_values().collect();
        if pages.is_empty() {
            return Err(BatesError::NoPages(shown));
        }
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding",
        });
        for (i, page) in pages.iter().enumerate() {
            let number = opts.number(next);
            if number.len() > opts.prefix.len() + opts.suffix.len() + opts.width as usize {
                return Err(BatesError::Overflow(opts.width));
            }
            stamp_page(&mut doc, *page, font, &number, opts)
                .map_err(|e| BatesError::Damaged(shown.clone(), e))?;
            map.push(Stamp {
                file: shown.clone(),
                output: output.display().to_string(),
                page: i as u32 + 1,
                bates: number,
                repaired: repaired.clone(),
            });
            next += 1;
        }
        stamped.push((doc, output.clone()));
    }
    // The whole set, map included, goes into a new folder beside the old, then the two
    // are switched.
    let werr = |e: std::io::Error| BatesError::Write(out_dir.display().to_string(), e.to_string());
    let parent = match out_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(werr)?;
    let dir_name = out_dir.file_name().unwrap_or_default().to_string_lossy();
    let staged = tempfile::Builder::new()
        .prefix(&format!(".{dir_name}.stamping-"))
        .tempdir_in(parent)
        .map_err(werr)?;
    for (doc, output) in &mut stamped {
        let into = staged.path().join(output.file_name().unwrap_or_default());
        write_atomically(&into, |f| doc.save_to(f).map_err(|e| e.to_string()))?;
    }
    let json = serde_json::to_vec_pretty(&map).unwrap_or_default();
    write_atomically(&staged.path().join("bates-map.json"), |f| {
        std::io::Write::write_all(f, &json).map_err(|e| e.to_string())
    })?;
    // Files in the folder that are not part of the old set stay in it.
    if out_dir.is_dir() {
        let old_set = old_outputs(out_dir);
        for e in std::fs::read_dir(out_dir).map_err(werr)?.flatten() {
            let name = e.file_name();
            let ours = name == "bates-map.json" || old_set.contains(&name);
            if ours || staged.path().join(&name).exists() {
                continue;
            }
            carry_over(&e.path(), &staged.path().join(&name)).map_err(werr)?;
        }
    }
    crate::atomic::replace_dir(&staged.keep(), out_dir).map_err(werr)?;
    Ok(map)
}

/// The file names the folder's current `bates-map.json` lists as stamped outputs.
fn old_outputs(dir: &Path) -> BTreeSet<std::ffi::OsString> {
    let Ok(bytes) = std::fs::read(dir.join("bates-map.json")) else {
        return BTreeSet::new();
    };
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap_or_default();
    rows.iter()
        .filter_map(|r| r["output"].as_str())
        .filter_map(|o| Path::new(o).file_name().map(|n| n.to_os_string()))
        .collect()
}

/// Brings a file or folder that is not part of the stamped set into the new folder: a hard
/// link where the file system allows one, else a copy.
fn carry_over(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if meta.is_dir() {
        std::fs::create_dir(to)?;
        for e in std::fs::read_dir(from)?.flatten() {
            carry_over(&e.path(), &to.join(e.file_name()))?;
        }
        return Ok(());
    }
    if meta.file_type().is_symlink() {
        return std::os::unix::fs::symlink(std::fs::read_link(from)?, to);
    }
    std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(|_| ()))
}

/// The root of a document's page tree, if its catalogue names one.
fn page_tree(doc: &Document) -> Option<ObjectId> {
    doc.catalog()
        .ok()
        .and_then(|c| c.get(b"Pages").ok())
        .and_then(|p| p.as_reference().ok())
}

/// Gives each place in the page tree its own page object: a page object listed twice (a
/// damaged or hand-made file) would otherwise take every stamp meant for each of its places.
/// The copy shares the original's content streams, which stamping never changes.
pub(crate) fn unshare_pages(doc: &mut Document) {
    let Some(root) = page_tree(doc) else {
        return;
    };
    let mut pages = BTreeSet::new();
    let mut nodes = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if !nodes.insert(node) {
            continue;
        }
        let Some(kids) = doc
            .get_dictionary(node)
            .ok()
            .and_then(|d| d.get(b"Kids").ok())
            .and_then(|k| k.as_array().ok())
            .cloned()
        else {
            continue;
        };
        let mut fixed = kids.clone();
        let mut changed = false;
        for (i, k) in kids.iter().enumerate() {
            let Ok(id) = k.as_reference() else { continue };
            let Ok(dict) = doc.get_dictionary(id) else {
                continue;
            };
            let is_page = dict
                .get(b"Type")
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Page");
            if !is_page {
                stack.push(id);
            } else if !pages.insert(id) {
                let mut copy = dict.clone();
                copy.set("Parent", Object::Reference(node));
                fixed[i] = Object::Reference(doc.add_object(copy));
                changed = true;
            }
        }
        if changed {
            if let Ok(d) = doc.get_dictionary_mut(node) {
                d.set("Kids", Object::Array(fixed));
            }
        }
    }
}

/// Writes a file atomically, reporting failure as a write error on that file.
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> Result<(), String>,
) -> Result<(), BatesError> {
    crate::atomic::write_with(path, |f| write(f).map_err(std::io::Error::other))
        .map_err(|e| BatesError::Write(path.display().to_string(), e.to_string()))
}

/// The PDF to stamp: the file as lopdf reads it (one encrypted with only an owner password
/// opens, as in every reader), with what was repaired. A file lopdf cannot parse (a broken
/// cross-reference table) is first rewritten by qpdf, which rebuilds it; a page tree with
/// loops or shared branches is flattened to its pages in qpdf's order and count, a page
/// lost in a loop stamped as a blank page, so that the stamped file has the pages qpdf and
/// poppler count in the input.
fn open(
    path: &Path,
    shown: &str,
) -> Result<(Document, Option<String>, Option<tempfile::TempDir>), BatesError> {
    let mut notes = Vec::new();
    let mut work = None;
    let mut doc = match load(path) {
        Ok(doc) => doc,
        Err(BatesError::Damaged(_, m)) => {
            let (doc, dir) = qpdf_rewrite(path, shown, &m)?;
            work = Some(dir);
            notes.push(format!("it is damaged ({m}); rebuilt by qpdf"));
            doc
        }
        Err(e) => return Err(e),
    };
    if let Some(problem) = tree_problem(&doc) {
        let found = flatten(&mut doc);
        let counted = qpdf_count(path).unwrap_or(found);
        // A page lost in a loop is still a page of the tree's count; each is stamped blank,
        // never more than the file has objects.
        let blank = counted.saturating_sub(found).min(doc.objects.len());
        add_blank_pages(&mut doc, blank);
        notes.push(if blank > 0 {
            format!("{problem}; flattened, with {blank} page(s) lost in it stamped blank, as qpdf counts them")
        } else {
            format!("{problem}; flattened to its pages as qpdf counts them")
        });
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    Ok((doc, note, work))
}

/// The file rewritten by qpdf, which rebuilds a broken cross-reference table.
fn qpdf_rewrite(
    path: &Path,
    shown: &str,
    why: &str,
) -> Result<(Document, tempfile::TempDir), BatesError> {
    let Some(qpdf) = crate::sources::pdf_text::tool("qpdf", "LEXRUN_QPDF") else {
        return Err(BatesError::Damaged(
            shown.to_string(),
            format!("{why}; install qpdf (`apt-get install qpdf`) to repair it, or print it to a new PDF"),
        ));
    };
    let work =
        tempfile::tempdir().map_err(|e| BatesError::Write(shown.to_string(), e.to_string()))?;
    let out = work.path().join("repaired.pdf");
    let mut cmd = std::process::Command::new(qpdf);
    cmd.arg("--warning-exit-0").arg(path).arg(&out);
    let ran = crate::sources::limits::run("qpdf", &mut cmd, work.path());
    let message = std::fs::read_to_string(work.path().join("qpdf.stderr")).unwrap_or_default();
    if ran.is_err() && message.to_ascii_lowercase().contains("password") {
        return Err(BatesError::Encrypted(shown.to_string()));
    }
    match load(&out) {
        Ok(doc) if ran.is_ok() => Ok((doc, work)),
        _ => Err(BatesError::Damaged(
            shown.to_string(),
            format!(
                "{why}, and qpdf cannot repair it{}; print it to a new PDF",
                message
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| format!(" ({})", l.trim()))
                    .unwrap_or_default()
            ),
        )),
    }
}

/// The pages qpdf counts in a file, when qpdf is installed and can count them.
fn qpdf_count(path: &Path) -> Option<usize> {
    let qpdf = crate::sources::pdf_text::tool("qpdf", "LEXRUN_QPDF")?;
    let o = std::process::Command::new(qpdf)
        .arg("--show-npages")
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&o.stdout).trim().parse().ok()
}

/// Replaces the page tree by one node listing its pages in order: each node is walked once
/// (a loop or a shared branch is not followed again), a page listed twice is copied, and
/// the attributes pages inherit are set on each. Returns how many pages it found.
fn flatten(doc: &mut Document) -> usize {
    let Some(root) = page_tree(doc) else {
        return 0;
    };
    let mut nodes = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut leaves = Vec::new();
    // Depth first, in order: a stack of (node, next kid).
    let mut stack = vec![(root, 0usize)];
    nodes.insert(root);
    while let Some((node, i)) = stack.pop() {
        let kid = doc
            .get_dictionary(node)
            .ok()
            .and_then(|d| d.get(b"Kids").ok())
            .and_then(|k| doc.dereference(k).ok())
            .and_then(|(_, k)| k.as_array().ok())
            .and_then(|k| k.get(i))
            .and_then(|k| k.as_reference().ok());
        let Some(kid) = kid else {
            let more = doc
                .get_dictionary(node)
                .ok()
                .and_then(|d| d.get(b"Kids").ok())
                .and_then(|k| doc.dereference(k).ok())
                .and_then(|(_, k)| k.as_array().ok())
                .is_some_and(|k| i < k.len());
            if more {
                stack.push((node, i + 1));
            }
            continue;
        };
        stack.push((node, i + 1));
        let Ok(dict) = doc.get_dictionary(kid) else {
            continue;
        };
        let is_page = dict
            .get(b"Type")
            .and_then(Object::as_name)
            .is_ok_and(|n| n == b"Page")
            || !dict.has(b"Kids");
        if !is_page {
            if nodes.insert(kid) && stack.len() < 256 {
                stack.push((kid, 0));
            }
            continue;
        }
        let mut page = dict.clone();
        for key in [&b"MediaBox"[..], b"CropBox", b"Resources", b"Rotate"] {
            if !page.has(key) {
                if let Some(v) = inherited(doc, kid, key) {
                    page.set(key.to_vec(), v);
                }
            }
        }
        page.set("Type", Object::Name(b"Page".to_vec()));
        page.set("Parent", Object::Reference(root));
        let id = if seen.insert(kid) {
            kid
        } else {
            doc.add_object(Object::Dictionary(page.clone()))
        };
        doc.objects.insert(id, Object::Dictionary(page));
        leaves.push(Object::Reference(id));
    }
    let n = leaves.len();
    if let Ok(d) = doc.get_dictionary_mut(root) {
        d.set("Kids", Object::Array(leaves));
        d.set("Count", n as i64);
    }
    n
}

/// Appends `n` blank pages, the size of the tree's first page, to a flattened page tree.
fn add_blank_pages(doc: &mut Document, n: usize) {
    if n == 0 {
        return;
    }
    let Some(root) = page_tree(doc) else {
        return;
    };
    let first = doc.get_pages().into_values().next();
    let media = first
        .and_then(|p| inherited(doc, p, b"MediaBox"))
        .or_else(|| inherited(doc, root, b"MediaBox"))
        .unwrap_or_else(|| vec![0.into(), 0.into(), 612.into(), 792.into()].into());
    let mut kids = doc
        .get_dictionary(root)
        .ok()
        .and_then(|d| d.get(b"Kids").ok())
        .and_then(|k| k.as_array().ok())
        .cloned()
        .unwrap_or_default();
    for _ in 0..n {
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => root, "MediaBox" => media.clone(),
            "Resources" => Dictionary::new(),
        });
        kids.push(Object::Reference(page));
    }
    let count = kids.len() as i64;
    if let Ok(d) = doc.get_dictionary_mut(root) {
        d.set("Kids", Object::Array(kids));
        d.set("Count", count);
    }
}

/// What is wrong with a page tree that lopdf's page list does not count as qpdf does: a node
/// reached twice (a loop, or a shared subtree), or a leaf that is not a page.
fn tree_problem(doc: &Document) -> Option<String> {
    let root = page_tree(doc)?;
    let mut nodes = BTreeSet::new();
    let mut stack = vec![root];
    // Each object is looked at once, so the walk is bounded by the file's own objects.
    while let Some(node) = stack.pop() {
        if !nodes.insert(node) {
            return Some("its page tree has a loop or a shared branch".into());
        }
        let kids = doc
            .get_dictionary(node)
            .ok()
            .and_then(|d| d.get(b"Kids").ok())
            .and_then(|k| doc.dereference(k).ok())
            .and_then(|(_, k)| k.as_array().ok())?;
        for k in kids {
            let Ok(id) = k.as_reference() else {
                return Some("its page tree lists something that is not a page".into());
            };
            let Ok(dict) = doc.get_dictionary(id) else {
                return Some("its page tree lists a missing object".into());
            };
            match dict.get(b"Type").and_then(Object::as_name) {
                Ok(b"Page") => {}
                Ok(b"Pages") => stack.push(id),
                _ if dict.has(b"Kids") => stack.push(id),
                _ => return Some("its page tree lists an object that is not a page".into()),
            }
        }
    }
    None
}

pub(crate) fn load(path: &Path) -> Result<Document, BatesError> {
    let shown = path.display().to_string();
    let doc = Document::load(path).map_err(|e| {
        let msg = e.to_string();
        if msg.to_ascii_lowercase().contains("encrypt")
            || msg.to_ascii_lowercase().contains("decrypt")
        {
            BatesError::Encrypted(shown.clone())
        } else {
            BatesError::Damaged(shown.clone(), msg)
        }
    })?;
    // lopdf opens (and decrypts) a file whose user password is empty; one still encrypted
    // needs its password.
    if doc.is_encrypted() {
        return Err(BatesError::Encrypted(shown));
    }
    Ok(doc)
}

/// A page attribute, looked up through the page tree as PDF inheritance requires.
pub(crate) fn inherited(doc: &Document, page: ObjectId, key: &[u8]) -> Option<Object> {
    let mut id = page;
    for _ in 0..64 {
        let dict = doc.get_dictionary(id).ok()?;
        if let Ok(v) = dict.get(key) {
            return doc.dereference(v).ok().map(|(_, o)| o.clone());
        }
        id = dict.get(b"Parent").and_then(Object::as_reference).ok()?;
    }
    None
}

pub(crate) fn number(o: &Object) -> Option<f64> {
    match o {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(*r as f64),
        _ => None,
    }
}

/// A rectangle's corners as lower-left and upper-right, whichever order it gives them in.
pub(crate) fn rect(o: Option<Object>) -> Option<[f64; 4]> {
    let Object::Array(a) = o? else { return None };
    let v: Vec<f64> = a.iter().filter_map(number).collect();
    (v.len() == 4).then(|| {
        [
            v[0].min(v[2]),
            v[1].min(v[3]),
            v[0].max(v[2]),
            v[1].max(v[3]),
        ]
    })
}

fn stamp_page(
    doc: &mut Document,
    page: ObjectId,
    font: ObjectId,
    text: &str,
    opts: &Options,
) -> Result<(), String> {
    let media = rect(inherited(doc, page, b"MediaBox")).unwrap_or([0.0, 0.0, 612.0, 792.0]);
    let [llx, lly, urx, ury] = rect(inherited(doc, page, b"CropBox")).unwrap_or(media);
    let rotate = inherited(doc, page, b"Rotate")
        .and_then(|o| number(&o))
        .unwrap_or(0.0) as i64;
    let rotate = rotate.rem_euclid(360);

    // Resources: the page's own copy, with the stamp's font added under a name of our own.
    let mut resources: Dictionary = match inherited(doc, page, b"Resources") {
        Some(Object::Dictionary(d)) => d,
        _ => Dictionary::new(),
    };
    let mut fonts = match resources
        .get(b"Font")
        .ok()
        .map(|f| doc.dereference(f).map(|(_, o)| o.clone()))
    {
        Some(Ok(Object::Dictionary(d))) => d,
        _ => Dictionary::new(),
    };
    fonts.set("LexrunBates", Object::Reference(font));
    resources.set("Font", Object::Dictionary(fonts));

    // Where the stamp goes, in the page as displayed (origin at its bottom-left).
    let (bw, bh) = (urx - llx, ury - lly);
    let (w, h) = if rotate == 90 || rotate == 270 {
        (bh, bw)
    } else {
        (bw, bh)
    };
    // On a page too small for the stamp at its size, the stamp is shrunk to fit inside it.
    let margin = 18.0_f64.min(w / 10.0).min(h / 10.0);
    let per_point = text_width(text, 1.0).max(f64::MIN_POSITIVE);
    let size = opts
        .font_size
        .min((w - 2.0 * margin) / per_point)
        .min(h - 2.0 * margin)
        .max(0.01);
    let tw = text_width(text, size);
    let dx = match opts.position {
        Position::BottomRight | Position::TopRight => w - margin - tw,
        Position::BottomCenter | Position::TopCenter => (w - tw) / 2.0,
        Position::BottomLeft | Position::TopLeft => margin,
    };
    let dy = match opts.position {
        Position::BottomRight | Position::BottomCenter | Position::BottomLeft => margin,
        _ => h - margin - size,
    };
    // Back to user space, with the text turned so that it reads upright when displayed.
    let (a, b, c, d, ux, uy) = match rotate {
        90 => (0.0, 1.0, -1.0, 0.0, urx - dy, lly + dx),
        180 => (-1.0, 0.0, 0.0, -1.0, urx - dx, ury - dy),
        270 => (0.0, -1.0, 1.0, 0.0, llx + dy, ury - dx),
        _ => (1.0, 0.0, 0.0, 1.0, llx + dx, lly + dy),
    };
    let literal = super::winansi::literal(text)
        .map_err(|c| format!("the stamp `{text}` holds `{c}`, which Helvetica cannot show"))?;
    let mut stamp =
        format!("Q\nq\nBT\n/LexrunBates {size:.2} Tf\n0 g\n{a} {b} {c} {d} {ux:.2} {uy:.2} Tm\n(")
            .into_bytes();
    stamp.extend_from_slice(&literal);
    stamp.extend_from_slice(b") Tj\nET\nQ\n");
    let open = doc.add_object(Stream::new(dictionary! {}, b"q\n".to_vec()));
    let close = doc.add_object(Stream::new(dictionary! {}, stamp));
    let existing: Vec<Object> = doc
        .get_page_contents(page)
        .into_iter()
        .map(Object::Reference)
        .collect();
    let mut contents = vec![Object::Reference(open)];
    contents.extend(existing);
    contents.push(Object::Reference(close));
    let dict = doc.get_dictionary_mut(page).map_err(|e| e.to_string())?;
    dict.set("Contents", Object::Array(contents));
    dict.set("Resources", Object::Dictionary(resources));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_zero_padded_with_suffix() {
        let o = Options {
            prefix: "SMITH".into(),
            start: 1,
            width: 6,
            suffix: "-C".into(),
            position: Position::BottomRight,
            font_size: 9.0,
        };
        assert_eq!(o.number(42), "SMITH000042-C");
    }

    #[test]
    fn widths_follow_helvetica() {
        assert!((text_width("0", 10.0) - 5.56).abs() < 1e-9);
        assert!(text_width("SMITH000001", 9.0) > text_width("SMITH", 9.0));
    }
}
