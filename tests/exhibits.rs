//! Exhibits, checked with independent readers. Bates stamping: poppler's `pdftotext` must
//! extract each stamp, on the right page, in the right corner of the page as displayed —
//! including rotated pages, pages with a crop box, and pages whose content leaves its graphics
//! state changed. Binding: page order, slip sheets, bookmarks (read back with `qpdf --json`)
//! and the exhibit index. The test setup (scripts/test) installs poppler-utils and qpdf.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;

use lopdf::{dictionary, Document, Object, Stream};
use support::pdf::{page, pdf, PageSpec};
use support::{lexrun, Lexrun};

/// Stamps `files` with `prefix` into `out`, asserting success.
fn stamp(prefix: &str, out: &Path, files: &[&Path]) {
    let mut args = vec!["bates", "--prefix", prefix, "-o", out.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let o = lexrun(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn tool(name: &str) -> Command {
    let found = Command::new(name).arg("-v").output().is_ok();
    assert!(found, "`{name}` is missing: install it with `apt-get install poppler-utils qpdf` (scripts/test does)");
    Command::new(name)
}

/// A word and its box (xMin, yMin, xMax, yMax; origin top-left).
type Word = (String, f64, f64, f64, f64);

/// Words on each page as pdftotext sees the page displayed: (page width, height, words).
fn words(pdf: &Path) -> Vec<(f64, f64, Vec<Word>)> {
    let out = tool("pdftotext")
        .arg("-bbox")
        .arg(pdf)
        .arg("-")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pdftotext failed on {}",
        pdf.display()
    );
    let html = String::from_utf8_lossy(&out.stdout);
    let attr = |s: &str, name: &str| -> f64 {
        let k = format!("{name}=\"");
        let i = s.find(&k).unwrap() + k.len();
        s[i..s[i..].find('"').unwrap() + i].parse().unwrap()
    };
    let mut pages = Vec::new();
    for chunk in html.split("<page ").skip(1) {
        let (w, h) = (attr(chunk, "width"), attr(chunk, "height"));
        let mut ws = Vec::new();
        for wchunk in chunk.split("<word ").skip(1) {
            let text =
                wchunk[wchunk.find('>').unwrap() + 1..wchunk.find("</word>").unwrap()].to_string();
            ws.push((
                text,
                attr(wchunk, "xMin"),
                attr(wchunk, "yMin"),
                attr(wchunk, "xMax"),
                attr(wchunk, "yMax"),
            ));
        }
        pages.push((w, h, ws));
    }
    pages
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a-lease.pdf");
    let b = dir.path().join("b-letters.pdf");
    fs::write(
        &a,
        pdf(&[
            page("LEASE page one\nPage 1 of 2 - Acme footer"),
            page("LEASE page two"),
        ]),
    )
    .unwrap();
    fs::write(
        &b,
        pdf(&[
            PageSpec {
                text: "LETTER rotated",
                rotate: 90,
                crop: None,
                prelude: "",
            },
            PageSpec {
                text: "LETTER cropped",
                rotate: 0,
                crop: Some([36, 36, 576, 756]),
                prelude: "",
            },
            PageSpec {
                text: "LETTER scaled",
                rotate: 0,
                crop: None,
                prelude: "0.5 0 0 0.5 0 0 cm\n",
            },
            PageSpec {
                text: "LETTER upside",
                rotate: 180,
                crop: None,
                prelude: "",
            },
            PageSpec {
                text: "LETTER turned",
                rotate: 270,
                crop: None,
                prelude: "",
            },
        ]),
    )
    .unwrap();
    (dir, a, b)
}

#[test]
fn stamps_run_across_files_and_are_real_text_in_the_corner() {
    let (dir, a, b) = setup();
    let out = dir.path().join("stamped");
    let before_a = fs::read(&a).unwrap();
    let o = lexrun(&[
        "bates",
        "--prefix",
        "SMITH",
        "--start",
        "101",
        "-o",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(fs::read(&a).unwrap(), before_a, "the input is untouched");

    // pdftotext gives a page's size unrotated but its words as displayed.
    let expected = [
        (
            "a-lease.pdf",
            vec![("SMITH000101", false), ("SMITH000102", false)],
        ),
        (
            "b-letters.pdf",
            vec![
                ("SMITH000103", true),
                ("SMITH000104", false),
                ("SMITH000105", false),
                ("SMITH000106", false),
                ("SMITH000107", true),
            ],
        ),
    ];
    for (name, numbers) in expected {
        let pages = words(&out.join(name));
        assert_eq!(pages.len(), numbers.len(), "{name}");
        for (i, ((w, h, ws), (number, turned))) in pages.iter().zip(&numbers).enumerate() {
            let (w, h) = if *turned { (h, w) } else { (w, h) };
            let stamp = ws
                .iter()
                .find(|x| x.0 == *number)
                .unwrap_or_else(|| panic!("{name} page {}: no `{number}` in {ws:?}", i + 1));
            // Bottom-right of the page as displayed, upright (wider than tall).
            let (x0, y0, x1, y1) = (stamp.1, stamp.2, stamp.3, stamp.4);
            assert!(
                x1 <= w + 0.5 && y1 <= h + 0.5 && x0 >= -0.5 && y0 >= -0.5,
                "{name} p{}: stamp off the page: {stamp:?} on {w}x{h}",
                i + 1
            );
            assert!(
                x0 > w * 0.6 && y0 > h * 0.9,
                "{name} p{}: stamp not bottom-right: {stamp:?} on {w}x{h}",
                i + 1
            );
            assert!(
                x1 - x0 > y1 - y0,
                "{name} p{}: stamp not upright: {stamp:?}",
                i + 1
            );
            // The page's own text is still there.
            assert!(
                ws.iter().any(|x| x.0 == "LEASE" || x.0 == "LETTER"),
                "{name} p{}",
                i + 1
            );
        }
    }
    let map: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("bates-map.json")).unwrap()).unwrap();
    assert_eq!(map.as_array().unwrap().len(), 7);
    assert_eq!(map[2]["bates"], "SMITH000103");
    assert_eq!(map[2]["page"], 1);
    assert!(map[2]["file"].as_str().unwrap().ends_with("b-letters.pdf"));
}

#[test]
fn positions_and_suffix() {
    let (dir, a, _) = setup();
    let out = dir.path().join("top");
    let o = lexrun(&[
        "bates",
        "--prefix",
        "JONES",
        "--width",
        "4",
        "--suffix",
        "-C",
        "--position",
        "top-left",
        "-o",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let pages = words(&out.join("a-lease.pdf"));
    let (w, h, ws) = &pages[0];
    let s = ws
        .iter()
        .find(|x| x.0 == "JONES0001-C")
        .unwrap_or_else(|| panic!("{ws:?}"));
    assert!(s.1 < w * 0.3 && s.4 < h * 0.1, "{s:?}");
}

#[test]
fn bad_inputs_give_clear_errors_and_no_partial_output() {
    let (dir, a, _) = setup();
    let truncated = dir.path().join("truncated.pdf");
    let bytes = fs::read(&a).unwrap();
    fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let out = dir.path().join("out");
    let o = lexrun(&[
        "bates",
        "--prefix",
        "SMITH",
        "-o",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
        truncated.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("truncated.pdf") && err.contains("not a readable PDF"),
        "{err}"
    );
    assert!(
        !out.join("a-lease.pdf").exists(),
        "nothing is written when any input fails"
    );

    let encrypted = dir.path().join("locked.pdf");
    let q = tool("qpdf")
        .args(["--encrypt", "user", "owner", "256", "--"])
        .arg(&a)
        .arg(&encrypted)
        .output()
        .unwrap();
    assert!(q.status.success(), "{}", String::from_utf8_lossy(&q.stderr));
    let o = lexrun(&[
        "bates",
        "--prefix",
        "SMITH",
        "-o",
        out.to_str().unwrap(),
        encrypted.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("locked.pdf") && err.contains("encrypted"),
        "{err}"
    );

    let o = lexrun(&[
        "bates",
        "--prefix",
        "SMITH",
        "-o",
        dir.path().to_str().unwrap(),
        a.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "writing over the input is refused"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("overwrite"));
    let o = lexrun(&[
        "bates",
        "--prefix",
        "SM ITH",
        "-o",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = lexrun(&[
        "bates",
        "--prefix",
        "SMITH",
        "--width",
        "2",
        "--start",
        "99",
        "-o",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "SMITH100 would not fit in 2 digits"
    );
}

#[test]
fn stamped_pages_feed_the_verifier() {
    let (dir, a, b) = setup();
    let out = dir.path().join("stamped");
    stamp("SMITH", &out, &[&a, &b]);
    let draft = dir.path().join("draft.md");
    fs::write(&draft, "The lease (SMITH000001–SMITH000002) and the letters (SMITH000003) are attached; SMITH000099 is not.\n").unwrap();
    let o = lexrun(&[
        "verify",
        "--json",
        "--sources",
        out.to_str().unwrap(),
        draft.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let statuses: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        vec!["supported", "supported", "unsupported"],
        "{v}"
    );
}

fn pdftext(pdf: &Path) -> Vec<String> {
    let out = tool("pdftotext")
        .arg("-layout")
        .arg(pdf)
        .arg("-")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split('\u{000C}')
        .map(str::to_string)
        .collect()
}

#[test]
fn binder_keeps_order_with_slip_sheets_bookmarks_and_an_index() {
    let (dir, a, b) = setup();
    let stamped = dir.path().join("stamped");
    stamp("SMITH", &stamped, &[&a, &b]);
    let binder = dir.path().join("binder/exhibits.pdf");
    let o = lexrun(&[
        "merge",
        "--slip-sheets",
        "--index",
        "--title",
        "Exhibits to the Declaration of Jane Smith",
        "-o",
        binder.to_str().unwrap(),
        stamped.join("a-lease.pdf").to_str().unwrap(),
        stamped.join("b-letters.pdf").to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let pages = pdftext(&binder);
    // Index, slip A, 2 lease pages, slip B, 5 letter pages.
    let text: Vec<&str> = pages
        .iter()
        .map(|p| p.as_str())
        .filter(|p| !p.trim().is_empty())
        .collect();
    assert_eq!(text.len(), 10, "{text:#?}");
    assert!(
        text[0].contains("Exhibits to the Declaration of Jane Smith")
            && text[0].contains("SMITH000001 - SMITH000002"),
        "{}",
        text[0]
    );
    assert!(text[0].contains("SMITH000003 - SMITH000007"), "{}", text[0]);
    assert!(text[1].contains("Exhibit A"));
    assert!(text[2].contains("LEASE page one") && text[2].contains("SMITH000001"));
    assert!(text[4].contains("Exhibit B"));
    assert!(text[9].contains("LETTER turned") && text[9].contains("SMITH000007"));
    // The rotated and cropped pages keep their geometry in the binder.
    let w = words(&binder);
    // Binder page 6 is exhibit B's first page (after the index, slip A, two lease pages, slip B).
    let stamp = w[5]
        .2
        .iter()
        .find(|x| x.0 == "SMITH000003")
        .unwrap_or_else(|| panic!("{:?}", w[5]));
    assert!(
        stamp.1 > 612.0,
        "page 1 of exhibit B is still landscape: {stamp:?}"
    );

    let q = tool("qpdf").arg("--json").arg(&binder).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&q.stdout).unwrap();
    let titles: Vec<&str> = json["outlines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, vec!["Exhibit A: a lease", "Exhibit B: b letters"]);

    let md = fs::read_to_string(dir.path().join("binder/exhibits-index.md")).unwrap();
    assert!(
        md.contains("| A | a lease | SMITH000001–SMITH000002 | 2 | 2 |"),
        "{md}"
    );
    assert!(
        md.contains("| B | b letters | SMITH000003–SMITH000007 | 5 | 5 |"),
        "{md}"
    );
}

#[test]
fn a_bad_exhibit_leaves_no_binder() {
    let (dir, a, _) = setup();
    let broken = dir.path().join("broken.pdf");
    fs::write(&broken, b"%PDF-1.4 not really").unwrap();
    let binder = dir.path().join("binder.pdf");
    let o = lexrun(&[
        "merge",
        "-o",
        binder.to_str().unwrap(),
        a.to_str().unwrap(),
        broken.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("broken.pdf"));
    assert!(!binder.exists());
}

/// A PDF whose only page is a scanned image of `text` (no text layer): rendered with pdftoppm
/// to JPEG, then placed as an image.
fn scanned_pdf(dir: &Path, text: &str) -> PathBuf {
    let src = dir.join("to-scan.pdf");
    fs::write(&src, pdf(&[page(text)])).unwrap();
    let o = tool("pdftoppm")
        .args(["-r", "150", "-jpeg", "-singlefile"])
        .arg(&src)
        .arg(dir.join("scan"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let jpg = fs::read(dir.join("scan.jpg")).unwrap();
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let image = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => 1275, "Height" => 1650,
            "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
        },
        jpg,
    ));
    let content = doc.add_object(Stream::new(
        dictionary! {},
        b"q 612 0 0 792 0 0 cm /Im1 Do Q".to_vec(),
    ));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => content,
        "Resources" => dictionary! { "XObject" => dictionary! { "Im1" => image } },
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
    });
    doc.objects.insert(pages_id, Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![Object::Reference(page)], "Count" => 1 }));
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let out = dir.join("scanned-notice.pdf");
    doc.save(&out).unwrap();
    fs::remove_file(&src).unwrap();
    out
}

#[test]
fn pages_without_a_text_layer_are_read_by_ocr_once() {
    let dir = tempfile::tempdir().unwrap();
    let scan = scanned_pdf(
        dir.path(),
        "The tenant gave written notice on March 4, 2024.\nSMITH000201",
    );
    assert!(
        pdftext(&scan).concat().trim().is_empty(),
        "the scan has no text layer"
    );
    let cache = dir.path().join("cache");
    let run = |extra: &[&str]| {
        Lexrun::new()
            .env("LEXRUN_CACHE", &cache)
            .arg("text")
            .arg("--json")
            .args(extra)
            .arg(&scan)
            .output()
    };
    let o = run(&[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["from"], "ocr");
    // An image file is read the same way.
    let o = Lexrun::new()
        .args(["text", "--json", "--no-cache"])
        .arg(dir.path().join("scan.jpg"))
        .output();
    let img: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        img[0]["text"].as_str().unwrap().contains("written notice"),
        "{img}"
    );
    let text = v[0]["text"].as_str().unwrap();
    assert!(
        text.contains("written notice") && text.contains("March 4, 2024"),
        "{text}"
    );
    assert_eq!(v[0]["bates"], "SMITH000201");
    let cached: Vec<_> = fs::read_dir(cache.join("text")).unwrap().collect();
    assert_eq!(cached.len(), 1, "the text is cached by the file's hash");
    // Served from the cache: tesseract is not run again (a missing one would fail).
    let o = Lexrun::new()
        .env("LEXRUN_CACHE", &cache)
        .env("LEXRUN_TESSERACT", "/nonexistent/tesseract")
        .args(["text", "--json"])
        .arg(&scan)
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Once stamped, the scan's text layer holds only the stamp: it is still read by OCR, and the
    // stamp stays its Bates number.
    let stamped = dir.path().join("stamped");
    stamp("JONES", &stamped, &[&scan]);
    let o = Lexrun::new()
        .env("LEXRUN_CACHE", &cache)
        .args(["text", "--json"])
        .arg(stamped.join("scanned-notice.pdf"))
        .output();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["from"], "ocr");
    assert!(v[0]["text"].as_str().unwrap().contains("written notice"));
    assert_eq!(v[0]["bates"], "JONES000001");
    let draft2 = dir.path().join("d2.md");
    fs::write(
        &draft2,
        "Notice was given on March 4, 2024 (JONES000001).\n",
    )
    .unwrap();
    let o = Lexrun::new()
        .env("LEXRUN_CACHE", &cache)
        .args(["verify", "--sources"])
        .arg(&stamped)
        .arg(&draft2)
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "the page map beside the stamped copies is not a source: {}",
        String::from_utf8_lossy(&o.stdout)
    );

    // The verifier reads the scan through OCR too.
    let draft = dir.path().join("d.md");
    fs::write(&draft, "Notice was given on March 4, 2024 (SMITH000201).\n").unwrap();
    let o = Lexrun::new()
        .env("LEXRUN_CACHE", &cache)
        .args(["verify", "--sources"])
        .arg(&scan)
        .arg(&draft)
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn missing_ocr_tools_give_the_install_command() {
    let dir = tempfile::tempdir().unwrap();
    let scan = scanned_pdf(dir.path(), "A scanned page");
    let o = Lexrun::new()
        .env("LEXRUN_TESSERACT", "/nonexistent/tesseract")
        .args(["text", "--no-cache"])
        .arg(&scan)
        .output();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("apt-get install tesseract-ocr") && err.contains("scanned-notice.pdf"),
        "{err}"
    );
}

/// Grey levels of a page rendered with pdftoppm, as (width, height, pixels row by row).
fn render_gray(pdf: &Path, page: u32, dpi: u32) -> (usize, usize, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("p");
    let n = page.to_string();
    let o = tool("pdftoppm")
        .args([
            "-gray",
            "-r",
            &dpi.to_string(),
            "-f",
            &n,
            "-l",
            &n,
            "-singlefile",
        ])
        .arg(pdf)
        .arg(&base)
        .output()
        .unwrap();
    assert!(o.status.success());
    let pgm = fs::read(base.with_extension("pgm")).unwrap();
    // P5 header: magic, width, height, maxval, each followed by white space.
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while pgm[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while !pgm[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(String::from_utf8_lossy(&pgm[start..i]).into_owned());
    }
    let (w, h): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    (w, h, pgm[i + 1..].to_vec())
}

#[test]
fn the_stamp_is_drawn_in_the_corner_and_nothing_else_moves() {
    let (dir, a, _) = setup();
    let out = dir.path().join("stamped");
    stamp("SMITH", &out, &[&a]);
    let (w, h, before) = render_gray(&a, 1, 36);
    let (w2, h2, after) = render_gray(&out.join("a-lease.pdf"), 1, 36);
    assert_eq!((w, h), (w2, h2));
    // Every changed pixel is in the bottom-right corner, and some are.
    let mut changed = 0;
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if before[i].abs_diff(after[i]) > 40 {
                changed += 1;
                assert!(
                    x > w * 6 / 10 && y > h * 9 / 10,
                    "pixel ({x}, {y}) of {w}x{h} changed outside the stamp's corner"
                );
            }
        }
    }
    assert!(changed > 10, "the stamp is drawn ({changed} pixels)");
}

fn qpdf_pages(p: &Path) -> String {
    let o = Command::new("qpdf")
        .arg("--show-npages")
        .arg(p)
        .output()
        .expect("qpdf is installed (scripts/install-tools)");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn page_texts(p: &Path) -> Vec<String> {
    let o = Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(p)
        .arg("-")
        .output()
        .unwrap();
    let mut pages: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .split('\u{000C}')
        .map(|t| t.split_whitespace().collect())
        .collect();
    pages.pop();
    pages
}

fn bates_one(input: &Path, out: &Path) -> std::process::Output {
    lexrun(&[
        "bates",
        "--prefix",
        "RFH",
        "--out",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ])
}

#[test]
fn odd_and_damaged_pdfs_are_stamped_on_every_page_qpdf_counts() {
    use support::pdf::{raw_pdf, stream};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string();
    let page = |parent: u32, media: &str, content: u32| {
        format!("<< /Type /Page /Parent {parent} 0 R /MediaBox [{media}] /Contents {content} 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
    };
    let check = |name: &str, bytes: Vec<u8>| {
        let input = d.join(name);
        fs::write(&input, bytes).unwrap();
        let out = d.join(format!("out-{name}"));
        let o = bates_one(&input, &out);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stamped = out.join(name);
        let want = qpdf_pages(&input);
        assert_eq!(qpdf_pages(&stamped), want, "{name}");
        let texts = page_texts(&stamped);
        for i in 0..want.parse::<usize>().unwrap() {
            let stamp = format!("RFH{:06}", i + 1);
            assert!(
                texts.get(i).is_some_and(|t| t.contains(&stamp)),
                "{name}: no {stamp} on page {}: {texts:?}",
                i + 1
            );
        }
        (o, stamped)
    };

    // A page 3.84 points wide: the stamp is shrunk to fit inside it.
    let tiny = raw_pdf(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".into(),
        page(2, "0 0 3.84 3.84", 4),
        stream("0 0 m 3 3 l S"),
        font.clone(),
    ]);
    let (_, stamped) = check("tiny.pdf", tiny);
    let o = Command::new("pdftotext")
        .args(["-bbox"])
        .arg(&stamped)
        .arg("-")
        .output()
        .unwrap();
    let bbox = String::from_utf8_lossy(&o.stdout).to_string();
    let word = bbox
        .lines()
        .find(|l| l.contains("RFH000001"))
        .unwrap_or_else(|| panic!("{bbox}"));
    let num = |key: &str| -> f64 {
        let at = word.find(&format!("{key}=\"")).unwrap() + key.len() + 2;
        word[at..].split('"').next().unwrap().parse().unwrap()
    };
    assert!(num("xMin") >= 0.0 && num("xMax") <= 3.84, "{word}");
    assert!(num("yMin") >= 0.0 && num("yMax") <= 3.84, "{word}");

    // A page tree with a loop (2 → 3 → 4 → 3): counted as qpdf counts it, and said so.
    let looped = raw_pdf(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        "<< /Type /Pages /Kids [6 0 R 3 0 R] /Count 2 /MediaBox [0 0 595 842] >>".into(),
        "<< /Type /Pages /Kids [4 0 R] /Count 1 >>".into(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".into(),
        font.clone(),
        page(2, "0 0 595 842", 7),
        stream("BT /F1 22 Tf 30 800 Td (Pages loop) Tj ET"),
    ]);
    let (o, _) = check("loop.pdf", looped);
    assert!(stderr_of(&o).contains("loop"), "{}", stderr_of(&o));

    // Encrypted with an owner password only: stamped as every reader opens it.
    let plain = d.join("plain.pdf");
    fs::write(&plain, pdf(&[page_spec("Owner password only.")])).unwrap();
    let owner = d.join("owner.pdf");
    let q = Command::new("qpdf")
        .args(["--encrypt", "", "owner-secret", "256", "--"])
        .arg(&plain)
        .arg(&owner)
        .status()
        .unwrap();
    assert!(q.success());
    check("owner.pdf", fs::read(&owner).unwrap());

    // A broken cross-reference table: rebuilt by qpdf first, and said so.
    let mut broken = raw_pdf(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".into(),
        page(2, "0 0 612 792", 4),
        stream("BT /F1 12 Tf 72 700 Td (Broken xref) Tj ET"),
        font.clone(),
    ]);
    let at = broken.windows(9).rposition(|w| w == b"startxref").unwrap();
    broken.truncate(at);
    broken.extend(b"startxref\n999999\n%%EOF\n");
    let (o, _) = check("broken.pdf", broken);
    assert!(stderr_of(&o).contains("qpdf"), "{}", stderr_of(&o));

    // One page object listed 100,000 times: each place stamped, with work bounded by what
    // the file holds.
    let kids = "3 0 R ".repeat(100_000);
    let shared = raw_pdf(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        format!("<< /Type /Pages /Kids [{kids}] /Count 100000 >>"),
        page(2, "0 0 200 200", 4),
        stream("BT /F1 12 Tf 20 100 Td (Shared) Tj ET"),
        font,
    ]);
    check("shared.pdf", shared);
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn page_spec(text: &str) -> PageSpec<'_> {
    page(text)
}
