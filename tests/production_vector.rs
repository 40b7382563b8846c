//! Productions of PDFs with a text layer: a page whose every glyph can be vouched for is
//! produced as itself, its redacted glyphs taken out of the content stream and the text after
//! them left where it was; a page with an image, or a font lexrun cannot measure, is
//! rasterised. Checked from outside with poppler (`pdftotext`, `pdfimages`) and qpdf.

use std::fs;
use std::path::Path;
use std::process::Command;

use lopdf::{dictionary, Document, Object, Stream};

use crate::support;
use support::{stderr, Lexrun};

const SSNS: &[&str] = &["123-45-6789", "234-56-7890", "345-67-8901", "456-78-9012"];

/// Page 1 shows its text four ways, in standard fonts without widths (with a quote the
/// standard encoding makes curly) (`Tj`, a kerned `TJ` that splits a number, `'` with word
/// spacing, marked content with an `/Alt` that repeats a number); page 2 draws an image;
/// page 3 uses a font whose widths lexrun does not know; page 4 a composite font.
const PAGE1: &str = "BT /F1 12 Tf 72 700 Td (The tenant's SSN 123-45-6789 signed.) Tj ET\n\
BT /F1 12 Tf 72 680 Td [(Second SSN 234-5) -30 (6-7890 kerned.)] TJ ET\n\
BT /F2 10 Tf 14 TL 72 660 Td 3 Tw (Courier line with spacing.) Tj (Third 345-67-8901 follows) ' ET\n\
/Span <</Alt (456-78-9012)>> BDC BT /F1 12 Tf 72 600 Td (Fourth SSN 456-78-9012 marked.) Tj ET EMC\n";
const PAGE2: &str = "q 100 0 0 100 300 300 cm /Im1 Do Q\n\
BT /F1 12 Tf 72 700 Td (Scanned SSN 123-45-6789 here.) Tj ET\n";
const PAGE3: &str = "BT /F3 12 Tf 72 700 Td (Bold SSN 234-56-7890 here.) Tj ET\n";

fn page4() -> Vec<u8> {
    let mut c = b"BT /F4 12 Tf 72 700 Td <".to_vec();
    for ch in "Wide SSN 345-67-8901 done.".chars() {
        c.extend(format!("{:04X}", ch as u32).bytes());
    }
    c.extend_from_slice(b"> Tj ET\n");
    c
}

fn matter_pdf(path: &Path) {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let times = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Times-Roman" },
    );
    let courier = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" },
    );
    let bold = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica-Bold" },
    );
    let cmap = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
1 beginbfrange <0020> <007E> <0020> endbfrange\nendcmap end end\n";
    let to_unicode = doc.add_object(Stream::new(dictionary! {}, cmap.to_vec()));
    let cid = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "Arial",
        "CIDSystemInfo" => dictionary! { "Registry" => Object::string_literal("Adobe"),
            "Ordering" => Object::string_literal("Identity"), "Supplement" => 0 },
        "DW" => 600,
    });
    let wide = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "Arial",
        "Encoding" => "Identity-H", "DescendantFonts" => vec![cid.into()],
        "ToUnicode" => to_unicode,
    });
    let image = doc.add_object(Stream::new(
        dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 1, "Height" => 1,
        "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8 },
        vec![128],
    ));
    let resources = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => times, "F2" => courier, "F3" => bold, "F4" => wide },
        "XObject" => dictionary! { "Im1" => image },
    });
    let mut kids = Vec::new();
    for content in [
        PAGE1.as_bytes().to_vec(),
        PAGE2.as_bytes().to_vec(),
        PAGE3.as_bytes().to_vec(),
        page4(),
    ] {
        let content = doc.add_object(Stream::new(dictionary! {}, content));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content,
            "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        });
        kids.push(Object::from(page));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => 4 }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    doc.save(path).unwrap();
}

const WORKFLOW: &str = r#"workflow w "Vector pages"

matter "m"

sources s {
  files "jo/**"
}

production vol {
  reads  s
  volume "VOL001"
  bates  "JO" start 1 width 5
  images pdf
  legend    c "CONFIDENTIAL"
  designate c "**"
  redact    ssn as "PII"
}
"#;

