//! Binding exhibits into one PDF: the exhibits in order, an optional slip sheet ("Exhibit A")
//! before each, a bookmark per exhibit, and an index of exhibit letters, descriptions, Bates
//! ranges and page counts (Markdown beside the binder, and as the binder's first page).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lopdf::{dictionary, Document, Object, ObjectId, Stream};
use serde::Serialize;

use super::bates::{inherited, load, text_width, write_atomically, BatesError};

#[derive(Clone, Debug)]
pub struct Options {
    pub slip_sheets: bool,
    pub bookmarks: bool,
    pub index_page: bool,
    pub title: String,
}

/// One exhibit in the index.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Entry {
    pub letter: String,
    pub description: String,
    pub file: String,
    pub pages: u32,
    pub first_bates: Option<String>,
    pub last_bates: Option<String>,
    /// The exhibit's first page in the binder (1-based).
    pub binder_page: u32,
}

/// `A`…`Z`, then `AA`, `AB`, … as courts letter exhibits.
pub fn letter(i: usize) -> String {
    let mut n = i + 1;
    let mut s = Vec::new();
    while n > 0 {
        n -= 1;
        s.push((b'A' + (n % 26) as u8) as char);
        n /= 26;
    }
    s.iter().rev().collect()
}

fn describe(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '_');
    stem.replace(['-', '_'], " ")
}

fn text_page(doc: &mut Document, font: ObjectId, lines: &[(f64, f64, f64, String)]) -> ObjectId {
    let mut content = Vec::new();
    for (size, x, y, text) in lines {
        // Helvetica's WinAnsi bytes: a name with `é` prints as `é`, not mojibake.
        content.extend_from_slice(format!("BT /F1 {size} Tf {x:.1} {y:.1} Td (").as_bytes());
        content.extend_from_slice(&super::winansi::literal_lossy(text));
        content.extend_from_slice(b") Tj ET\n");
    }
    let content = doc.add_object(Stream::new(dictionary! {}, content));
    doc.add_object(dictionary! {
        "Type" => "Page",
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Contents" => content,
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
    })
}

/// An input is never an output: the binder, or its index beside it, written over an exhibit
/// would destroy it. Compared by file identity, so another spelling of the path (`./a.pdf`, a
/// link) is caught too.
fn refuse_overwriting_inputs(exhibits: &[PathBuf], output: &Path) -> Result<(), BatesError> {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let index = index_path(output);
    for out in [output, index.as_path()] {
        let Some(o) = id(out) else { continue };
        if exhibits.iter().any(|e| id(e) == Some(o)) {
            return Err(BatesError::InputIsOutput(out.display().to_string()));
        }
    }
    Ok(())
}

