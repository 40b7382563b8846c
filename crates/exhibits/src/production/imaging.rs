//! Turning a document into produced pages. A PDF's pages are produced as themselves where
//! `vector.rs` can vouch for every glyph; other PDF pages and images are rasterised at the
//! production's resolution (`pdftoppm`), their words found in the text layer or, for a scan,
//! by tesseract; every other kind is set as text from what lexrun reads of it. Redactions are
//! marked on words (raster pages) or characters (text pages) so the pixels or characters
//! under them never reach the produced page.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::finder::collapse;
use super::page::{self, Gray, Label, PxBox, TextPage};
use super::redact::spans;
use super::tiff;
use super::types::{BoxRule, Pattern, ProductionError};
use super::vector::{self, VectorPage};
use super::words::{
    self, point_labels, produced_text, whole_page, whole_raster_page, word_boxes, word_labels, Word,
};
use crate::sources::limits;

/// A page ready to be written, with what was redacted on it.
pub struct Prepared {
    pub body: Body,
    /// The page's text as produced: every redacted stretch replaced by its label.
    pub text: String,
    /// The strings that were redacted, each with its label and whether only a declared box
    /// (not a pattern) covered it: such a string is looked for on its own page only.
    pub redacted: Vec<(String, String, bool)>,
}

pub enum Body {
    Raster {
        image: page::Packed,
        labels: Vec<Label>,
    },
    Text(TextPage),
    /// A PDF page produced as itself, its redacted glyphs taken out of its content.
    Vector(Box<VectorPage>),
}

/// A character of a text page, and the label it is redacted under (and whether only a
/// declared box covers it).
type Cell = (char, Option<(String, bool)>);

/// The redactions a page's text gets: byte ranges with their label.
fn matches(text: &str, patterns: &[Pattern]) -> Vec<(usize, usize, String, usize)> {
    let mut out = Vec::new();
    for (i, p) in patterns.iter().enumerate() {
        for m in spans(&p.regex, text) {
            out.push((m.0, m.1, p.label(), i));
        }
    }
    out.sort_by_key(|m| (m.0, m.1));
    out
}

pub struct Hits<'a> {
    pub patterns: &'a [Pattern],
    /// How many times each pattern matched, added to.
    pub counts: &'a mut Vec<usize>,
    /// How many pages were rasterised, by why, added to.
    pub rasterised: &'a mut std::collections::BTreeMap<String, usize>,
}

/// Text pages from a document's page texts: long lines wrapped, long pages continued.
pub fn text_pages(
    name: &str,
    texts: &[String],
    hits: &mut Hits,
    boxes: &[&BoxRule],
) -> Result<Vec<Prepared>, ProductionError> {
    let (cols, rows) = page::text_capacity();
    let mut out = Vec::new();
    for (pi, t) in texts.iter().enumerate() {
        let t = t.replace('\r', "").replace('\t', "    ");
        let cells = redacted_cells(&t, hits);
        if whole_text_page(&cells) {
            return Err(ProductionError::WholePage {
                document: name.into(),
                page: pi as u32 + 1,
            });
        }
        // Lay out: lines wrapped at `cols` characters, pages of `rows` lines.
        for chunk in wrap(cells, cols).chunks(rows.max(1)) {
            let number = out.len() + 1;
            out.push(text_page(chunk, boxes, number));
        }
    }
    if out.is_empty() {
        out.push(Prepared {
            body: Body::Text(TextPage { lines: Vec::new() }),
            text: String::new(),
            redacted: Vec::new(),
        });
    }
    Ok(out)
}

/// A page text's characters, each with the label a pattern redacts it under.
fn redacted_cells(t: &str, hits: &mut Hits) -> Vec<Cell> {
    let ms = matches(t, hits.patterns);
    for m in &ms {
        hits.counts[m.3] += 1;
    }
    t.char_indices()
        .map(|(bi, c)| {
            let label = if c == '\n' {
                None
            } else {
                ms.iter()
                    .find(|m| m.0 <= bi && bi < m.1)
                    .map(|m| (m.2.clone(), false))
            };
            (c, label)
        })
        .collect()
}

