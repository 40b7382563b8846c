//! Reading a volume back before it is handed over: every page's text layer must show its
//! Bates number and its document's legend; the images must be exactly the numbers from first
//! to last, no gap; the `.dat` and `.opt` must parse and agree with the images; and no
//! redacted string may appear anywhere — in any file's bytes, any decompressed PDF stream,
//! any page's text layer, the OCR of any page, `TEXT/`, the load files or the logs. Each
//! problem names the file where it was found.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use super::loadfile;
use super::Spec;
use crate::exhibits::winansi;

/// A string that was redacted, where, and whether it is looked for everywhere (a pattern's
/// match) or only on its page (what a declared box covered).
#[derive(Clone, Debug)]
pub struct Redacted {
    pub text: String,
    pub label: String,
    pub place: String,
    /// The page's Bates number when only a box covered it.
    pub page: Option<String>,
}

fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The needles worth searching for: long enough not to match by chance.
fn needles(redacted: &[Redacted]) -> Vec<&Redacted> {
    let mut seen = BTreeSet::new();
    redacted
        .iter()
        .filter(|r| squash(&r.text).chars().count() >= 4)
        .filter(|r| seen.insert((r.text.clone(), r.page.clone())))
        .collect()
}

fn run_text(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every stream of a PDF, decompressed where it is compressed.
fn streams(bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| format!("does not parse: {e}"))?;
    let mut out = Vec::new();
    for obj in doc.objects.values() {
        if let Ok(s) = obj.as_stream() {
            let content = s
                .decompressed_content()
                .unwrap_or_else(|_| s.content.clone());
            out.push(content);
        }
    }
    Ok(out)
}

fn byte_forms(s: &str) -> Vec<Vec<u8>> {
    let mut v = vec![s.as_bytes().to_vec()];
    if let Ok(w) = winansi::encode(s) {
        v.push(w);
    }
    if let Ok(l) = winansi::literal(s) {
        v.push(l);
    }
    v.dedup();
    v
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(hay, needle).is_some()
}

/// Looks at the staged volume; returns every problem found (none: the volume may go out).
pub fn check(
    volume: &Path,
    spec: &Spec,
    stamps: &[(String, String)],
    redacted: &[Redacted],
    _ocr_pages: &[String],
    (first, last): (u64, u64),
) -> Vec<String> {
    let mut problems = Vec::new();
    let needles = needles(redacted);
    let leak = |problems: &mut Vec<String>, r: &Redacted, wher: String| {
        problems.push(format!(
            "`{}` (redacted as {} on {}) leaked into {wher}",
            r.text, r.label, r.place
        ));
    };
    // The images: exactly first..=last, each stamped.
    let images = volume.join("IMAGES");
    let have: BTreeSet<String> = std::fs::read_dir(&images)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let want: BTreeSet<String> = (first..=last)
        .map(|n| format!("{}.pdf", spec.number(n)))
        .collect();
    for missing in want.difference(&have) {
        problems.push(format!(
            "IMAGES/{missing} is missing: the numbering has a gap"
        ));
    }
    for extra in have.difference(&want) {
        problems.push(format!("IMAGES/{extra} is outside the volume's numbers"));
    }
    let scratch = tempfile::tempdir().ok();
    for (bates, legend) in stamps {
        let rel = format!("IMAGES/{bates}.pdf");
        let path = volume.join(&rel);
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let layer = run_text(Command::new("pdftotext").arg("-layout").arg(&path).arg("-"));
        let Some(layer) = layer else {
            problems.push(format!("{rel}: pdftotext cannot read it"));
            continue;
        };
        let shown = collapse(&layer);
        if !shown.contains(bates.as_str()) {
            problems.push(format!(
                "{rel}: its Bates number {bates} is not on the page"
            ));
        }
        if !legend.is_empty() && !shown.contains(&collapse(legend)) {
            problems.push(format!("{rel}: its legend `{legend}` is not on the page"));
        }
        let streams = match streams(&bytes) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("{rel}: {e}"));
                continue;
            }
        };
        // OCR of the page as it prints.
        let ocr = scratch.as_ref().and_then(|dir| {
            let base = dir.path().join("page");
            let _ = std::fs::remove_file(base.with_extension("png"));
            Command::new("pdftoppm")
                .args(["-r", "300", "-gray", "-png", "-singlefile"])
                .arg(&path)
                .arg(&base)
                .output()
                .ok()?;
            run_text(
                Command::new("tesseract")
                    .arg(base.with_extension("png"))
                    .arg("-")
                    .args(["--dpi", "300", "-l", &spec.lang]),
            )
        });
        if ocr.is_none() {
            problems.push(format!("{rel}: the page could not be read back by OCR (are poppler-utils and tesseract-ocr installed?)"));
        }
        let layer_sq = squash(&layer);
        let ocr_sq = ocr.as_deref().map(squash).unwrap_or_default();
        for r in &needles {
            if r.page.as_ref().is_some_and(|p| p != bates) {
                continue;
            }
            let forms = byte_forms(&r.text);
            if forms.iter().any(|f| contains(&bytes, f)) {
                leak(&mut problems, r, format!("the bytes of {rel}"));
            } else if streams.iter().any(|s| forms.iter().any(|f| contains(s, f))) {
                leak(&mut problems, r, format!("a decompressed stream of {rel}"));
            }
            let sq = squash(&r.text);
            if layer_sq.contains(&sq) {
                leak(&mut problems, r, format!("the text layer of {rel}"));
            }
            if ocr_sq.contains(&sq) {
                leak(&mut problems, r, format!("the OCR of {rel}"));
            }
        }
    }
    // Every other file, as bytes and (for a Word file) its XML.
    for sub in ["TEXT", "DATA", "NATIVES"] {
        let dir = volume.join(sub);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let rel = format!(
                "{sub}/{}",
                f.file_name().unwrap_or_default().to_string_lossy()
            );
            let Ok(bytes) = std::fs::read(&f) else {
                continue;
            };
            let mut texts = vec![bytes.clone()];
            if rel.ends_with(".docx") {
                if let Ok(mut z) = zip::ZipArchive::new(std::io::Cursor::new(&bytes)) {
                    for i in 0..z.len() {
                        if let Ok(mut part) = z.by_index(i) {
                            let mut v = Vec::new();
                            let _ = std::io::Read::read_to_end(&mut part, &mut v);
                            texts.push(v);
                        }
                    }
                }
            }
            for r in needles.iter().filter(|r| r.page.is_none()) {
                let forms = byte_forms(&r.text);
                let sq = squash(&r.text);
                let hit = texts.iter().any(|t| {
                    forms.iter().any(|f| contains(t, f))
                        || squash(&String::from_utf8_lossy(t)).contains(&sq)
                });
                if hit {
                    leak(&mut problems, r, rel.clone());
                }
            }
        }
    }
    problems.extend(load_files(volume, spec, (first, last)));
    problems
}