/// Merges `exhibits` into `output`; writes `<output stem>-index.md` beside it. Nothing is
/// written unless every exhibit could be read.
pub fn merge(
    exhibits: &[PathBuf],
    output: &Path,
    opts: &Options,
) -> Result<Vec<Entry>, BatesError> {
    refuse_overwriting_inputs(exhibits, output)?;
    let mut binder = Document::with_version("1.7");
    let pages_id = binder.new_object_id();
    let font = binder.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding",
    });
    let mut kids: Vec<ObjectId> = Vec::new();
    let mut entries = Vec::new();
    let mut firsts: Vec<ObjectId> = Vec::new();
    // The index page, when wanted, is page 1; it is written last, once the ranges are known.
    if opts.index_page {
        kids.push((0, 0));
    }
    // Sources of other kinds are bound as PDFs of them.
    let prepared =
        crate::sources::as_pdf::prepare(exhibits).map_err(crate::sources::Unreadables)?;
    for (i, (path, pdf)) in exhibits.iter().zip(&prepared.pdfs).enumerate() {
        let shown = path.display().to_string();
        let (fixed, stamps) = take_in(&mut binder, pdf, &shown)?;
        let letter = letter(i);
        if opts.slip_sheets {
            let label = format!("Exhibit {letter}");
            let x = (612.0 - text_width(&label, 40.0)) / 2.0;
            let slip = text_page(&mut binder, font, &[(40.0, x, 420.0, label)]);
            kids.push(slip);
        }
        let binder_page = kids.len() as u32 + 1;
        let fixed_len = fixed.len();
        for (p, attrs) in fixed {
            if let Ok(d) = binder.get_dictionary_mut(p) {
                for (k, v) in attrs {
                    d.set(k, v);
                }
                d.set("Parent", pages_id);
            }
            kids.push(p);
        }
        firsts.push(if opts.slip_sheets {
            kids[binder_page as usize - 2]
        } else {
            kids[binder_page as usize - 1]
        });
        entries.push(Entry {
            letter,
            description: describe(path),
            file: shown,
            pages: fixed_len as u32,
            first_bates: stamps.first().cloned().flatten(),
            last_bates: stamps.last().cloned().flatten(),
            binder_page: binder_page - u32::from(opts.slip_sheets),
        });
    }
    if opts.index_page {
        let lines = index_lines(&opts.title, &entries);
        let page = text_page(&mut binder, font, &lines);
        kids[0] = page;
    }
    for k in &kids {
        if let Ok(d) = binder.get_dictionary_mut(*k) {
            d.set("Parent", pages_id);
        }
    }
    let count = kids.len() as i64;
    binder.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids.iter().map(|k| Object::Reference(*k)).collect::<Vec<_>>(),
            "Count" => count,
        }),
    );
    let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
    if opts.bookmarks && !entries.is_empty() {
        let outlines = bookmarks(&mut binder, &entries, &firsts);
        catalog.set("Outlines", outlines);
        catalog.set("PageMode", "UseOutlines");
    }
    let catalog = binder.add_object(catalog);
    binder.trailer.set("Root", catalog);
    binder.prune_objects();

    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| BatesError::Write(dir.display().to_string(), e.to_string()))?;
    }
    write_atomically(output, |f| binder.save_to(f).map_err(|e| e.to_string()))?;
    let md = index_markdown(&opts.title, &entries);
    let md_path = index_path(output);
    write_atomically(&md_path, |f| {
        std::io::Write::write_all(f, md.as_bytes()).map_err(|e| e.to_string())
    })?;
    Ok(entries)
}

/// Where the binder's index is written: `<output stem>-index.md` beside it.
fn index_path(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!("{stem}-index.md"))
}

/// Page attributes to set on a page of the binder.
type Attrs = Vec<(Vec<u8>, Object)>;

/// The Bates stamp each page of an exhibit shows, if any.
type Stamps = Vec<Option<String>>;

/// Moves the objects of one exhibit's PDF into the binder: its pages, each with the
/// attributes it inherited from its old page tree (to be set on the page itself), and the
/// Bates stamp each page shows.
fn take_in(
    binder: &mut Document,
    pdf: &Path,
    shown: &str,
) -> Result<(Vec<(ObjectId, Attrs)>, Stamps), BatesError> {
    let mut doc = load(pdf)?;
    doc.renumber_objects_with(binder.max_id + 1);
    let pages: Vec<ObjectId> = doc.get_pages().into_values().collect();
    if pages.is_empty() {
        return Err(BatesError::NoPages(shown.to_string()));
    }
    // Attributes a page inherits from its old page tree move onto the page itself.
    let mut fixed = Vec::new();
    for p in &pages {
        let mut attrs = Vec::new();
        for key in [b"MediaBox".as_slice(), b"CropBox", b"Resources", b"Rotate"] {
            if let Some(v) = inherited(&doc, *p, key) {
                attrs.push((key.to_vec(), v));
            }
        }
        fixed.push((*p, attrs));
    }
    let numbers: Vec<u32> = doc.get_pages().into_keys().collect();
    let stamps: Vec<Option<String>> = numbers
        .iter()
        .map(|n| {
            doc.extract_text(&[*n])
                .ok()
                .and_then(|t| crate::sources::stamp_of(&t))
        })
        .collect();
    binder.max_id = doc.max_id;
    for (id, obj) in std::mem::take(&mut doc.objects) {
        binder.objects.insert(id, obj);
    }
    Ok((fixed, stamps))
}