/// Whether the patterns would redact (nearly) every character of a page text.
fn whole_text_page(cells: &[Cell]) -> bool {
    let nonblank = cells.iter().filter(|(c, _)| !c.is_whitespace()).count();
    let covered = cells
        .iter()
        .filter(|(c, l)| !c.is_whitespace() && l.is_some())
        .count();
    whole_page(covered, nonblank)
}

/// A page text's lines, each wrapped at `cols` characters.
fn wrap(cells: Vec<Cell>, cols: usize) -> Vec<Vec<Cell>> {
    let mut lines: Vec<Vec<Cell>> = vec![Vec::new()];
    for (c, l) in cells {
        if c == '\n' {
            lines.push(Vec::new());
            continue;
        }
        if lines.last().is_some_and(|l| l.len() >= cols) {
            lines.push(Vec::new());
        }
        if let Some(last) = lines.last_mut() {
            last.push((c, l));
        }
    }
    lines
}

/// Produced page `number` of a document, of the lines in `chunk`, with the declared boxes
/// on that page.
fn text_page(chunk: &[Vec<Cell>], boxes: &[&BoxRule], number: usize) -> Prepared {
    let mut page_lines = Vec::new();
    let mut produced = String::new();
    let mut redacted = Vec::new();
    for (li, line) in chunk.iter().enumerate() {
        let (shown, runs) = set_line(line, li, boxes, number, &mut redacted);
        produced.push_str(&text_line(line, &runs));
        produced.push('\n');
        page_lines.push((shown, runs));
    }
    redacted.retain(|(s, _, _)| !s.trim().is_empty());
    Prepared {
        body: Body::Text(TextPage { lines: page_lines }),
        text: produced,
        redacted,
    }
}

/// Line `li` of page `number` as it is shown, each redacted character a space, and the
/// runs of columns redacted under one label; adds what it redacts to `redacted`.
fn set_line(
    line: &[Cell],
    li: usize,
    boxes: &[&BoxRule],
    number: usize,
    redacted: &mut Vec<(String, String, bool)>,
) -> (String, Vec<(usize, usize, String)>) {
    let mut shown = String::new();
    let mut runs: Vec<(usize, usize, String)> = Vec::new();
    let mut was = String::new();
    for (col, (c, l)) in line.iter().enumerate() {
        let boxed = boxed(boxes, number, li, col);
        let l = l.clone().or_else(|| boxed.map(|b| (b.label(), true)));
        match l {
            Some((why, from_box)) => {
                shown.push(' ');
                match runs.last_mut() {
                    Some(r) if r.1 == col && r.2 == why => {
                        r.1 = col + 1;
                    }
                    _ => runs.push((col, col + 1, why.clone())),
                }
                was.push(*c);
                if col + 1 == line.len()
                    || line
                        .get(col + 1)
                        .is_none_or(|n| n.1.as_ref().map(|x| &x.0) != Some(&why))
                {
                    redacted.push((std::mem::take(&mut was), why, from_box));
                }
            }
            None => shown.push(*c),
        }
    }
    (shown, runs)
}

/// The declared box, if any, that covers column `col` of line `li` of page `number`: a box
/// drawn on a text page covers the characters under it.
fn boxed<'a>(boxes: &[&'a BoxRule], number: usize, li: usize, col: usize) -> Option<&'a BoxRule> {
    boxes.iter().copied().find(|b| {
        b.page as usize == number && {
            let cw = page::TEXT_SIZE * page::COURIER;
            let x = page::MARGIN + col as f64 * cw;
            let top = page::MARGIN + li as f64 * page::TEXT_LEAD;
            let [bx, by, bw, bh] = b.rect;
            x + cw > bx && x < bx + bw && top + page::TEXT_LEAD > by && top < by + bh
        }
    })
}

/// A line as the text file has it: each redacted run as its label.
fn text_line(line: &[Cell], runs: &[(usize, usize, String)]) -> String {
    let mut text_line = String::new();
    let mut col = 0;
    for r in runs {
        let before: String = line[col..r.0].iter().map(|x| x.0).collect();
        text_line.push_str(&before);
        text_line.push_str(&format!("[{}]", r.2));
        col = r.1;
    }
    let rest: String = line[col.min(line.len())..].iter().map(|x| x.0).collect();
    text_line.push_str(&rest);
    text_line
}

