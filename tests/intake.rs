//! Every kind of source a client sends, read the same way by a model stage, `verify`, the
//! intake guard and the exhibits tools. The files are made at test time by the real tools:
//! LibreOffice writes the Word, OpenDocument and Excel files, Python's `email` package the
//! messages, and poppler renders the photos that tesseract reads. A missing tool fails the
//! test with the command that installs it.

mod support;
use support::{fresh_store, lexrun, stderr, Lexrun};

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::servers::{Answer, Fake, Speaks};

fn tool(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| panic!("`{name}` is not installed: run scripts/install-tools"))
}

fn run(cmd: &mut Command) {
    let o = cmd.output().expect("the tool starts");
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// LibreOffice converts `input` to `format` (an extension) in `input`'s folder.
fn soffice(input: &Path, format: &str) -> PathBuf {
    let dir = input.parent().unwrap();
    let profile = tempfile::tempdir().unwrap();
    run(Command::new(tool("soffice"))
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.path().display()
        ))
        .args(["--headless", "--convert-to", format, "--outdir"])
        .arg(dir)
        .arg(input));
    let out = input.with_extension(format);
    assert!(out.is_file(), "LibreOffice wrote no {}", out.display());
    out
}

const FODT_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:automatic-styles><style:style style:name="PB" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style></office:automatic-styles>
<office:body><office:text>"#;

/// A two-page notice: a table on page 1, the due date (with a footnote) on page 2.
fn notice_fodt(dir: &Path, name: &str) -> PathBuf {
    let body = r#"<text:p>Notice to quit served on the tenant of Flat 2.</text:p>
<table:table table:name="T"><table:table-column table:number-columns-repeated="2"/><table:table-row><table:table-cell office:value-type="string"><text:p>Monthly rent</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>$1,250.00</text:p></table:table-cell></table:table-row></table:table>
<text:p text:style-name="PB">The rent fell due on March 1, 2024 and was not paid.<text:note text:id="n1" text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>As the landlord's ledger shows.</text:p></text:note-body></text:note></text:p>
</office:text></office:body></office:document>"#;
    let p = dir.join(format!("{name}.fodt"));
    fs::write(&p, format!("{FODT_HEAD}{body}")).unwrap();
    p
}

/// A photo of a typed notice at `dpi`: typed by LibreOffice, photographed by pdftoppm.
fn photo(dir: &Path, name: &str, dpi: u32, jpeg: bool) -> PathBuf {
    let work = tempfile::tempdir().unwrap();
    let txt = work.path().join("photo.txt");
    fs::write(
        &txt,
        "NOTICE TO QUIT\n\nRent of $1,250.00 was due on March 1, 2024.\n",
    )
    .unwrap();
    let pdf = soffice(&txt, "pdf");
    let base = dir.join(name);
    run(Command::new(tool("pdftoppm"))
        .args(["-r", &dpi.to_string(), "-singlefile", "-gray"])
        .arg(if jpeg { "-jpeg" } else { "-png" })
        .arg(&pdf)
        .arg(&base));
    base.with_extension(if jpeg { "jpg" } else { "png" })
}

/// An email forwarding a message that carries a Word invoice, with an HTML body and a photo
/// attached, written by Python's `email` package.
fn email(dir: &Path, docx: &Path, png: &Path) -> PathBuf {
    let out = dir.join("letter.eml");
    let script = r#"
import sys
from email.message import EmailMessage
from email import policy
out, docx, png = sys.argv[1:4]
inner = EmailMessage()
inner['From'] = 'Landlord <landlord@example.com>'
inner['To'] = 'tenant@example.com'
inner['Subject'] = 'Invoice'
inner['Date'] = 'Mon, 04 Mar 2024 09:00:00 +0000'
inner.set_content('Please find the invoice attached.')
inner.add_attachment(open(docx, 'rb').read(), maintype='application',
    subtype='vnd.openxmlformats-officedocument.wordprocessingml.document', filename='invoice.docx')
outer = EmailMessage()
outer['From'] = 'Ann Lee <ann@example.com>'
outer['To'] = 'counsel@example.com'
outer['Subject'] = 'Fwd: Invoice'
outer['Date'] = 'Tue, 05 Mar 2024 10:00:00 +0000'
outer.add_alternative('<html><body><p>See <b>below</b> &amp; the photo of the door.</p></body></html>', subtype='html')
outer.add_attachment(inner)
outer.add_attachment(open(png, 'rb').read(), maintype='image', subtype='png', filename='door.png')
open(out, 'wb').write(outer.as_bytes(policy=policy.SMTP))
"#;
    run(Command::new(tool("python3"))
        .arg("-c")
        .arg(script)
        .arg(&out)
        .arg(docx)
        .arg(png));
    out
}

