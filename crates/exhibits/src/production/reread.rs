//! Reading a volume back before it is handed over: every page's text layer must show its
//! Bates number and its document's legend; the images must be exactly the numbers from first
//! to last, no gap; the `.dat` and `.opt` must parse and agree with the images; and no
//! redacted string may appear anywhere — in any file's bytes, any decompressed PDF stream,
//! any page's text layer, the OCR of any page, `TEXT/`, the load files or the logs. Each
//! problem names the file where it was found.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

pub use super::finder::Redacted;
use super::finder::{collapse, squash, Finder};
use super::loadfile;
use super::types::{Images, Spec};

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

/// A page as written: its number, its legend, and whether it is an image (so its pixels
/// are read back by OCR; a page of text has nothing but the text its streams hold).
#[derive(Clone, Debug)]
pub struct Page {
    /// Its image, relative to the volume: `IMAGES/HARBOR0000001.pdf`.
    pub file: String,
    pub bates: String,
    pub legend: String,
    pub raster: bool,
}

fn leak(problems: &mut Vec<String>, r: &Redacted, wher: String) {
    problems.push(format!(
        "`{}` (redacted as {} on {}) leaked into {wher}",
        r.text, r.label, r.place
    ));
}

/// Reports each needle found in each place, for the page numbered `bates` (a string a box
/// covered is looked for on its own page only).
fn leaks(
    finder: &Finder,
    bates: &str,
    places: &[(BTreeSet<usize>, String)],
    problems: &mut Vec<String>,
) {
    for (i, r) in finder.needles.iter().enumerate() {
        if r.page.as_ref().is_some_and(|p| p != bates) {
            continue;
        }
        for (found, wher) in places {
            if found.contains(&i) {
                leak(problems, r, wher.clone());
            }
        }
    }
}

/// Looks at the staged volume; returns every problem found (none: the volume may go out).
pub fn check(
    volume: &Path,
    spec: &Spec,
    fields: &[String],
    stamps: &[Page],
    redacted: &[Redacted],
    (first, last): (u64, u64),
) -> Vec<String> {
    let mut problems = Vec::new();
    let finder = Finder::new(needles(redacted), &spec.patterns);
    // The images: exactly first..=last, each stamped.
    let mut have = BTreeSet::new();
    files_in(volume, "IMAGES", &mut have);
    let want: BTreeSet<String> = (first..=last).map(|n| spec.image_rel(first, n)).collect();
    for missing in want.difference(&have) {
        problems.push(format!("{missing} is missing: the numbering has a gap"));
    }
    for extra in have.difference(&want) {
        problems.push(format!("{extra} is outside the volume's numbers"));
    }
    // Pages are read back on every processor.
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let chunk = stamps.len().div_ceil(workers).max(1);
    let found: Vec<Vec<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = stamps
            .chunks(chunk)
            .map(|pages| {
                let finder = &finder;
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for p in pages {
                        page(volume, spec, p, finder, &mut problems);
                    }
                    problems
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec!["a page could not be read back".into()])
            })
            .collect()
    });
    problems.extend(found.into_iter().flatten());
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
            let mut hits = BTreeSet::new();
            for t in &texts {
                hits.extend(finder.in_bytes(t));
                hits.extend(finder.in_text(&String::from_utf8_lossy(t)));
            }
            for (i, r) in finder.needles.iter().enumerate() {
                if r.page.is_none() && hits.contains(&i) {
                    leak(&mut problems, r, rel.clone());
                }
            }
        }
    }
    problems.extend(load_files(volume, spec, fields, (first, last)));
    problems
}

/// Every file under `volume/sub`, at any depth, relative to the volume with `/`.
fn files_in(volume: &Path, sub: &str, out: &mut BTreeSet<String>) {
    let Ok(rd) = std::fs::read_dir(volume.join(sub)) else {
        return;
    };
    for e in rd.flatten() {
        let rel = format!("{sub}/{}", e.file_name().to_string_lossy());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            files_in(volume, &rel, out);
        } else {
            out.insert(rel);
        }
    }
}