fn tool_err(document: &str, e: limits::ToolError) -> ProductionError {
    ProductionError::Unimageable {
        document: document.into(),
        why: e.to_string(),
    }
}

/// Pages of a PDF (or of an image, made a PDF by tesseract first), each produced as itself
/// (where `vector` allows it) if `vector.rs` can vouch for every glyph on it (`texts`, what `pdftotext` read of each
/// page, is its check), else rasterised with its redactions blacked out in the pixels.
#[allow(clippy::too_many_arguments)]
pub fn raster_pages(
    name: &str,
    pdf: &Path,
    (image, vector): (bool, bool),
    work: &Path,
    (dpi, lang): (u32, &str),
    texts: &[String],
    hits: &mut Hits,
    boxes: &[&BoxRule],
) -> Result<Vec<Prepared>, ProductionError> {
    std::fs::create_dir_all(work).map_err(|e| ProductionError::Io(work.to_path_buf(), e))?;
    let r = Raster {
        name,
        work,
        dpi,
        lang,
    };
    let pdf = if image {
        r.image_as_pdf(pdf)?
    } else {
        pdf.to_path_buf()
    };
    let source = if image || !vector {
        None
    } else {
        vector::Source::open(&pdf).filter(|s| s.len() > 0)
    };
    let mut layers = None;
    let count = match &source {
        Some(s) => s.len(),
        None => layers.insert(r.word_layers(&pdf, boxes)?).len(),
    };
    if let Some(b) = boxes.iter().find(|b| b.page as usize > count) {
        return Err(ProductionError::BoxOutside {
            document: name.into(),
            page: b.page,
            rect: b.rect,
            size: (0.0, 0.0),
        });
    }
    let mut out = Vec::new();
    for i in 0..count {
        let boxed = boxes.iter().any(|b| b.page as usize == i + 1);
        if let (Some(src), false) = (&source, boxed) {
            if let Some(p) = vector_page(name, src, i, texts.get(i), dpi, hits)? {
                out.push(p);
                continue;
            }
        } else {
            let why = if boxed {
                "a redaction box is declared on it"
            } else if image {
                "an image or a scan"
            } else if !vector {
                "every page of a TIFF volume is an image"
            } else {
                "lexrun cannot open the PDF to copy its pages"
            };
            *hits.rasterised.entry(why.into()).or_default() += 1;
        }
        let pages = match &mut layers {
            Some(l) => l,
            None => layers.insert(r.word_layers(&pdf, boxes)?),
        };
        let Some((pw, ph, layer)) = pages
            .get_mut(i)
            .map(|p| (p.0, p.1, std::mem::take(&mut p.2)))
        else {
            return Err(ProductionError::Unimageable {
                document: name.into(),
                why: format!("pdftotext reads no page {}", i + 1),
            });
        };
        // One page at a time, so a long document never fills the disk with rasters.
        let img = r.rasterise(&pdf, i)?;
        let words = r.words(&img, layer, i)?;
        out.push(r.page(i, img, (pw, ph), &words, hits, boxes)?);
    }
    Ok(out)
}

