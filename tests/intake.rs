//! Every kind of source a client sends, read the same way by a model stage, `verify`, the
//! intake guard and the exhibits tools. The files are made at test time by the real tools:
//! LibreOffice writes the Word, OpenDocument and Excel files, Python's `email` package the
//! messages, and poppler renders the photos that tesseract reads. A missing tool fails the
//! test with the command that installs it.

use crate::support;
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

/// `lexrun text --json` over one file, all rows (parts that cannot be read included), and
/// its error output.
fn rows_of(file: &Path) -> (Vec<serde_json::Value>, String) {
    let o = lexrun(&["text", "--json", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (v.as_array().unwrap().clone(), stderr(&o))
}

fn all_text(rows: &[serde_json::Value]) -> String {
    rows.iter()
        .map(|r| r["text"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

const BROKEN_MAIL: &str = "From: Ann Lee <ann@example.com>\r\nTo: counsel@example.com\r\nDate: Tue, 5 Mar 2024 10:00:00 +0000\r\nSubject: Lease papers\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe lease ends on June 30, 2024.\r\n--b1\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"broken.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjcKbm90IHJlYWxseQo=\r\n--b1\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"note.txt\"\r\n\r\nThe deposit was $2,500.00.\r\n--b1--\r\n";

#[test]
fn an_email_with_a_damaged_attachment_keeps_its_body_headers_and_good_attachments() {
    let dir = tempfile::tempdir().unwrap();
    let eml = dir.path().join("papers.eml");
    fs::write(&eml, BROKEN_MAIL).unwrap();
    let (rows, err) = rows_of(&eml);
    let text = all_text(&rows);
    assert!(text.contains("The lease ends on June 30, 2024."), "{text}");
    assert!(text.contains("Subject: Lease papers"), "{text}");
    assert!(text.contains("The deposit was $2,500.00."), "{text}");
    let bad = rows
        .iter()
        .find(|r| r["file"].as_str().unwrap().ends_with("› broken.pdf"))
        .unwrap_or_else(|| panic!("the damaged attachment is not named: {rows:#?}"));
    assert_eq!(bad["from"], "unreadable");
    assert!(
        bad["unreadable"]
            .as_str()
            .unwrap()
            .contains("not a readable PDF"),
        "{bad}"
    );
    assert!(
        err.contains("broken.pdf") && err.contains("left out"),
        "{err}"
    );

    // The intake guard lists the part and still admits the rest of the email.
    let wf = workflow(dir.path(), false);
    fs::copy(&eml, dir.path().join("matter/intake/papers.eml")).unwrap();
    let o = Lexrun::new()
        .args(["sources", wf.to_str().unwrap()])
        .args(["--store", fresh_store().to_str().unwrap()])
        .output();
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "{listing}{}", stderr(&o));
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no verdict on {name}:\n{listing}"))
            .to_string()
    };
    assert!(
        line("› broken.pdf").contains("unreadable part"),
        "{listing}"
    );
    assert!(line("› note.txt").contains("admitted"), "{listing}");
}

#[test]
fn email_in_every_charset_the_standards_allow_reads_as_written() {
    let dir = tempfile::tempdir().unwrap();
    // ISO-2022-JP (RFC 1468), the charset Japanese mail is sent in, in the subject (RFC 2047)
    // and the body; ks_c_5601-1987, the label Korean Outlook gives EUC-KR.
    let mut jp = b"From: a@example.jp\r\nDate: Tue, 5 Mar 2024 10:00:00 +0900\r\nSubject: =?ISO-2022-JP?B?GyRCJU8lbSE8GyhC?=\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=ISO-2022-JP\r\n\r\n".to_vec();
    jp.extend(b"\x1b$B%O%m!<!&%o!<%k%I\x1b(B\r\n");
    let jp_file = dir.path().join("jp.eml");
    fs::write(&jp_file, jp).unwrap();
    let text = all_text(&rows_of(&jp_file).0);
    assert!(text.contains("Subject: ハロー"), "{text}");
    assert!(text.contains("ハロー・ワールド"), "{text}");
    let mut kr = b"From: b@example.kr\r\nDate: Tue, 5 Mar 2024 10:00:00 +0900\r\nSubject: hello\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=ks_c_5601-1987\r\nContent-Transfer-Encoding: 8bit\r\n\r\n".to_vec();
    kr.extend(b"\xbe\xc8\xb3\xe7\xc7\xcf\xbc\xbc\xbf\xe4\r\n");
    let kr_file = dir.path().join("kr.eml");
    fs::write(&kr_file, kr).unwrap();
    let text = all_text(&rows_of(&kr_file).0);
    assert!(text.contains("안녕하세요"), "{text}");
}

#[test]
fn a_text_file_is_read_as_an_email_only_when_it_is_one_and_loses_no_line() {
    let dir = tempfile::tempdir().unwrap();
    // A message printed from Outlook and saved as text: not a message (no Date field), so
    // its every line, the `Sent:` date included, is the evidence as written.
    let printout = "From: Ann Lee\nSent: Thursday, March 7, 2024 9:14 AM\nTo: Counsel\nSubject: rent\n\nThe rent is late again.\n";
    let p = dir.path().join("printout.txt");
    fs::write(&p, printout).unwrap();
    let (rows, _) = rows_of(&p);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["text"], printout);
    assert_eq!(rows[0]["from"], "text");
    // A whole message saved as text is read as one, every header line kept as written.
    let message = "From: Ann Lee <ann@example.com>\nSent: Thursday, March 7, 2024 9:14 AM\nDate: Thu, 7 Mar 2024 09:14:00 -0500\nX-Note: kept\nSubject: rent\n\nThe rent is late again.\n";
    let m = dir.path().join("message.txt");
    fs::write(&m, message).unwrap();
    let text = all_text(&rows_of(&m).0);
    for line in message.lines().filter(|l| !l.is_empty()) {
        assert!(text.contains(line), "`{line}` dropped from:\n{text}");
    }
}

fn qpdf(args: &[&str]) {
    let o = Command::new(tool("qpdf")).args(args).output().unwrap();
    // qpdf exits 3 when it warns, and still writes its output.
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "qpdf {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn pdfs_read_as_poppler_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plain = d.join("plain.pdf");
    support::pdf::text_pdf(&plain, &["The lease of Flat 2 ends on June 30, 2024."]);
    let s = |p: &Path| p.to_str().unwrap().to_string();

    // Encrypted with only an owner password: opens as in every reader.
    let owner = d.join("owner.pdf");
    qpdf(&[
        "--encrypt",
        "",
        "owner-secret",
        "256",
        "--",
        &s(&plain),
        &s(&owner),
    ]);
    assert!(all_text(&rows_of(&owner).0).contains("ends on June 30, 2024"));
    // A password needed to open it: refused, saying so.
    let user = d.join("user.pdf");
    qpdf(&[
        "--encrypt",
        "user-secret",
        "owner-secret",
        "256",
        "--",
        &s(&plain),
        &s(&user),
    ]);
    let o = lexrun(&["text", user.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("password"), "{}", stderr(&o));

    // A broken cross-reference table: repaired, and said so.
    let one_page = |ops: &str| {
        support::pdf::raw_pdf(&[
            "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
            support::pdf::stream(ops),
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
        ])
    };
    let mut bytes = one_page("BT /F1 12 Tf 72 700 Td (The lease ends on June 30, 2024.) Tj ET");
    let at = bytes.windows(9).rposition(|w| w == b"startxref").unwrap();
    bytes.truncate(at);
    bytes.extend(b"startxref\n999999\n%%EOF\n");
    let broken = d.join("broken.pdf");
    fs::write(&broken, bytes).unwrap();
    let (rows, err) = rows_of(&broken);
    assert!(
        all_text(&rows).contains("ends on June 30, 2024"),
        "{rows:#?}"
    );
    assert!(err.contains("rebuilt"), "{err}");

    // Words placed apart by glyph positions (TJ offsets), with no space characters.
    let spaced = d.join("spaced.pdf");
    fs::write(
        &spaced,
        one_page("BT /F1 12 Tf 72 700 Td [(The)-600(Crazy)-600(Ones)] TJ 0 -20 Td (October) Tj 46 0 Td (14,) Tj 20 0 Td (1998) Tj ET"),
    )
    .unwrap();
    let text = all_text(&rows_of(&spaced).0);
    assert!(text.contains("The Crazy Ones"), "{text}");
    assert!(text.contains("October 14, 1998"), "{text}");

    // CJK text in a CID font with a ToUnicode map, as LibreOffice writes it.
    let jp = d.join("jp.txt");
    fs::write(&jp, "賃貸借契約は二〇二四年六月三十日に終了します。\n").unwrap();
    let jp_pdf = soffice(&jp, "pdf");
    let text = all_text(&rows_of(&jp_pdf).0);
    assert!(text.contains("賃貸借契約"), "{text}");
}

/// An `.xlsx` written part by part: cells with Excel number formats (a custom currency
/// format, built-in percent, thousands and date formats) and a formula error.
fn formatted_xlsx(path: &Path) {
    let parts = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Ledger" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#,
        ),
        (
            "xl/styles.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="&quot;$&quot;#,##0.00"/></numFmts><fonts count="1"><font/></fonts><fills count="1"><fill/></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="5"><xf numFmtId="0"/><xf numFmtId="164" applyNumberFormat="1"/><xf numFmtId="10" applyNumberFormat="1"/><xf numFmtId="3" applyNumberFormat="1"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>"#,
        ),
        (
            "xl/worksheets/sheet1.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Rent</t></is></c><c r="B1" t="inlineStr"><is><t>Rate</t></is></c><c r="C1" t="inlineStr"><is><t>Units</t></is></c><c r="D1" t="inlineStr"><is><t>Due</t></is></c><c r="E1" t="inlineStr"><is><t>Check</t></is></c></row><row r="2"><c r="A2" s="1"><v>1234.56</v></c><c r="B2" s="2"><v>0.0525</v></c><c r="C2" s="3"><v>12500</v></c><c r="D2" s="4"><v>45358</v></c><c r="E2" t="e"><f>1/0</f><v>#DIV/0!</v></c></row></sheetData></worksheet>"#,
        ),
    ];
    let mut z = zip::ZipWriter::new(fs::File::create(path).unwrap());
    for (name, body) in parts {
        z.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut z, body.as_bytes()).unwrap();
    }
    z.finish().unwrap();
}

