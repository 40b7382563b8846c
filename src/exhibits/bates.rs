//! Bates stamping: a number in real, extractable text on every page, running continuously
//! across the input files in order. Inputs are never modified; each output is a new file,
//! and nothing is written unless every input could be stamped.
//!
//! Each page's existing content is wrapped in `q … Q`, so whatever graphics state it leaves
//! behind cannot move or scale the stamp, and the stamp is placed in the visible box (the crop
//! box when there is one) in the page's displayed orientation, whatever its `/Rotate`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};
use serde::Serialize;

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
        format!(
            "{}{:0w$}{}",
            self.prefix,
            n,
            self.suffix,
            w = self.width as usize
        )
    }
}

/// One stamped page, for the page map.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Stamp {
    pub file: String,
    pub output: String,
    pub page: u32,
    pub bates: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BatesError {
    #[error(
        "`{0}` is encrypted; decrypt a copy first (e.g. `qpdf --decrypt IN OUT`) and stamp that"
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
}

/// Widths of Helvetica's printable ASCII characters (per 1000 units of font size), from its
/// AFM metrics, to right-align and centre the stamp exactly.
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];

pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    s.chars()
        .map(|c| {
            let i = c as usize;
            if (32..127).contains(&i) {
                HELVETICA[i - 32] as f64
            } else {
                556.0
            }
        })
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
    // Sources of other kinds are stamped as PDFs of them (`lease.docx` → `lease.pdf`).
    let prepared = crate::sources::pdf::prepare(inputs).map_err(crate::sources::Unreadables)?;
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
        let mut doc = load(pdf)?;
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
            });
            next += 1;
        }
        stamped.push((doc, output.clone()));
    }
    std::fs::create_dir_all(out_dir)
        .map_err(|e| BatesError::Write(out_dir.display().to_string(), e.to_string()))?;
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| {
        for (doc, output) in &mut stamped {
            write_atomically(output, |f| doc.save_to(f).map_err(|e| e.to_string()))?;
            written.push(output.clone());
        }
        let json = serde_json::to_vec_pretty(&map).unwrap_or_default();
        let map_path = out_dir.join("bates-map.json");
        write_atomically(&map_path, |f| {
            std::io::Write::write_all(f, &json).map_err(|e| e.to_string())
        })?;
        Ok(())
    })();
    if let Err(e) = result {
        for p in written {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    Ok(map)
}

/// Writes a file atomically, reporting failure as a write error on that file.
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> Result<(), String>,
) -> Result<(), BatesError> {
    crate::atomic::write_with(path, |f| write(f).map_err(std::io::Error::other))
        .map_err(|e| BatesError::Write(path.display().to_string(), e.to_string()))
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
    if doc.is_encrypted() || doc.was_encrypted() {
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

fn number(o: &Object) -> Option<f64> {
    match o {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(*r as f64),
        _ => None,
    }
}

fn rect(o: Option<Object>) -> Option<[f64; 4]> {
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
    let size = opts.font_size;
    let tw = text_width(text, size);
    let margin = 18.0_f64.min(w / 10.0);
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
    let escaped = text
        .replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)");
    let stamp = format!(
        "Q\nq\nBT\n/LexrunBates {size:.2} Tf\n0 g\n{a} {b} {c} {d} {ux:.2} {uy:.2} Tm\n({escaped}) Tj\nET\nQ\n"
    );
    let open = doc.add_object(Stream::new(dictionary! {}, b"q\n".to_vec()));
    let close = doc.add_object(Stream::new(dictionary! {}, stamp.into_bytes()));
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