/// Page `i` produced as itself, if every glyph on it can be vouched for: its letters and
/// digits, and every pattern's matches, the same as in `expected` (what `pdftotext` read of
/// it). `None`: the page is to be rasterised.
fn vector_page(
    name: &str,
    src: &vector::Source,
    i: usize,
    expected: Option<&String>,
    dpi: u32,
    hits: &mut Hits,
) -> Result<Option<Prepared>, ProductionError> {
    let mut raster = |why: &str| {
        *hits.rasterised.entry(why.into()).or_default() += 1;
        Ok(None)
    };
    let (Some(read), Some(expected)) = (src.page(i), expected) else {
        tracing::debug!(
            "{name} page {}: rasterised, its content is not read glyph by glyph",
            i + 1
        );
        return raster("its content (rotation, images, forms, annotations or fonts) cannot be copied glyph by glyph");
    };
    let (words, members) = read.words(dpi as f64);
    let joined = words::join(&words);
    let found = |text: &str| {
        let mut v: Vec<(usize, String)> = matches(text, hits.patterns)
            .into_iter()
            .map(|m| (m.3, collapse(&text[m.0..m.1])))
            .collect();
        v.sort();
        v
    };
    // A page on which neither lexrun's reading nor pdftotext's finds anything to redact is
    // produced as itself, whatever they disagree on: nothing is taken out of it.
    let nothing = found(&joined.text).is_empty() && found(expected).is_empty();
    if !nothing && !same_letters(&joined.text, expected) {
        tracing::debug!(
            "{name} page {}: rasterised, its glyphs read {:?} where pdftotext read {expected:?}",
            i + 1,
            joined.text
        );
        return raster("it has text to redact and its glyphs do not read as pdftotext reads them");
    }
    let ms = matches(&joined.text, hits.patterns);
    if found(&joined.text) != found(expected) {
        tracing::debug!(
            "{name} page {}: rasterised, its matches differ from pdftotext's",
            i + 1
        );
        return raster("its redactions found in its glyphs differ from pdftotext's");
    }
    let label_of = word_labels(&joined, &ms);
    if whole_raster_page(&words, &label_of) {
        return Err(ProductionError::WholePage {
            document: name.into(),
            page: i as u32 + 1,
        });
    }
    let removed = label_of
        .iter()
        .zip(&members)
        .filter(|(l, _)| l.is_some())
        .flat_map(|(_, m)| m.iter().copied())
        .collect();
    let labels = point_labels(&word_boxes(&words, &label_of), read.crop, dpi);
    let Some(v) = src.produce(read, &removed, labels) else {
        return raster("its glyphs to redact cannot be taken out of its content");
    };
    let text = if nothing && !same_letters(&joined.text, expected) {
        // pdftotext's reading, as a review platform will extract it.
        expected.clone()
    } else {
        produced_text(&words, &label_of)
    };
    for m in &ms {
        hits.counts[m.3] += 1;
    }
    let redacted = ms
        .iter()
        .map(|m| (joined.text[m.0..m.1].to_string(), m.2.clone(), false))
        .filter(|(s, _, _)| !s.trim().is_empty())
        .collect();
    Ok(Some(Prepared {
        body: Body::Vector(Box::new(v)),
        text,
        redacted,
    }))
}

/// Whether two texts hold the same letters and digits, in any order.
fn same_letters(a: &str, b: &str) -> bool {
    let sorted = |s: &str| {
        let mut v: Vec<char> = s.chars().filter(|c| c.is_alphanumeric()).collect();
        v.sort_unstable();
        v
    };
    sorted(a) == sorted(b)
}

/// One document being rasterised: its name, its working folder, and the production's
/// resolution and OCR language.
struct Raster<'a> {
    name: &'a str,
    work: &'a Path,
    dpi: u32,
    lang: &'a str,
}

/// What is redacted on a raster page.
struct Marks {
    /// Each word's label, where it is redacted.
    label_of: Vec<Option<String>>,
    /// The boxes to black out, in pixels, each with its label.
    boxes: Vec<(PxBox, String)>,
    /// The strings redacted, each with its label and whether only a declared box covered it.
    redacted: Vec<(String, String, bool)>,
}