/// The load files parsed back and matched to the images.
fn load_files(volume: &Path, spec: &Spec, (first, last): (u64, u64)) -> Vec<String> {
    let mut problems = Vec::new();
    let dat_rel = format!("DATA/{}.dat", spec.volume);
    let opt_rel = format!("DATA/{}.opt", spec.volume);
    let dat = std::fs::read_to_string(volume.join(&dat_rel)).unwrap_or_default();
    let (header, rows) = match loadfile::parse_dat(&dat) {
        Ok(x) => x,
        Err(e) => return vec![format!("{dat_rel}: {e}")],
    };
    if header != spec.fields {
        problems.push(format!(
            "{dat_rel}: its fields are {header:?}, not those declared"
        ));
    }
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(b), Some(e)) = (col("BEGBATES"), col("ENDBATES")) else {
        return vec![format!("{dat_rel}: no BEGBATES and ENDBATES")];
    };
    let opt = match loadfile::parse_opt(
        &std::fs::read_to_string(volume.join(&opt_rel)).unwrap_or_default(),
    ) {
        Ok(o) => o,
        Err(e) => return vec![format!("{opt_rel}: {e}")],
    };
    let keys: Vec<String> = (first..=last).map(|n| spec.number(n)).collect();
    let opt_keys: Vec<String> = opt.iter().map(|l| l.key.clone()).collect();
    if opt_keys != keys {
        problems.push(format!(
            "{opt_rel}: its images are not the volume's numbers {}–{} in order",
            spec.number(first),
            spec.number(last)
        ));
    }
    for l in &opt {
        let p = volume.join(l.path.replace('\\', "/"));
        if !p.is_file() {
            problems.push(format!(
                "{opt_rel}: {} points at {}, which is missing",
                l.key, l.path
            ));
        }
        if l.volume != spec.volume {
            problems.push(format!("{opt_rel}: {} names volume {}", l.key, l.volume));
        }
    }
    let mut next = first;
    for (i, r) in rows.iter().enumerate() {
        let (begin, end) = (&r[b], &r[e]);
        let num = |s: &str| {
            s.strip_prefix(spec.prefix.as_str())
                .and_then(|x| x.strip_suffix(spec.suffix.as_str()))
                .and_then(|x| x.parse::<u64>().ok())
        };
        let (Some(nb), Some(ne)) = (num(begin), num(end)) else {
            problems.push(format!(
                "{dat_rel}: row {} has numbers `{begin}`–`{end}`",
                i + 1
            ));
            continue;
        };
        if nb != next || ne < nb {
            problems.push(format!(
                "{dat_rel}: row {} runs {begin}–{end}, but the next number is {}",
                i + 1,
                spec.number(next)
            ));
        }
        next = ne + 1;
        let pages = ne + 1 - nb;
        if let Some(c) = col("PGCOUNT") {
            if r[c] != pages.to_string() {
                problems.push(format!(
                    "{dat_rel}: row {} says {} pages for {begin}–{end}",
                    i + 1,
                    r[c]
                ));
            }
        }
        match opt.iter().find(|l| &l.key == begin) {
            Some(l) if l.doc_break && l.pages == Some(pages as usize) => {}
            _ => problems.push(format!(
                "{opt_rel}: {begin} does not start a document of {pages} pages"
            )),
        }
        for field in ["TEXTPATH", "NATIVEPATH"] {
            if let Some(c) = col(field) {
                if !r[c].is_empty() && !volume.join(r[c].replace('\\', "/")).is_file() {
                    problems.push(format!(
                        "{dat_rel}: {field} of {begin} is {}, which is missing",
                        r[c]
                    ));
                }
            }
        }
    }
    if next != last + 1 {
        problems.push(format!(
            "{dat_rel}: its documents end at {}, the images at {}",
            spec.number(next.saturating_sub(1)),
            spec.number(last)
        ));
    }
    let breaks = opt.iter().filter(|l| l.doc_break).count();
    if breaks != rows.len() {
        problems.push(format!(
            "{opt_rel}: {breaks} documents, the .dat {}",
            rows.len()
        ));
    }
    problems
}