/// One page read back: its stamps in the text layer, and no redacted string in its bytes,
/// its decompressed streams, its text layer or (an image) its OCR.
fn page(volume: &Path, spec: &Spec, p: &Page, finder: &Finder, problems: &mut Vec<String>) {
    if spec.images == Images::Tiff {
        return tiff_page(volume, spec, p, finder, problems);
    }
    let (bates, legend) = (&p.bates, &p.legend);
    let rel = p.file.clone();
    let path = volume.join(&rel);
    let Ok(bytes) = std::fs::read(&path) else {
        return;
    };
    // The text layer as the page's own bytes show it; `pdftotext` for a page lexrun's reader
    // cannot take.
    // Only what prints counts for the stamps: glyphs inside the page's visible box (poppler
    // too leaves out what lies off the page).
    let layer = super::vector::text_of(&bytes).or_else(|| {
        run_text(Command::new("pdftotext").arg("-layout").arg(&path).arg("-"))
            .map(|t| (t.clone(), t))
    });
    let Some((layer, visible)) = layer else {
        problems.push(format!("{rel}: pdftotext cannot read it"));
        return;
    };
    let shown = collapse(&visible);
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
            return;
        }
    };
    // OCR of an image page as it prints.
    let ocr = if p.raster {
        let text = ocr(&path, &spec.lang);
        if text.is_none() {
            problems.push(format!("{rel}: the page could not be read back by OCR (are poppler-utils and tesseract-ocr installed?)"));
        }
        text.unwrap_or_default()
    } else {
        String::new()
    };
    let in_bytes = finder.in_bytes(&bytes);
    let mut in_streams = BTreeSet::new();
    for s in &streams {
        in_streams.extend(finder.in_bytes(s));
    }
    // A string in the file's bytes is not reported again for its streams.
    let in_streams = in_streams.difference(&in_bytes).copied().collect();
    let places = [
        (in_bytes, format!("the bytes of {rel}")),
        (in_streams, format!("a decompressed stream of {rel}")),
        (finder.in_text(&layer), format!("the text layer of {rel}")),
        (finder.in_text(&ocr), format!("the OCR of {rel}")),
    ];
    leaks(finder, bates, &places, problems);
}

/// The OCR of a page as it prints: `pdftoppm` rasterises it at 300 dpi straight into
/// tesseract, which reads it with one thread (pages are read in parallel already).
fn ocr(path: &Path, lang: &str) -> Option<String> {
    let mut raster = Command::new("pdftoppm")
        .args(["-r", "300", "-gray", "-singlefile"])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let text = raster.stdout.take().and_then(|pixels| {
        run_text(
            Command::new("tesseract")
                .args(["stdin", "-", "--dpi", "300", "-l", lang])
                .env("OMP_THREAD_LIMIT", "1")
                .stdin(pixels),
        )
    });
    let rendered = raster.wait().is_ok_and(|s| s.success());
    text.filter(|_| rendered)
}

/// What OCR is held to: letters and digits only, in capitals, with the shapes a stamp's
/// Courier leaves ambiguous (O, Q, D and 0; I, L and 1; S and 5; B and 8; Z and 2) read as
/// one. The stamp is held to the same form, so this only forgives a misread shape.
fn stamp_form(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| match c.to_ascii_uppercase() {
            'O' | 'Q' | 'D' => '0',
            'I' | 'L' => '1',
            'S' => '5',
            'B' => '8',
            'Z' => '2',
            c => c,
        })
        .collect()
}