impl Raster<'_> {
    /// An image made a one-page PDF: tesseract writes the image as a PDF page at its
    /// resolution, with its words.
    fn image_as_pdf(&self, image: &Path) -> Result<PathBuf, ProductionError> {
        let base = self.work.join("image");
        limits::run(
            "tesseract",
            Command::new("tesseract")
                .arg(image)
                .arg(&base)
                .args(["--dpi", "300", "-l", self.lang, "pdf"]),
            self.work,
        )
        .map_err(|e| tool_err(self.name, e))?;
        Ok(base.with_extension("pdf"))
    }

    /// Each page's size in points and the words of its text layer, by `pdftotext`; a
    /// declared box on a page the document does not have is refused.
    fn word_layers(
        &self,
        pdf: &Path,
        boxes: &[&BoxRule],
    ) -> Result<Vec<(f64, f64, Vec<Word>)>, ProductionError> {
        let layout = self.work.join("words.html");
        limits::run(
            "pdftotext",
            Command::new("pdftotext")
                .arg("-bbox-layout")
                .arg(pdf)
                .arg(&layout),
            self.work,
        )
        .map_err(|e| tool_err(self.name, e))?;
        let html =
            std::fs::read_to_string(&layout).map_err(|e| ProductionError::Io(layout.clone(), e))?;
        let pages = words::from_bbox_layout(&html, self.dpi as f64);
        if pages.is_empty() {
            return Err(ProductionError::Unimageable {
                document: self.name.into(),
                why: "it has no pages".into(),
            });
        }
        let count = pages.len();
        if let Some(b) = boxes.iter().find(|b| b.page as usize > count) {
            return Err(ProductionError::BoxOutside {
                document: self.name.into(),
                page: b.page,
                rect: b.rect,
                size: (0.0, 0.0),
            });
        }
        Ok(pages)
    }

    /// Page `i` of `pdf`, rasterised in gray by `pdftoppm`.
    fn rasterise(&self, pdf: &Path, i: usize) -> Result<Gray, ProductionError> {
        let base = self.work.join("page");
        let n = (i + 1).to_string();
        limits::run(
            "pdftoppm",
            Command::new("pdftoppm")
                .args([
                    "-gray",
                    "-singlefile",
                    "-r",
                    &self.dpi.to_string(),
                    "-f",
                    &n,
                    "-l",
                    &n,
                ])
                .arg(pdf)
                .arg(&base),
            self.work,
        )
        .map_err(|e| tool_err(self.name, e))?;
        let raster = base.with_extension("pgm");
        let bytes = std::fs::read(&raster).map_err(|e| ProductionError::Io(raster.clone(), e))?;
        let _ = std::fs::remove_file(&raster);
        Gray::from_pgm(&bytes).ok_or_else(|| ProductionError::Unimageable {
            document: self.name.into(),
            why: format!("pdftoppm wrote no readable image of page {}", i + 1),
        })
    }

    /// Page `i`'s words: its text layer's, or for a page without one (a scan) the words
    /// tesseract reads in its raster.
    fn words(&self, img: &Gray, layer: Vec<Word>, i: usize) -> Result<Vec<Word>, ProductionError> {
        if !layer.iter().all(|w| w.text.trim().is_empty()) {
            return Ok(layer);
        }
        let pgm = self.work.join(format!("ocr-{}.pgm", i + 1));
        std::fs::write(&pgm, img.to_pgm()).map_err(|e| ProductionError::Io(pgm.clone(), e))?;
        let base = self.work.join(format!("ocr-{}", i + 1));
        limits::run(
            "tesseract",
            Command::new("tesseract").arg(&pgm).arg(&base).args([
                "--dpi",
                &self.dpi.to_string(),
                "-l",
                self.lang,
                "tsv",
            ]),
            self.work,
        )
        .map_err(|e| tool_err(self.name, e))?;
        let tsv_path = base.with_extension("tsv");
        let tsv = std::fs::read_to_string(&tsv_path).unwrap_or_default();
        let _ = std::fs::remove_file(&pgm);
        Ok(words::from_tsv(&tsv))
    }

    /// Page `i` produced: the patterns' matches and the declared boxes blacked out in its
    /// pixels, each box labelled, and its text with each redacted run as its label.
    fn page(
        &self,
        i: usize,
        mut img: Gray,
        size: (f64, f64),
        words: &[Word],
        hits: &mut Hits,
        boxes: &[&BoxRule],
    ) -> Result<Prepared, ProductionError> {
        let joined = words::join(words);
        let ms = matches(&joined.text, hits.patterns);
        for m in &ms {
            hits.counts[m.3] += 1;
        }
        let label_of = word_labels(&joined, &ms);
        if whole_raster_page(words, &label_of) {
            return Err(ProductionError::WholePage {
                document: self.name.into(),
                page: i as u32 + 1,
            });
        }
        let mut marks = Marks {
            boxes: word_boxes(words, &label_of),
            label_of,
            redacted: ms
                .iter()
                .map(|m| (joined.text[m.0..m.1].to_string(), m.2.clone(), false))
                .collect(),
        };
        self.declared_boxes(i, &img, size, words, boxes, &mut marks)?;
        let labels = black_out(&mut img, &marks.boxes, self.dpi);
        let text = produced_text(words, &marks.label_of);
        marks.redacted.retain(|(s, _, _)| !s.trim().is_empty());
        Ok(Prepared {
            body: Body::Raster {
                image: page::Packed::of(&img),
                labels,
            },
            text,
            redacted: marks.redacted,
        })
    }

    /// Adds the declared boxes of page `i`, in points from the page's top-left corner, to
    /// what is blacked out; the words under a box are redacted text too. A box outside the
    /// page is refused.
    fn declared_boxes(
        &self,
        i: usize,
        img: &Gray,
        (pw, ph): (f64, f64),
        words: &[Word],
        boxes: &[&BoxRule],
        marks: &mut Marks,
    ) -> Result<(), ProductionError> {
        let k = self.dpi as f64 / 72.0;
        let (pw_px, ph_px) = (img.w as f64 / k, img.h as f64 / k);
        let (pw, ph) = if pw > 0.0 { (pw, ph) } else { (pw_px, ph_px) };
        for b in boxes.iter().filter(|b| b.page as usize == i + 1) {
            let [x, y, w, h] = b.rect;
            if x + w > pw + 0.5 || y + h > ph + 0.5 {
                return Err(ProductionError::BoxOutside {
                    document: self.name.into(),
                    page: b.page,
                    rect: b.rect,
                    size: (pw, ph),
                });
            }
            let bx = PxBox {
                x0: (x * k) as usize,
                y0: (y * k) as usize,
                x1: ((x + w) * k).ceil() as usize,
                y1: ((y + h) * k).ceil() as usize,
            };
            for (wi, wd) in words.iter().enumerate() {
                let o = wd.bx;
                if o.x0 < bx.x1 && bx.x0 < o.x1 && o.y0 < bx.y1 && bx.y0 < o.y1 {
                    if marks.label_of[wi].is_none() {
                        marks.redacted.push((wd.text.clone(), b.label(), true));
                    }
                    marks.label_of[wi] = Some(b.label());
                }
            }
            marks.boxes.push((bx, b.label()));
        }
        Ok(())
    }
}