#[test]
fn a_password_protected_excel_97_workbook_is_named_as_protected_not_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("rent.csv");
    std::fs::write(&csv, "Month,Rent\nMarch,1250\n").unwrap();
    let xls = soffice(&csv, "xls");
    let (rows, _) = rows_of(&xls);
    assert!(all_text(&rows).contains("March | 1250"));
    // Excel marks a workbook encrypted with a password by a FILEPASS record among the
    // workbook's first records; the CODEPAGE record (type 0x42, two bytes) becomes one.
    let mut bytes = std::fs::read(&xls).unwrap();
    let at = bytes
        .windows(4)
        .position(|w| w == [0x42, 0x00, 0x02, 0x00])
        .expect("a CODEPAGE record");
    bytes[at..at + 6].copy_from_slice(&[0x2F, 0x00, 0x02, 0x00, 0x01, 0x00]);
    let locked = dir.path().join("locked.xls");
    std::fs::write(&locked, &bytes).unwrap();
    let o = lexrun(&["text", locked.to_str().unwrap()]);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0));
    assert!(err.contains("password-protected"), "{err}");
    assert!(!err.contains("damaged"), "{err}");
}

#[test]
fn a_sheet_reads_as_it_shows_with_the_stored_value_kept() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("ledger.xlsx");
    formatted_xlsx(&x);
    let text = all_text(&rows_of(&x).0);
    assert!(
        text.contains("$1,234.56 (1234.56) | 5.25% (0.0525) | 12,500 (12500) | 3/7/2024 (2024-03-07) | #DIV/0!"),
        "{text}"
    );
}