/// A TIFF page read back: its structure (one page, Group IV, bilevel, the production's
/// resolution) and every row decoded; its Bates number and legend in its OCR, and no
/// redacted string in its bytes or its OCR.
fn tiff_page(volume: &Path, spec: &Spec, p: &Page, finder: &Finder, problems: &mut Vec<String>) {
    let (bates, legend, rel) = (&p.bates, &p.legend, &p.file);
    let path = volume.join(rel);
    let Ok(bytes) = std::fs::read(&path) else {
        return;
    };
    let info = match super::tiff::read(&bytes) {
        Err(e) => {
            problems.push(format!("{rel}: not a valid Group IV TIFF: {e}"));
            return;
        }
        Ok(info) => info,
    };
    if info.dpi != (spec.dpi as f64, spec.dpi as f64) {
        problems.push(format!(
            "{rel}: its resolution is {} × {} dpi, not {}",
            info.dpi.0, info.dpi.1, spec.dpi
        ));
    }
    // Pages are read in parallel already: one thread each.
    let ocr = run_text(
        Command::new("tesseract")
            .arg(&path)
            .arg("-")
            .args(["--dpi", &spec.dpi.to_string(), "-l", &spec.lang])
            .env("OMP_THREAD_LIMIT", "1"),
    );
    let Some(ocr) = ocr else {
        problems.push(format!(
            "{rel}: the page could not be read back by OCR (is tesseract-ocr installed?)"
        ));
        return;
    };
    let mut seen = stamp_form(&ocr);
    // OCR of a whole page can misread a digit of the stamp; the band the stamps are set in is
    // read again on its own, enlarged, before the stamp is called missing.
    let found = |seen: &str| {
        seen.contains(&stamp_form(bates))
            && (legend.is_empty() || seen.contains(&stamp_form(legend)))
    };
    if !found(&seen) {
        if let Some(band) = band_ocr(&info, spec, &found) {
            seen.push(' ');
            seen.push_str(&stamp_form(&band));
        }
    }
    if !seen.contains(&stamp_form(bates)) {
        problems.push(format!(
            "{rel}: its Bates number {bates} is not on the page (OCR reads no such number)"
        ));
    }
    if !legend.is_empty() && !seen.contains(&stamp_form(legend)) {
        problems.push(format!(
            "{rel}: its legend `{legend}` is not on the page (OCR reads no such words)"
        ));
    }
    let places = [
        (finder.in_bytes(&bytes), format!("the bytes of {rel}")),
        (finder.in_text(&ocr), format!("the OCR of {rel}")),
    ];
    leaks(finder, bates, &places, problems);
}

