//! Productions: the sample volume of `workflows/production.lex` checked from outside with
//! independent readers (Python's `csv` with Concordance's delimiters for the `.dat`, poppler
//! and tesseract for every page, `qpdf --check` on every PDF), numbering across volumes, and
//! the bad inputs that must stop a volume before anything is written or be listed in its
//! reconciliation, never leave a gap.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{copy_dir, stderr, Lexrun};

const SSNS: &[&str] = &["123-45-6789", "234-56-7890", "345-67-8901"];
const ACCOUNT: &str = "4417 2290 8812";

fn need(tool: &str, package: &str) {
    let ok = Command::new(tool).arg("-v").output().is_ok();
    assert!(
        ok,
        "`{tool}` is missing: apt-get install {package} (or run scripts/install-tools)"
    );
}

fn tools() {
    need("pdftotext", "poppler-utils");
    need("tesseract", "tesseract-ocr");
    need("qpdf", "qpdf");
    need("python3", "python3");
}

fn run_in(dir: &Path, workflow: &str, out: &Path) -> std::process::Output {
    Lexrun::new()
        .current_dir(dir)
        .args([workflow, "--out", out.to_str().unwrap()])
        .output()
}

/// A private copy of the sample workflow and its matter.
fn sample() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(
        "workflows/production.lex",
        dir.path().join("production.lex"),
    )
    .unwrap();
    copy_dir(
        Path::new("workflows/matters/harbor-production"),
        &dir.path().join("matters/harbor-production"),
    );
    dir
}