/// A long PDF is read in page ranges at once (one `pdftotext` per core); what it reads is
/// exactly one whole `pdftotext` read, page for page, with no page lost or repeated where the
/// ranges meet.
#[test]
fn a_long_pdf_read_in_page_ranges_is_read_page_for_page_as_one_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("long.pdf");
    let texts: Vec<String> = (1..=301)
        .map(|p| {
            (0..60)
                .map(|l| format!("Page {p} line {l}: the deposit of $1,{p:03}.00 was kept."))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    support::pdf::text_pdf(&big, &refs);
    assert!(
        fs::metadata(&big).unwrap().len() > 1 << 20,
        "the file is long enough to be read in ranges"
    );
    let whole = dir.path().join("whole.txt");
    run(Command::new(tool("pdftotext"))
        .args(["-enc", "UTF-8"])
        .arg(&big)
        .arg(&whole));
    let poppler = fs::read_to_string(&whole).unwrap();
    let mut expected: Vec<&str> = poppler.split('\u{000C}').collect();
    expected.pop();
    let got = text_of(&[&big]);
    assert_eq!(got.len(), 301);
    for (i, (_, page, text)) in got.iter().enumerate() {
        assert_eq!(*page, i as u64 + 1);
        assert_eq!(text, expected[i], "page {page}");
        assert!(
            text.contains(&format!("Page {page} line 0:")),
            "page {page}"
        );
    }
}