/// The OCR of the band below a TIFF page's image, where its stamps are set, on its own:
/// poppler enlarges it, smoothing its edges, and tesseract reads it as a block, at a few
/// sizes until `found` holds of what it read. A whole page's OCR can misread a digit of a
/// small stamp; this reads the same pixels again. Returns everything it read.
fn band_ocr(info: &super::tiff::Info, spec: &Spec, found: &dyn Fn(&str) -> bool) -> Option<String> {
    let (w, h) = (info.width as usize, info.height as usize);
    let band = ((super::page::BAND * spec.dpi as f64 / 72.0).ceil() as usize + 8).min(h);
    if w == 0 || band == 0 || info.black.len() < w * h {
        return None;
    }
    let px = info.black[(h - band) * w..h * w]
        .iter()
        .map(|&b| if b { 0 } else { 255 })
        .collect();
    let gray = super::page::Gray { w, h: band, px };
    let stamps = super::page::Stamps {
        bates: "",
        legend: "",
    };
    let pdf = super::page::raster_pdf(
        &super::page::Packed::of(&gray),
        spec.dpi as f64,
        &[],
        &stamps,
    );
    let file = tempfile::NamedTempFile::new().ok()?;
    std::fs::write(file.path(), pdf).ok()?;
    let mut all = String::new();
    // Sizes in halves of the page's resolution.
    for (halves, colour, psm) in [(3, "-gray", "6"), (5, "-gray", "7"), (4, "-mono", "7")] {
        let dpi = (spec.dpi * halves / 2).to_string();
        let mut raster = Command::new("pdftoppm")
            .args(["-r", &dpi, colour, "-singlefile"])
            .arg(file.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let text = raster.stdout.take().and_then(|pixels| {
            run_text(
                Command::new("tesseract")
                    .args(["stdin", "-", "--dpi", &dpi, "--psm", psm, "-l", &spec.lang])
                    .env("OMP_THREAD_LIMIT", "1")
                    .stdin(pixels),
            )
        });
        let rendered = raster.wait().is_ok_and(|s| s.success());
        if let Some(t) = text.filter(|_| rendered) {
            all.push_str(&t);
            all.push('\n');
            if found(&stamp_form(&t)) {
                break;
            }
        }
    }
    Some(all)
}

/// The load files parsed back and matched to the images.
fn load_files(
    volume: &Path,
    spec: &Spec,
    fields: &[String],
    (first, last): (u64, u64),
) -> Vec<String> {
    let mut problems = Vec::new();
    let dat_rel = format!("DATA/{}.dat", spec.volume);
    let opt_rel = format!("DATA/{}.opt", spec.volume);
    let dat = std::fs::read_to_string(volume.join(&dat_rel)).unwrap_or_default();
    let (header, rows) = match loadfile::parse_dat(&dat) {
        Ok(x) => x,
        Err(e) => return vec![format!("{dat_rel}: {e}")],
    };
    if header != fields {
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

#[cfg(test)]
mod tests {
    use super::super::loadfile;
    use super::super::page::{self, Stamps, TextPage};
    use super::super::types::Spec;
    use super::*;

    #[test]
    fn ocr_is_forgiven_a_stamps_ambiguous_shapes_but_not_another_number() {
        let seen = stamp_form("HIGHLY CONFIDENTIAL RIVERAQ000004");
        assert!(seen.contains(&stamp_form("RIVERA0000004")));
        assert!(!seen.contains(&stamp_form("RIVERA0000005")));
    }

    fn spec() -> Spec {
        Spec {
            volume: "VOL009".into(),
            prefix: "T".into(),
            start: 1,
            continues: false,
            width: 3,
            suffix: String::new(),
            legends: Vec::new(),
            designate: Vec::new(),
            patterns: Vec::new(),
            boxes: Vec::new(),
            withhold: Vec::new(),
            natives: Vec::new(),
            fields: vec!["BEGBATES".into(), "ENDBATES".into(), "PGCOUNT".into()],
            dpi: 300,
            lang: "eng".into(),
            images: Images::Pdf,
        }
    }

    /// A one-page volume whose page and text file still hold `line`.
    fn volume(dir: &Path, line: &str) {
        volume_as(dir, line, Images::Pdf);
    }

    fn volume_as(dir: &Path, line: &str, images: Images) {
        for sub in ["IMAGES", "TEXT", "DATA"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let pdf = page::text_pdf(
            &TextPage {
                lines: vec![(line.into(), Vec::new())],
            },
            &Stamps {
                bates: "T001",
                legend: "CONFIDENTIAL",
            },
        );
        let s = Spec { images, ..spec() };
        let image = s.image_rel(1, 1);
        let bytes = match images {
            Images::Pdf => pdf,
            Images::Tiff => {
                let scratch = tempfile::tempdir().unwrap();
                super::super::imaging::tiff_page(&pdf, scratch.path(), 300).unwrap()
            }
        };
        let at = dir.join(&image);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, bytes).unwrap();
        std::fs::write(dir.join("TEXT/T001.txt"), line).unwrap();
        let rows = vec![vec!["T001".into(), "T001".into(), "1".into()]];
        std::fs::write(dir.join("DATA/VOL009.dat"), loadfile::dat(&s.fields, &rows)).unwrap();
        let opt = [loadfile::OptLine {
            key: "T001".into(),
            volume: "VOL009".into(),
            path: image.replace('/', "\\"),
            doc_break: true,
            pages: Some(1),
        }];
        std::fs::write(dir.join("DATA/VOL009.opt"), loadfile::opt(&opt)).unwrap();
    }

    fn ssn() -> Vec<Redacted> {
        vec![Redacted {
            text: "123-45-6789".into(),
            label: "REDACTED – PII".into(),
            place: "a.txt page 1".into(),
            page: None,
        }]
    }

    fn page_of() -> Vec<Page> {
        vec![Page {
            file: "IMAGES/T001.pdf".into(),
            bates: "T001".into(),
            legend: "CONFIDENTIAL".into(),
            raster: false,
        }]
    }

    #[test]
    fn a_redacted_string_left_on_a_page_fails_and_says_where() {
        let dir = tempfile::tempdir().unwrap();
        volume(dir.path(), "SSN 123-45-6789 here");
        let problems = check(
            dir.path(),
            &spec(),
            &spec().fields,
            &page_of(),
            &ssn(),
            (1, 1),
        );
        let all = problems.join("\n");
        assert!(
            all.contains("a decompressed stream of IMAGES/T001.pdf"),
            "{all}"
        );
        assert!(all.contains("the text layer of IMAGES/T001.pdf"), "{all}");
        assert!(all.contains("leaked into TEXT/T001.txt"), "{all}");
    }

    #[test]
    fn a_clean_volume_passes_and_a_gap_or_a_wrong_legend_does_not() {
        let dir = tempfile::tempdir().unwrap();
        volume(dir.path(), "SSN [REDACTED – PII] here");
        assert_eq!(
            check(
                dir.path(),
                &spec(),
                &spec().fields,
                &page_of(),
                &ssn(),
                (1, 1)
            ),
            Vec::<String>::new()
        );
        let mut wrong = page_of();
        wrong[0].legend = "HIGHLY CONFIDENTIAL".into();
        let p = check(dir.path(), &spec(), &spec().fields, &wrong, &ssn(), (1, 1)).join("\n");
        assert!(
            p.contains("its legend `HIGHLY CONFIDENTIAL` is not on the page"),
            "{p}"
        );
        let p = check(
            dir.path(),
            &spec(),
            &spec().fields,
            &page_of(),
            &ssn(),
            (1, 2),
        )
        .join("\n");
        assert!(
            p.contains("IMAGES/T002.pdf is missing: the numbering has a gap"),
            "{p}"
        );
    }

    #[test]
    fn a_tiff_page_is_read_back_by_its_structure_and_its_ocr() {
        let tiff = Spec {
            images: Images::Tiff,
            ..spec()
        };
        let pages = vec![Page {
            file: "IMAGES/0001/T001.tif".into(),
            ..page_of().remove(0)
        }];
        let dir = tempfile::tempdir().unwrap();
        volume_as(dir.path(), "SSN [REDACTED – PII] here", Images::Tiff);
        assert_eq!(
            check(dir.path(), &tiff, &tiff.fields, &pages, &ssn(), (1, 1)),
            Vec::<String>::new()
        );
        // The stamps are in the pixels: a legend the page does not carry is found missing.
        let mut wrong = pages.clone();
        wrong[0].legend = "HIGHLY CONFIDENTIAL".into();
        let p = check(dir.path(), &tiff, &tiff.fields, &wrong, &ssn(), (1, 1)).join("\n");
        assert!(
            p.contains("IMAGES/0001/T001.tif: its legend `HIGHLY CONFIDENTIAL` is not on the page"),
            "{p}"
        );
        // A number left in the pixels is found by OCR, and the file named.
        let leaked = tempfile::tempdir().unwrap();
        volume_as(leaked.path(), "SSN 123-45-6789 here", Images::Tiff);
        let p = check(leaked.path(), &tiff, &tiff.fields, &pages, &ssn(), (1, 1)).join("\n");
        assert!(
            p.contains("leaked into the OCR of IMAGES/0001/T001.tif"),
            "{p}"
        );
        // A damaged image fails on its structure, named.
        let at = dir.path().join("IMAGES/0001/T001.tif");
        let mut bytes = std::fs::read(&at).unwrap();
        bytes[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&at, bytes).unwrap();
        let p = check(dir.path(), &tiff, &tiff.fields, &pages, &ssn(), (1, 1)).join("\n");
        assert!(
            p.contains("IMAGES/0001/T001.tif: not a valid Group IV TIFF"),
            "{p}"
        );
    }
}