/// Blacks out each box, a little padded, in the pixels; returns the labels that sit on
/// them, in points from the page's bottom-left corner.
fn black_out(img: &mut Gray, px_boxes: &[(PxBox, String)], dpi: u32) -> Vec<Label> {
    let k = dpi as f64 / 72.0;
    let pad = (dpi as usize) / 100;
    let mut labels = Vec::new();
    for (b, why) in px_boxes {
        let b = PxBox {
            x0: b.x0.saturating_sub(pad),
            y0: b.y0.saturating_sub(pad),
            x1: (b.x1 + pad).min(img.w),
            y1: (b.y1 + pad).min(img.h),
        };
        img.fill(b);
        labels.push(Label {
            x: b.x0 as f64 / k,
            y: (img.h - b.y1) as f64 / k,
            w: (b.x1 - b.x0) as f64 / k,
            h: (b.y1 - b.y0) as f64 / k,
            text: why.clone(),
        });
    }
    labels
}

/// A finished page — its content, labels and stamps, as its PDF draws them — rasterised by
/// `pdftoppm` at `dpi`, cut to black and white and encoded as a Group IV TIFF. The error says
/// why the page could not be.
pub fn tiff_page(pdf: &[u8], work: &Path, dpi: u32) -> Result<Vec<u8>, String> {
    std::fs::create_dir_all(work).map_err(|e| format!("cannot write `{}`: {e}", work.display()))?;
    let src = work.join("page.pdf");
    std::fs::write(&src, pdf).map_err(|e| format!("cannot write `{}`: {e}", src.display()))?;
    let base = work.join("page");
    let ran = limits::run(
        "pdftoppm",
        Command::new("pdftoppm")
            .args(["-gray", "-singlefile", "-r", &dpi.to_string()])
            .arg(&src)
            .arg(&base),
        work,
    );
    let _ = std::fs::remove_file(&src);
    ran.map_err(|e| e.to_string())?;
    let raster = base.with_extension("pgm");
    let bytes = std::fs::read(&raster);
    let _ = std::fs::remove_file(&raster);
    let img = bytes
        .ok()
        .and_then(|b| Gray::from_pgm(&b))
        .ok_or("pdftoppm wrote no readable image of it")?;
    tiff::encode(&img, dpi).ok_or_else(|| {
        format!(
            "it is {} × {} pixels at {dpi} dpi, more than a Group IV TIFF holds (65,535 a side)",
            img.w, img.h
        )
    })
}