/// `lexrun text --json` over files: (file, page, text) per page.
fn text_of(files: &[&Path]) -> Vec<(String, u64, String)> {
    let mut args = vec!["text".to_string(), "--json".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = lexrun(&refs);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["file"].as_str().unwrap().to_string(),
                p["page"].as_u64().unwrap(),
                p["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pages_of<'a>(all: &'a [(String, u64, String)], file: &str) -> Vec<&'a str> {
    all.iter()
        .filter(|(f, _, _)| f.ends_with(file))
        .map(|(_, _, t)| t.as_str())
        .collect()
}

#[test]
fn every_kind_of_file_reads_as_pages_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fodt = notice_fodt(d, "notice");
    let docx = soffice(&fodt, "docx");
    let odt = soffice(&fodt, "odt");
    let csv = d.join("payments.csv");
    let mut rows = String::from("Date,Amount,Paid by\n");
    for i in 1..=60 {
        rows.push_str(&format!(
            "2024-01-{:02},\"$1,{i:03}.00\",Ann Lee\n",
            i % 28 + 1
        ));
    }
    fs::write(&csv, &rows).unwrap();
    let xlsx = soffice(&csv, "xlsx");
    let ods = soffice(&csv, "ods");
    let html = d.join("portal.html");
    fs::write(
        &html,
        "<!DOCTYPE html><html><head><title>Portal</title><script>x()</script></head><body><h1>Tenant portal</h1><p>Balance owed:&nbsp;<b>$2,500.00</b></p></body></html>",
    )
    .unwrap();
    let p150 = photo(d, "door-150", 150, false);
    let p300 = photo(d, "door-300", 300, false);
    let jpg = photo(d, "door-200", 200, true);
    let eml = email(d, &docx, &p300);
    // A Word file named as text is read as Word.
    let renamed = d.join("notes.txt");
    fs::copy(&docx, &renamed).unwrap();

    let all = text_of(&[
        &docx, &odt, &xlsx, &ods, &csv, &html, &p150, &p300, &jpg, &eml, &renamed,
    ]);
    let word = pages_of(&all, "notice.docx");
    assert_eq!(word.len(), 2, "{word:#?}");
    assert!(word[0].contains("Monthly rent | $1,250.00"), "{}", word[0]);
    assert!(word[1].contains("March 1, 2024"), "{}", word[1]);
    assert!(
        word[1].contains("As the landlord's ledger shows."),
        "{}",
        word[1]
    );
    assert_eq!(
        pages_of(&all, "notes.txt"),
        word,
        "the bytes decide, not the name"
    );
    let odt_pages = pages_of(&all, "notice.odt");
    assert_eq!(odt_pages.len(), 2, "{odt_pages:#?}");
    assert!(odt_pages[1].contains("March 1, 2024"));
    for sheet in ["payments.xlsx", "payments.ods"] {
        let p = pages_of(&all, sheet);
        assert_eq!(p.len(), 2, "{sheet}: {p:#?}");
        assert!(
            p[1].contains("Date | Amount | Paid by"),
            "header repeated: {}",
            p[1]
        );
    }
    let c = pages_of(&all, "payments.csv");
    assert!(
        c[1].contains("2024-01-24 | $1,051.00 | Ann Lee"),
        "{}",
        c[1]
    );
    assert!(pages_of(&all, "portal.html")[0].contains("Balance owed: $2,500.00"));
    for image in ["door-150.png", "door-300.png", "door-200.jpg"] {
        let p = pages_of(&all, image);
        assert!(p[0].contains("March 1, 2024"), "{image}: {p:?}");
    }
    let mail: Vec<&(String, u64, String)> = all
        .iter()
        .filter(|(f, _, _)| f.contains("letter.eml"))
        .collect();
    let names: Vec<String> = mail
        .iter()
        .map(|(f, p, _)| format!("{} p{p}", f.rsplit('/').next().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            "letter.eml p1",
            "letter.eml › Invoice.eml p1",
            "letter.eml › Invoice.eml › invoice.docx p1",
            "letter.eml › Invoice.eml › invoice.docx p2",
            "letter.eml › door.png p1",
        ]
    );
    assert!(mail[0]
        .2
        .starts_with("From: Ann Lee <ann@example.com>\nTo: counsel@example.com\n"));
    assert!(
        mail[0].2.contains("See below & the photo of the door."),
        "{}",
        mail[0].2
    );
    assert!(mail[3].2.contains("March 1, 2024"));
    assert!(
        mail[4].2.contains("March 1, 2024"),
        "the attached photo is OCR'd"
    );
}

#[test]
fn verify_finds_a_date_on_page_two_of_a_word_file() {
    let dir = tempfile::tempdir().unwrap();
    let sources = dir.path().join("sources");
    fs::create_dir(&sources).unwrap();
    let docx = soffice(&notice_fodt(dir.path(), "notice"), "docx");
    fs::copy(&docx, sources.join("notice.docx")).unwrap();
    let draft = dir.path().join("draft.md");
    fs::write(&draft, "The rent fell due on March 1, 2024.\n").unwrap();
    let o = lexrun(&[
        "verify",
        "--json",
        "--sources",
        sources.to_str().unwrap(),
        draft.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let src = &v["claims"][0]["source"];
    assert!(
        src["file"].as_str().unwrap().ends_with("notice.docx"),
        "{v:#}"
    );
    assert_eq!(src["page"], 2, "{v:#}");
}

const WORKFLOW: &str = r#"workflow intake "Every kind of source"

matter "matter"

pool gpu {
  host    "test"
  gpus    0
  vram    32 GiB
  serve   llama_cpp at "http://127.0.0.1:9"
}

model drafter on gpu {
  gguf    "models/tiny.gguf"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  temperature 0
}

sources client {
  files "intake/*"
  OCR
}

stage summary {
  model   drafter
  prompt  """{{evidence}}
Summarise the evidence."""
  reads   client
}

output "summary.md" from summary
"#;

fn workflow(dir: &Path, ocr_optional: bool) -> PathBuf {
    let p = dir.join("intake.lex");
    let text = WORKFLOW.replace(
        "  OCR\n",
        if ocr_optional { "  ocr optional\n" } else { "" },
    );
    fs::write(&p, text).unwrap();
    fs::create_dir_all(dir.join("matter/intake")).unwrap();
    p
}

fn fake(answer: &'static str) -> Fake {
    Fake::start(Speaks::Llama, Duration::ZERO, move |_| Answer {
        text: answer.into(),
        fault: None,
    })
}

#[test]
fn a_model_stage_reads_word_email_sheets_and_photos_and_the_guard_refuses_copies() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(dir.path(), false);
    let intake = dir.path().join("matter/intake");
    let work = tempfile::tempdir().unwrap();
    let docx = soffice(&notice_fodt(work.path(), "notice"), "docx");
    let png = photo(work.path(), "door", 200, false);
    fs::copy(&docx, intake.join("notice.docx")).unwrap();
    fs::copy(email(work.path(), &docx, &png), intake.join("letter.eml")).unwrap();
    fs::write(
        intake.join("payments.csv"),
        "Date,Amount\n2024-03-01,\"$1,250.00\"\n",
    )
    .unwrap();
    let store = fresh_store();
    let server = fake("The tenant owes $1,250.00, due March 1, 2024, and was served notice to quit on the landlord's instructions after repeated requests for payment were ignored by the tenant over many weeks.");
    let out = dir.path().join("out");
    let o = Lexrun::new()
        .args(["run", wf.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--store", store.to_str().unwrap()])
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let prompt = server.requests()[0].prompt();
    for header in [
        "=== client · intake/letter.eml · 1 page ===",
        "=== client · intake/letter.eml › Invoice.eml › invoice.docx · 2 pages ===",
        "=== client · intake/letter.eml › door.png · 1 page ===",
        "=== client · intake/notice.docx · 2 pages ===",
        "=== client · intake/payments.csv · 1 page ===",
    ] {
        assert!(prompt.contains(header), "{header} missing from:\n{prompt}");
    }
    assert!(prompt.contains("Monthly rent | $1,250.00"));
    assert!(prompt.contains("2024-03-01 | $1,250.00"));

    // The output, saved as Word by LibreOffice and forwarded by email, comes back as intake.
    let summary = out.join("summary.md");
    assert!(summary.is_file(), "no output in {}", out.display());
    let as_txt = work.path().join("summary-copy.txt");
    let text = fs::read_to_string(&summary).unwrap();
    fs::write(
        &as_txt,
        text.lines()
            .filter(|l| !l.contains("lexrun:"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let copy = soffice(&as_txt, "docx");
    fs::copy(&copy, intake.join("our-summary.docx")).unwrap();
    let fwd = email(work.path(), &copy, &png);
    fs::copy(&fwd, intake.join("forwarded.eml")).unwrap();
    let o = Lexrun::new()
        .args(["sources", wf.to_str().unwrap()])
        .args(["--store", store.to_str().unwrap()])
        .output();
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{listing}{}", stderr(&o));
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no verdict on {name}:\n{listing}"))
            .to_string()
    };
    assert!(
        line("intake/our-summary.docx").contains("REFUSED"),
        "{listing}"
    );
    assert!(
        line("intake/forwarded.eml › Invoice.eml › invoice.docx").contains("REFUSED"),
        "{listing}"
    );
    assert!(
        line("intake/notice.docx  ").contains("admitted"),
        "{listing}"
    );
}

#[test]
fn each_bad_file_gets_its_own_verdict_and_the_rest_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(dir.path(), false);
    let intake = dir.path().join("matter/intake");
    let work = tempfile::tempdir().unwrap();
    let docx = soffice(&notice_fodt(work.path(), "notice"), "docx");
    let good = fs::read(&docx).unwrap();
    fs::write(intake.join("good.txt"), &good).unwrap();
    fs::write(intake.join("empty.pdf"), b"").unwrap();
    fs::write(intake.join("cut.docx"), &good[..good.len() / 2]).unwrap();
    fs::write(intake.join("broken.pdf"), b"%PDF-1.7\nnot really\n").unwrap();
    // A Word file whose body inflates past the limit: refused, and nothing hangs.
    let mut bomb = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut bomb);
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        z.start_file("word/document.xml", o).unwrap();
        let zeros = vec![b' '; 1 << 20];
        for _ in 0..600 {
            std::io::Write::write_all(&mut z, &zeros).unwrap();
        }
        z.finish().unwrap();
    }
    fs::write(intake.join("bomb.docx"), bomb.into_inner()).unwrap();
    let mut ole = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
    ole.extend(vec![0u8; 512]);
    ole.extend("EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes));
    fs::write(intake.join("locked.xlsx"), ole).unwrap();
    let o = Lexrun::new()
        .args(["sources", wf.to_str().unwrap()])
        .args(["--store", fresh_store().to_str().unwrap()])
        .output();
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{listing}{}", stderr(&o));
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no verdict on {name}:\n{listing}"))
            .to_string()
    };
    assert!(line("good.txt").contains("admitted"), "{listing}");
    assert!(
        line("empty.pdf").contains("UNREADABLE: an empty file"),
        "{listing}"
    );
    assert!(
        line("cut.docx").contains("UNREADABLE: a damaged"),
        "{listing}"
    );
    assert!(line("broken.pdf").contains("UNREADABLE"), "{listing}");
    assert!(line("bomb.docx").contains("expands past"), "{listing}");
    assert!(
        line("locked.xlsx").contains("password-protected"),
        "{listing}"
    );
}

#[test]
fn ocr_that_is_needed_but_missing_names_the_package_unless_optional() {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let png = photo(work.path(), "door", 150, false);
    for optional in [false, true] {
        let wf = workflow(dir.path(), optional);
        fs::copy(&png, dir.path().join("matter/intake/door.png")).unwrap();
        let o = Lexrun::new()
            .args(["sources", wf.to_str().unwrap()])
            .args(["--store", fresh_store().to_str().unwrap()])
            .env("LEXRUN_TESSERACT", "/nonexistent/tesseract")
            .env("LEXRUN_CACHE", work.path().join("cache"))
            .output();
        let listing = String::from_utf8_lossy(&o.stdout).to_string();
        if optional {
            assert_eq!(o.status.code(), Some(0), "{listing}{}", stderr(&o));
        } else {
            assert!(
                listing.contains("apt-get install tesseract-ocr"),
                "{listing}"
            );
            assert_eq!(o.status.code(), Some(1));
        }
    }
}

#[test]
fn bates_and_merge_take_word_email_and_sheets() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let docx = soffice(&notice_fodt(w, "notice"), "docx");
    let png = photo(w, "door", 150, false);
    let eml = email(w, &docx, &png);
    let csv = w.join("payments.csv");
    fs::write(&csv, "Date,Amount\n2024-03-01,\"$1,250.00\"\n").unwrap();
    let out = w.join("stamped");
    let o = lexrun(&[
        "bates",
        "--prefix",
        "SMITH",
        "--out",
        out.to_str().unwrap(),
        docx.to_str().unwrap(),
        eml.to_str().unwrap(),
        csv.to_str().unwrap(),
        png.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let map: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("bates-map.json")).unwrap()).unwrap();
    let files: Vec<&str> = map
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["output"].as_str().unwrap().rsplit('/').next().unwrap())
        .collect();
    assert_eq!(&files[..2], ["notice.pdf", "notice.pdf"], "{map:#}");
    assert!(
        files.contains(&"letter.pdf")
            && files.contains(&"payments.pdf")
            && files.contains(&"door.pdf")
    );
    let all = text_of(&[&out.join("notice.pdf"), &out.join("letter.pdf")]);
    assert!(
        all[1].2.contains("March 1, 2024") && all[1].2.contains("SMITH000002"),
        "{all:#?}"
    );
    assert!(all
        .iter()
        .any(|(_, _, t)| t.contains("See below & the photo of the door.")));
    let binder = w.join("binder.pdf");
    let o = lexrun(&[
        "merge",
        "--out",
        binder.to_str().unwrap(),
        docx.to_str().unwrap(),
        eml.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let index = fs::read_to_string(w.join("binder-index.md")).unwrap();
    assert!(
        index.contains("notice") && index.contains("letter"),
        "{index}"
    );
}