fn tool(args: &[&str]) -> String {
    let o = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each word's left edge on page `p` of `pdf`, as poppler reads it.
fn word_x(pdf: &Path, p: usize, word: &str) -> f64 {
    let n = p.to_string();
    let html = tool(&[
        "pdftotext",
        "-bbox",
        "-f",
        &n,
        "-l",
        &n,
        pdf.to_str().unwrap(),
        "-",
    ]);
    let line = html
        .lines()
        .find(|l| l.contains(&format!(">{word}</word>")))
        .unwrap_or_else(|| panic!("no `{word}` on page {p} of {}:\n{html}", pdf.display()));
    let at = line.find("xMin=\"").unwrap() + 6;
    line[at..at + line[at..].find('"').unwrap()]
        .parse()
        .unwrap()
}

fn images(pdf: &Path) -> usize {
    tool(&["pdfimages", "-list", pdf.to_str().unwrap()])
        .lines()
        .skip(2)
        .count()
}

#[test]
fn vector_pages_lose_only_their_redacted_glyphs_and_others_are_rasterised() {
    for t in ["pdftotext", "pdfimages", "qpdf"] {
        assert!(
            Command::new(t).arg("-v").output().is_ok(),
            "`{t}` is missing: run scripts/install-tools"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("m/jo")).unwrap();
    let input = dir.path().join("m/jo/exhibit.pdf");
    matter_pdf(&input);
    fs::write(dir.path().join("w.lex"), WORKFLOW).unwrap();
    let out = dir.path().join("out");
    let o = Lexrun::new()
        .current_dir(dir.path())
        .args(["w.lex", "--out", out.to_str().unwrap()])
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.join("VOL001");
    let page = |n: usize| vol.join(format!("IMAGES/JO0000{n}.pdf"));

    // Page 1 is produced as itself: no image, its text kept, every number gone.
    assert_eq!(images(&page(1)), 0, "page 1 was rasterised");
    let text = tool(&["pdftotext", page(1).to_str().unwrap(), "-"]);
    for kept in [
        "signed.", "kerned.", "spacing.", "follows", "marked.", "JO00001",
    ] {
        assert!(
            text.contains(kept),
            "`{kept}` is missing from page 1:\n{text}"
        );
    }
    assert_eq!(text.matches("REDACTED").count(), 4, "{text}");
    // The text after each redaction is where it was.
    for (word, p) in [
        ("signed.", 1),
        ("kerned.", 1),
        ("follows", 1),
        ("marked.", 1),
    ] {
        let (before, after) = (word_x(&input, p, word), word_x(&page(1), 1, word));
        assert!(
            (before - after).abs() < 0.05,
            "`{word}` moved: {before} → {after}"
        );
    }
    // Page 2 (an image) and page 3 (a font without known widths) are rasterised; page 4's
    // composite font is read through its ToUnicode map and produced as itself.
    assert_eq!(images(&page(2)), 1);
    assert_eq!(images(&page(3)), 1);
    assert_eq!(images(&page(4)), 0);
    let wide = tool(&["pdftotext", page(4).to_str().unwrap(), "-"]);
    assert!(
        wide.contains("Wide SSN") && wide.contains("done."),
        "{wide}"
    );

    // No number anywhere: not in any page's text, nor in any byte of any file once qpdf
    // has uncompressed it.
    let scratch = dir.path().join("qdf.pdf");
    for n in 1..=4 {
        let p = page(n);
        tool(&["qpdf", "--check", p.to_str().unwrap()]);
        tool(&[
            "qpdf",
            "--qdf",
            "--object-streams=disable",
            p.to_str().unwrap(),
            scratch.to_str().unwrap(),
        ]);
        let bytes = String::from_utf8_lossy(&fs::read(&scratch).unwrap()).into_owned();
        let text = tool(&["pdftotext", p.to_str().unwrap(), "-"]);
        for ssn in SSNS {
            let digits: String = ssn.chars().filter(char::is_ascii_digit).collect();
            assert!(!bytes.contains(ssn), "{ssn} left in the bytes of page {n}");
            let squashed: String = text.chars().filter(char::is_ascii_digit).collect();
            assert!(
                !squashed.contains(&digits),
                "{ssn}'s digits left on page {n}"
            );
        }
        // Nor a piece of the kerned number, nor the marked content's /Alt.
        assert!(!bytes.contains("(234-5)") && !bytes.contains("6-7890"));
        assert!(!bytes.contains("/Alt"));
    }
    let texts: String = fs::read_dir(vol.join("TEXT"))
        .unwrap()
        .flatten()
        .map(|e| fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        texts.contains("tenant’s SSN [REDACTED – PII] signed."),
        "{texts}"
    );
    for ssn in SSNS {
        assert!(!texts.contains(ssn));
    }
}