/// The `.dat` read by Python's csv module with Concordance's delimiters: the header and
/// each row as a map.
fn read_dat(path: &Path) -> Vec<BTreeMap<String, String>> {
    let script = r#"
import csv, json, sys
with open(sys.argv[1], encoding="utf-8-sig", newline="") as f:
    rows = list(csv.reader(f, delimiter="\x14", quotechar="\u00fe"))
head = rows[0]
print(json.dumps([dict(zip(head, [v.replace("\u00ae", "\n") for v in r])) for r in rows[1:]]))
"#;
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn pdftotext(path: &Path) -> String {
    let o = Command::new("pdftotext")
        .arg("-layout")
        .arg(path)
        .arg("-")
        .output()
        .unwrap();
    assert!(o.status.success(), "pdftotext {}", path.display());
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ocr(path: &Path, scratch: &Path) -> String {
    let base = scratch.join("ocr");
    let o = Command::new("pdftoppm")
        .args(["-r", "300", "-gray", "-png", "-singlefile"])
        .arg(path)
        .arg(&base)
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = Command::new("tesseract")
        .arg(base.with_extension("png"))
        .arg("-")
        .args(["--dpi", "300"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn the_sample_volume_is_court_ready() {
    tools();
    let dir = sample();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "production.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.path().join("VOL001");
    for sub in ["IMAGES", "NATIVES", "TEXT", "DATA"] {
        assert!(vol.join(sub).is_dir(), "{sub}/ missing");
    }
    // The load file, read independently.
    let rows = read_dat(&vol.join("DATA/VOL001.dat"));
    let names: Vec<&str> = rows.iter().map(|r| r["FILENAME"].as_str()).collect();
    assert_eq!(
        names,
        [
            "2024-03-04-rent-increase.eml",
            "march-receipt.pdf",
            "notice-summary.txt",
            "2024-02-bank-statement.pdf",
            "rent-ledger.xlsx",
            "2024-02-10-harbor-letter.pdf"
        ],
        "{rows:#?}"
    );
    // Bates continuity: every row starts where the last ended, and the images are exactly
    // those numbers, each one page.
    let num = |s: &str| s.trim_start_matches("RIVERA").parse::<u64>().unwrap();
    let mut next = 1;
    for r in &rows {
        assert_eq!(num(&r["BEGBATES"]), next, "{r:?}");
        let pages = num(&r["ENDBATES"]) - num(&r["BEGBATES"]) + 1;
        assert_eq!(r["PGCOUNT"], pages.to_string());
        next = num(&r["ENDBATES"]) + 1;
        assert_eq!(r["CUSTODIAN"], "Maria Rivera");
        assert!(vol.join(r["TEXTPATH"].replace('\\', "/")).is_file());
        assert_eq!(r["HASH"].len(), 64);
    }
    let mut images: Vec<String> = fs::read_dir(vol.join("IMAGES"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    images.sort();
    let want: Vec<String> = (1..next).map(|n| format!("RIVERA{n:07}.pdf")).collect();
    assert_eq!(images, want);
    // The family: the email and its two attachments, numbered in order.
    let (email, last_att) = (&rows[0], &rows[2]);
    for r in &rows[..3] {
        assert_eq!(r["BEGATTACH"], email["BEGBATES"]);
        assert_eq!(r["ENDATTACH"], last_att["ENDBATES"]);
    }
    assert_eq!(rows[3]["BEGATTACH"], "");
    assert_eq!(email["FROM"], "Maria Rivera <maria.rivera@example.com>");
    assert_eq!(email["CC"], "Ana Rivera <ana.rivera@example.com>");
    assert_eq!(email["DATESENT"], "2024-03-04");
    assert_eq!(
        email["SUBJECT"],
        "Rent increase notice and my March receipt"
    );
    // Designations, and the native with its placeholder.
    assert_eq!(
        rows[3]["CONFIDENTIALITY"],
        "HIGHLY CONFIDENTIAL – ATTORNEYS' EYES ONLY"
    );
    assert_eq!(rows[0]["CONFIDENTIALITY"], "CONFIDENTIAL");
    let native = &rows[4];
    assert_eq!(native["PGCOUNT"], "1");
    let native_path = vol.join(native["NATIVEPATH"].replace('\\', "/"));
    assert_eq!(
        fs::read(&native_path).unwrap(),
        fs::read(
            dir.path()
                .join("matters/harbor-production/maria-rivera/finance/rent-ledger.xlsx")
        )
        .unwrap()
    );
    let placeholder = pdftotext(&vol.join(format!("IMAGES/{}.pdf", native["BEGBATES"])));
    assert!(
        placeholder.contains("Document produced natively"),
        "{placeholder}"
    );
    // The Opticon file agrees with the images.
    let opt = fs::read_to_string(vol.join("DATA/VOL001.opt")).unwrap();
    let lines: Vec<&str> = opt.lines().collect();
    assert_eq!(lines.len(), want.len());
    assert_eq!(
        lines[0],
        format!(
            "RIVERA0000001,VOL001,IMAGES\\RIVERA0000001.pdf,Y,,,{}",
            email["PGCOUNT"]
        )
    );
    for l in &lines {
        let c: Vec<&str> = l.split(',').collect();
        assert_eq!(c.len(), 7, "{l}");
        assert!(vol.join(c[2].replace('\\', "/")).is_file(), "{l}");
        assert_eq!(
            c[3] == "Y",
            rows.iter().any(|r| r["BEGBATES"] == c[0]),
            "{l}"
        );
    }
    // Every page: qpdf-clean, one page, its number and legend in the text layer, and no
    // redacted string in its text layer, its OCR or its decompressed streams.
    let scratch = tempfile::tempdir().unwrap();
    let mut labels = 0;
    for (i, name) in want.iter().enumerate() {
        let p = vol.join("IMAGES").join(name);
        let q = Command::new("qpdf")
            .arg("--check")
            .arg(&p)
            .output()
            .unwrap();
        assert!(
            q.status.success(),
            "qpdf --check {name}: {}",
            String::from_utf8_lossy(&q.stdout)
        );
        let info = Command::new("pdfinfo").arg(&p).output().unwrap();
        let info = String::from_utf8_lossy(&info.stdout);
        let pages = info
            .lines()
            .find_map(|l| l.strip_prefix("Pages:"))
            .map(str::trim);
        assert_eq!(pages, Some("1"), "{name}");
        let text = pdftotext(&p);
        let bates = name.trim_end_matches(".pdf");
        assert!(text.contains(bates), "{name}: {text}");
        let row = rows
            .iter()
            .find(|r| (num(&r["BEGBATES"])..=num(&r["ENDBATES"])).contains(&(i as u64 + 1)))
            .unwrap();
        assert!(text.contains(&row["CONFIDENTIALITY"]), "{name}: {text}");
        labels += text.matches("REDACTED – PII").count();
        let qdf = scratch.path().join("qdf.pdf");
        let o = Command::new("qpdf")
            .args([
                "--qdf",
                "--object-streams=disable",
                "--stream-data=uncompress",
            ])
            .arg(&p)
            .arg(&qdf)
            .output()
            .unwrap();
        assert!(o.status.success());
        let raw = fs::read(&qdf).unwrap();
        let seen = ocr(&p, scratch.path());
        for s in SSNS.iter().chain([&ACCOUNT]) {
            assert!(!text.contains(s), "{s} in the text layer of {name}");
            assert!(
                !squash(&seen).contains(&squash(s)),
                "{s} in the OCR of {name}: {seen}"
            );
            assert!(
                memchr::memmem::find(&raw, s.as_bytes()).is_none(),
                "{s} in {name}"
            );
        }
    }
    // Three SSNs (one in the scan) and the account number, each boxed and labelled.
    assert!(labels >= 4, "{labels} labels");
    let letter = pdftotext(&vol.join(format!("IMAGES/{}.pdf", rows[5]["BEGBATES"])));
    assert!(letter.contains("REDACTED – PII"), "{letter}");
    // No redacted string in any byte of the volume.
    for f in files_under(&vol) {
        let bytes = fs::read(&f).unwrap();
        for s in SSNS.iter().chain([&ACCOUNT]) {
            assert!(
                memchr::memmem::find(&bytes, s.as_bytes()).is_none(),
                "{s} in {}",
                f.display()
            );
        }
    }
    // The text files are what was produced.
    let email_text =
        fs::read_to_string(vol.join(format!("TEXT/{}.txt", email["BEGBATES"]))).unwrap();
    assert!(email_text.contains("[REDACTED – PII]"), "{email_text}");
    assert!(email_text.contains("Harbor sent the rent increase notice"));
    // The privilege log and the reconciliation.
    let log = fs::read_to_string(vol.join("DATA/VOL001-privilege-log.csv")).unwrap();
    let mut log = csv::Reader::from_reader(log.as_bytes());
    let entries: Vec<csv::StringRecord> = log.records().map(Result::unwrap).collect();
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(&e[0], "VOL001-PRIV-0001");
    assert_eq!(&e[1], "March 15, 2024");
    assert_eq!(&e[2], "Memorandum");
    assert_eq!(&e[3], "Laura Chen, Esq.");
    assert_eq!(&e[4], "Maria Rivera");
    assert_eq!(&e[7], "Attorney-Client Privilege");
    assert!(vol.join("DATA/VOL001-privilege-log.docx").is_file());
    let recon = fs::read_to_string(vol.join("DATA/reconciliation.md")).unwrap();
    assert!(
        recon.contains("produced 6 + withheld 1 + exceptions 0 = collected 7: balanced"),
        "{recon}"
    );
    // The register says which document went out under which numbers.
    let reg: serde_json::Value =
        serde_json::from_slice(&fs::read(out.path().join("PRODUCTIONS.json")).unwrap()).unwrap();
    assert_eq!(reg[0]["volume"], "VOL001");
    assert_eq!(reg[0]["documents"].as_array().unwrap().len(), 6);
    assert_eq!(
        reg[0]["withheld"][0],
        "maria-rivera/counsel/2024-03-15-memo-from-counsel.txt"
    );
}

/// A small matter of text documents, produced quickly.
fn text_matter(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m/jo");
    fs::create_dir_all(&m).unwrap();
    fs::write(
        m.join("a-note.txt"),
        "A note about the lease.\nTenant SSN 111-22-3333.\n",
    )
    .unwrap();
    fs::write(
        m.join("b-note.txt"),
        "Another note.\n\u{000C}Its second page.\n",
    )
    .unwrap();
    let lex = |vol: &str, bates: &str| {
        format!(
            "workflow w \"Volume\"\nmatter \"m\"\nsources s {{\n  files \"jo/**\"\n}}\nproduction {} {{\n  reads s\n  volume \"{vol}\"\n  bates {bates}\n  legend c \"CONFIDENTIAL\"\n  designate c \"**\"\n  redact ssn as \"PII\"\n{extra}}}\n",
            vol.to_lowercase()
        )
    };
    fs::write(
        dir.path().join("v1.lex"),
        lex("VOL001", "\"JO\" start 1 width 5"),
    )
    .unwrap();
    fs::write(dir.path().join("v2.lex"), lex("VOL002", "\"JO\" width 5")).unwrap();
    fs::write(
        dir.path().join("v3.lex"),
        lex("VOL003", "\"JO\" start 2 width 5"),
    )
    .unwrap();
    dir
}

#[test]
fn a_second_volume_continues_the_numbering_and_a_collision_is_refused() {
    tools();
    let dir = text_matter("");
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v1.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.path().join("VOL001/IMAGES/JO00003.pdf").is_file());
    let o = run_in(dir.path(), "v2.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = read_dat(&out.path().join("VOL002/DATA/VOL002.dat"));
    assert_eq!(rows[0]["BEGBATES"], "JO00004");
    assert_eq!(rows[1]["ENDBATES"], "JO00006");
    // A range that overlaps volume 1: refused, and nothing of volume 3 written.
    let o = run_in(dir.path(), "v3.lex", out.path());
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(err.contains("already used by volume VOL001"), "{err}");
    assert!(!out.path().join("VOL003").exists());
    let leftovers: Vec<_> = fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".production"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_pattern_that_would_redact_a_whole_page_stops_the_volume() {
    tools();
    let dir = text_matter("  redact pattern \"[A-Za-z0-9.-]+\" as \"PII\"\n");
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v1.lex", out.path());
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(err.contains("would black out the whole of page"), "{err}");
    assert!(!out.path().join("VOL001").exists());
}

#[test]
fn a_box_outside_the_page_stops_the_volume() {
    tools();
    let dir = sample();
    let lex = fs::read_to_string(dir.path().join("production.lex")).unwrap().replace(
        "ssn as \"PII\"",
        "ssn as \"PII\"\n  redact box \"maria-rivera/letters/*.pdf\" page 1 at 500, 700, 200, 200 as \"PRIVILEGE\"",
    );
    assert!(lex.contains("redact box"));
    fs::write(dir.path().join("production.lex"), lex).unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "production.lex", out.path());
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(
        err.contains("lies outside the page (612 × 792 points)"),
        "{err}"
    );
    assert!(!out.path().join("VOL001").exists());
}

#[test]
fn a_document_that_cannot_be_read_stops_the_volume_before_anything_is_written() {
    tools();
    let dir = text_matter("");
    fs::write(
        dir.path().join("m/jo/c-broken.pdf"),
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v1.lex", out.path());
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(err.contains("c-broken.pdf"), "{err}");
    assert!(!out.path().join("VOL001").exists());
    assert!(!out.path().join("PRODUCTIONS.json").exists());
}

#[test]
fn check_reports_a_pattern_matching_no_document() {
    let dir = text_matter("  natives \"**/*.xlsx\"\n");
    let o = Lexrun::new()
        .current_dir(dir.path())
        .args(["check", "v1.lex"])
        .output();
    let err = stderr(&o) + &String::from_utf8_lossy(&o.stdout);
    assert!(err.contains("E113"), "{err}");
    assert!(err.contains("matches no document in the matter"), "{err}");
}

fn run_with_store(dir: &Path, workflow: &str, out: &Path, store: &Path) -> std::process::Output {
    Lexrun::new()
        .current_dir(dir)
        .env("LEXRUN_STORE", store)
        .args([workflow, "--out", out.to_str().unwrap()])
        .output()
}

#[test]
fn the_ledger_records_every_volume_and_numbers_continue_across_folders() {
    tools();
    let dir = text_matter(
        "  withhold \"jo/a-note.txt\" as \"Attorney-Client Privilege\" because \"Counsel's note\"\n",
    );
    let store = tempfile::tempdir().unwrap();
    let (out1, out2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = run_with_store(dir.path(), "v1.lex", out1.path(), store.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Volume 2 into another folder: no register there, but the ledger knows volume 1.
    let o = run_with_store(dir.path(), "v2.lex", out2.path(), store.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = read_dat(&out2.path().join("VOL002/DATA/VOL002.dat"));
    assert_eq!(rows[0]["BEGBATES"], "JO00003", "{rows:?}");
    // A range overlapping volume 1, into a third folder: refused from the ledger alone.
    let out3 = tempfile::tempdir().unwrap();
    let o = run_with_store(dir.path(), "v3.lex", out3.path(), store.path());
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("already used by volume VOL001"),
        "{}",
        stderr(&o)
    );
    assert!(!out3.path().join("VOL003").exists());
    // The audit: both volumes, each document with its numbers, the withheld one with its
    // privilege.
    let audit = |args: &[&str]| {
        Lexrun::new()
            .current_dir(dir.path())
            .env("LEXRUN_STORE", store.path())
            .args(args)
            .output()
    };
    let o = audit(&["audit", "v1.lex", "--productions"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("volume VOL001 (JO00001–JO00002, 1 documents, 2 pages, 1 withheld)"),
        "{text}"
    );
    assert!(
        text.contains("JO00001–JO00002  jo/b-note.txt (2 pages)"),
        "{text}"
    );
    assert!(
        text.contains("withheld  jo/a-note.txt (Attorney-Client Privilege)"),
        "{text}"
    );
    assert!(text.contains("volume VOL002 (JO00003–JO00004"), "{text}");
    let o = audit(&["audit", "v1.lex", "--productions", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["documents"][0]["first_bates"], "JO00001");
    // A run's own audit names the volume it wrote.
    let run = v[1]["run_id"].as_str().unwrap();
    let o = audit(&["audit", "v2.lex", run]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("Produced:\n  volume VOL002"), "{text}");
}

fn tiffinfo(path: &Path) -> String {
    let o = Command::new("tiffinfo").arg(path).output().unwrap();
    assert!(
        o.status.success(),
        "tiffinfo {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// The share of white in a TIFF, as libtiff and poppler (not lexrun) decode it: `tiff2pdf`
/// carries the Group IV data into a PDF, `pdftoppm` renders it.
fn white_share(tif: &Path, scratch: &Path) -> f64 {
    let pdf = scratch.join("tif.pdf");
    let o = Command::new("tiff2pdf")
        .arg("-o")
        .arg(&pdf)
        .arg(tif)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let base = scratch.join("tif");
    let o = Command::new("pdftoppm")
        .args(["-r", "30", "-gray", "-singlefile"])
        .arg(&pdf)
        .arg(&base)
        .output()
        .unwrap();
    assert!(o.status.success());
    let pgm = fs::read(base.with_extension("pgm")).unwrap();
    // The header is three lines: P5, the size, 255.
    let mut at = 0;
    for _ in 0..3 {
        at += pgm[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    }
    let px = &pgm[at..];
    px.iter().filter(|&&p| p >= 128).count() as f64 / px.len() as f64
}

fn tiff_tools() {
    tools();
    need("tiffinfo", "libtiff-tools");
}

#[test]
fn the_sample_volume_as_tiff_is_single_page_group_iv_at_300_dpi() {
    tiff_tools();
    let dir = sample();
    let lex = fs::read_to_string(dir.path().join("production.lex"))
        .unwrap()
        .replace("images pdf", "images tiff");
    assert!(lex.contains("images tiff"));
    fs::write(dir.path().join("production.lex"), lex).unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "production.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.path().join("VOL001");
    let rows = read_dat(&vol.join("DATA/VOL001.dat"));
    let num = |s: &str| s.trim_start_matches("RIVERA").parse::<u64>().unwrap();
    let last = num(&rows.last().unwrap()["ENDBATES"]);
    // Exactly one TIFF per number, in the first folder of a thousand, and nothing else.
    let images: Vec<String> = files_under(&vol.join("IMAGES"))
        .iter()
        .map(|p| {
            p.strip_prefix(&vol)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let want: Vec<String> = (1..=last)
        .map(|n| format!("IMAGES/0001/RIVERA{n:07}.tif"))
        .collect();
    assert_eq!(images, want);
    // The Opticon file points at each image, a document's first with its page count.
    let opt = fs::read_to_string(vol.join("DATA/VOL001.opt")).unwrap();
    let lines: Vec<Vec<&str>> = opt.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(lines.len(), want.len());
    for (l, w) in lines.iter().zip(&want) {
        assert_eq!(l[2].replace('\\', "/"), *w, "{l:?}");
        assert!(vol.join(w).is_file());
        assert_eq!(format!("IMAGES/0001/{}.tif", l[0]), *w);
    }
    for r in &rows {
        let first = lines.iter().find(|l| l[0] == r["BEGBATES"]).unwrap();
        assert_eq!(first[3], "Y");
        assert_eq!(first[6], r["PGCOUNT"], "{r:?}");
        assert!(vol.join(r["TEXTPATH"].replace('\\', "/")).is_file());
        if !r["NATIVEPATH"].is_empty() {
            assert!(vol.join(r["NATIVEPATH"].replace('\\', "/")).is_file());
        }
    }
    // Every page, by libtiff's tiffinfo and tesseract: one directory, Group IV, bilevel,
    // white is zero, 300 dpi; mostly white as decoded; its number read back by OCR and no
    // redacted number in its OCR.
    let scratch = tempfile::tempdir().unwrap();
    let mut read = Vec::new();
    for w in &want {
        let p = vol.join(w);
        let info = tiffinfo(&p);
        assert_eq!(info.matches("TIFF Directory").count(), 1, "{w}: {info}");
        for field in [
            "Compression Scheme: CCITT Group 4",
            "Bits/Sample: 1",
            "Samples/Pixel: 1",
            "Photometric Interpretation: min-is-white",
            "Resolution: 300, 300 pixels/inch",
        ] {
            assert!(info.contains(field), "{w}: no `{field}` in {info}");
        }
        let white = white_share(&p, scratch.path());
        assert!(white > 0.6, "{w}: only {white:.2} of it is white");
        let o = Command::new("tesseract")
            .arg(&p)
            .arg("-")
            .args(["--dpi", "300"])
            .output()
            .unwrap();
        assert!(o.status.success(), "tesseract {w}");
        let seen = String::from_utf8_lossy(&o.stdout).to_string();
        let bates = w
            .trim_start_matches("IMAGES/0001/")
            .trim_end_matches(".tif");
        assert!(squash(&seen).contains(bates), "{w}: OCR reads {seen}");
        for s in SSNS.iter().chain([&ACCOUNT]) {
            assert!(
                !squash(&seen).contains(&squash(s)),
                "{s} in the OCR of {w}: {seen}"
            );
        }
        read.push(seen);
    }
    // OCR reads the words around each redaction, so the pages were read, not blank: the
    // email's and the scanned letter's sentences, up to where their numbers were.
    let first = &read[0];
    assert!(first.contains("Social Security number is"), "{first}");
    let letter = read.last().unwrap();
    assert!(letter.contains("Social Security number as"), "{letter}");
    // No redacted string in any byte of the volume, and the text is what was produced.
    for f in files_under(&vol) {
        let bytes = fs::read(&f).unwrap();
        for s in SSNS.iter().chain([&ACCOUNT]) {
            assert!(
                memchr::memmem::find(&bytes, s.as_bytes()).is_none(),
                "{s} in {}",
                f.display()
            );
        }
    }
    let email_text =
        fs::read_to_string(vol.join(format!("TEXT/{}.txt", rows[0]["BEGBATES"]))).unwrap();
    assert!(email_text.contains("[REDACTED – PII]"), "{email_text}");
}

#[test]
fn a_page_that_cannot_be_rasterised_as_tiff_stops_the_volume_before_anything_is_written() {
    tiff_tools();
    let dir = text_matter("  images tiff\n");
    // A pdftoppm that fails, ahead of the real one.
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("pdftoppm");
    fs::write(
        &fake,
        "#!/bin/sh\necho 'Syntax Error: broken page' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&fake, perms).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tempfile::tempdir().unwrap();
    let o = Lexrun::new()
        .current_dir(dir.path())
        .env("PATH", &path)
        .args(["v1.lex", "--out", out.path().to_str().unwrap()])
        .output();
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(
        err.contains("page JO00001 of `jo/a-note.txt` cannot be made a TIFF image"),
        "{err}"
    );
    assert!(err.contains("broken page"), "{err}");
    assert!(!out.path().join("VOL001").exists());
    assert!(!out.path().join("PRODUCTIONS.json").exists());
    let left: Vec<_> = fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".production"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