/// The binder's bookmarks: one per exhibit, to its first page (its slip sheet, if any);
/// the outline's root.
fn bookmarks(binder: &mut Document, entries: &[Entry], firsts: &[ObjectId]) -> ObjectId {
    let outlines = binder.new_object_id();
    let ids: Vec<ObjectId> = entries.iter().map(|_| binder.new_object_id()).collect();
    for (i, e) in entries.iter().enumerate() {
        let mut item = dictionary! {
            "Title" => Object::string_literal(format!("Exhibit {}: {}", e.letter, e.description)),
            "Parent" => outlines,
            "Dest" => vec![Object::Reference(firsts[i]), "Fit".into()],
        };
        if i > 0 {
            item.set("Prev", ids[i - 1]);
        }
        if i + 1 < ids.len() {
            item.set("Next", ids[i + 1]);
        }
        binder.objects.insert(ids[i], Object::Dictionary(item));
    }
    binder.objects.insert(
        outlines,
        Object::Dictionary(dictionary! {
            "Type" => "Outlines", "First" => ids[0], "Last" => ids[ids.len() - 1], "Count" => ids.len() as i64,
        }),
    );
    outlines
}

/// The index page's lines: (font size, x, y, text), one column per field.
fn index_lines(title: &str, entries: &[Entry]) -> Vec<(f64, f64, f64, String)> {
    let columns = [72.0, 130.0, 330.0, 380.0];
    let mut lines = vec![(16.0, 72.0, 720.0, title.to_string())];
    for (x, head) in columns
        .iter()
        .zip(["Exhibit", "Bates range", "Pages", "Description"])
    {
        lines.push((11.0, *x, 690.0, head.to_string()));
    }
    for (i, e) in entries.iter().enumerate() {
        let range = match (&e.first_bates, &e.last_bates) {
            (Some(a), Some(b)) if a != b => format!("{a} - {b}"),
            (Some(a), _) => a.clone(),
            _ => "not stamped".into(),
        };
        let y = 670.0 - 16.0 * i as f64;
        let cells = [
            e.letter.clone(),
            range,
            e.pages.to_string(),
            e.description.clone(),
        ];
        for (x, cell) in columns.iter().zip(cells) {
            lines.push((10.0, *x, y, cell));
        }
    }
    lines
}

/// The exhibit index alone, as a one-page PDF.
pub fn index_pdf(title: &str, entries: &[Entry], output: &Path) -> Result<(), BatesError> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding",
    });
    let page = text_page(&mut doc, font, &index_lines(title, entries));
    if let Ok(d) = doc.get_dictionary_mut(page) {
        d.set("Parent", pages_id);
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![Object::Reference(page)], "Count" => 1 }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    write_atomically(output, |f| doc.save_to(f).map_err(|e| e.to_string()))
}

/// The exhibit index as Markdown.
pub fn index_markdown(title: &str, entries: &[Entry]) -> String {
    let mut s = format!("# {title}\n\n| Exhibit | Description | Bates range | Pages | Binder page |\n|---|---|---|---|---|\n");
    for e in entries {
        let range = match (&e.first_bates, &e.last_bates) {
            (Some(a), Some(b)) if a != b => format!("{a}–{b}"),
            (Some(a), _) => a.clone(),
            _ => "not stamped".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {range} | {} | {} |",
            e.letter,
            e.description.replace('|', "\\|"),
            e.pages,
            e.binder_page
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::letter;

    #[test]
    fn exhibit_letters_run_past_z() {
        assert_eq!(letter(0), "A");
        assert_eq!(letter(25), "Z");
        assert_eq!(letter(26), "AA");
        assert_eq!(letter(27), "AB");
    }
}
