//! Productions: the sample volume of `workflows/production.lex` checked from outside with
//! independent readers (Python's `csv` with Concordance's delimiters for the `.dat`, poppler
//! and tesseract for every page, `qpdf --check` on every PDF), numbering across volumes, and
//! the bad inputs that must stop a volume before anything is written or be listed in its
//! reconciliation, never leave a gap.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;
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
    // The withheld memo comes first, as a numbered slip sheet whose row names nothing.
    let held = &rows[0];
    assert_eq!(held["PRODSTATUS"], "Withheld – Privileged", "{rows:#?}");
    assert_eq!(held["FILENAME"], "");
    assert_eq!(held["HASH"], "");
    let slip = pdftotext(&vol.join(format!("IMAGES/{}.pdf", held["BEGBATES"])));
    assert!(slip.contains("Withheld – Privileged"), "{slip}");
    assert!(!slip.contains("Laura Chen"), "{slip}");
    let prod: Vec<&BTreeMap<String, String>> = rows
        .iter()
        .filter(|r| r["PRODSTATUS"] == "Produced")
        .collect();
    let names: Vec<&str> = prod.iter().map(|r| r["FILENAME"].as_str()).collect();
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
    }
    for r in &prod {
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
    let (email, last_att) = (prod[0], prod[2]);
    for r in &prod[..3] {
        assert_eq!(r["BEGATTACH"], email["BEGBATES"]);
        assert_eq!(r["ENDATTACH"], last_att["ENDBATES"]);
    }
    assert_eq!(prod[3]["BEGATTACH"], "");
    assert_eq!(email["FROM"], "Maria Rivera <maria.rivera@example.com>");
    assert_eq!(email["CC"], "Ana Rivera <ana.rivera@example.com>");
    assert_eq!(email["DATESENT"], "2024-03-04");
    assert_eq!(
        email["SUBJECT"],
        "Rent increase notice and my March receipt"
    );
    // Designations, and the native with its placeholder.
    assert_eq!(
        prod[3]["CONFIDENTIALITY"],
        "HIGHLY CONFIDENTIAL – ATTORNEYS' EYES ONLY"
    );
    assert_eq!(prod[0]["CONFIDENTIALITY"], "CONFIDENTIAL");
    let native = prod[4];
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
            held["PGCOUNT"]
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
    let letter = pdftotext(&vol.join(format!("IMAGES/{}.pdf", prod[5]["BEGBATES"])));
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
    assert_eq!(&e[1], held["BEGBATES"]);
    assert_eq!(&e[3], "March 15, 2024");
    assert_eq!(&e[4], "Memorandum");
    assert_eq!(&e[5], "Laura Chen, Esq.");
    assert_eq!(&e[6], "Maria Rivera");
    assert_eq!(&e[10], "Attorney-Client Privilege");
    assert!(vol.join("DATA/VOL001-privilege-log.docx").is_file());
    let recon = fs::read_to_string(vol.join("DATA/reconciliation.md")).unwrap();
    assert!(
        recon.contains("produced 6 + withheld 1 + exceptions 0 = collected 7: balanced"),
        "{recon}"
    );
    // The redaction log: each box by its page's number, with its reason, and nothing it
    // covered.
    let rlog = fs::read_to_string(vol.join("DATA/VOL001-redaction-log.csv")).unwrap();
    let rlog: Vec<csv::StringRecord> = csv::Reader::from_reader(rlog.as_bytes())
        .records()
        .map(Result::unwrap)
        .collect();
    assert!(rlog.len() >= 4, "{rlog:?}");
    for r in &rlog {
        assert!(
            rows.iter()
                .any(|x| (num(&x["BEGBATES"])..=num(&x["ENDBATES"])).contains(&num(&r[0]))),
            "{r:?}"
        );
        assert_eq!(&r[3], "REDACTED – PII", "{r:?}");
    }
    assert!(rlog.iter().any(|r| r[0] == prod[5]["BEGBATES"]), "{rlog:?}");
    // Only the scanned page is rasterised, and the reconciliation says why.
    assert!(recon.contains("Pages rasterised: 1 of 7"), "{recon}");
    assert!(
        recon.contains("- 1 rasterised: its content (rotation, images, forms, annotations or fonts) cannot be copied glyph by glyph"),
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
    // The same notes again: each one said to be produced already, where.
    let recon = fs::read_to_string(out.path().join("VOL002/DATA/reconciliation.md")).unwrap();
    assert!(
        recon.contains("warning: `a-note.txt` was already produced in volume VOL001 as JO00001"),
        "{recon}"
    );
    assert!(
        stderr(&o).contains("2 documents were already produced in an earlier volume"),
        "{}",
        stderr(&o)
    );
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
fn a_document_that_cannot_be_read_is_an_exception_and_the_rest_is_produced() {
    tools();
    let dir = text_matter("");
    fs::write(
        dir.path().join("m/jo/c-broken.pdf"),
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v1.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.path().join("VOL001");
    let rows = read_dat(&vol.join("DATA/VOL001.dat"));
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let broken = &rows[2];
    assert_eq!(broken["FILENAME"], "c-broken.pdf");
    assert_eq!(broken["PRODSTATUS"], "Exception – technical issue");
    assert_eq!(broken["BEGBATES"], "JO00004");
    // The reason names the file, never where it was collected from.
    assert!(!broken["EXCEPTION"].is_empty(), "{broken:?}");
    assert!(!broken["EXCEPTION"].contains('/'), "{broken:?}");
    let slip = pdftotext(&vol.join("IMAGES/JO00004.pdf"));
    assert!(
        slip.contains("Document not produced – technical issue"),
        "{slip}"
    );
    assert!(slip.contains("c-broken.pdf"), "{slip}");
    let ex = fs::read_to_string(vol.join("DATA/VOL001-exceptions.csv")).unwrap();
    assert!(ex.contains("JO00004"), "{ex}");
    let recon = fs::read_to_string(vol.join("DATA/reconciliation.md")).unwrap();
    assert!(
        recon.contains("produced 2 + withheld 0 + exceptions 1 = collected 3: balanced"),
        "{recon}"
    );
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
    // Volume 1's withheld note took JO00001 for its slip sheet, the other note JO00002–3.
    assert_eq!(rows[0]["BEGBATES"], "JO00004", "{rows:?}");
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
        text.contains("volume VOL001 (JO00002–JO00003, 1 documents, 2 pages, 1 withheld)"),
        "{text}"
    );
    assert!(
        text.contains("JO00002–JO00003  jo/b-note.txt (2 pages)"),
        "{text}"
    );
    assert!(
        text.contains("withheld  jo/a-note.txt (Attorney-Client Privilege)"),
        "{text}"
    );
    assert!(text.contains("volume VOL002 (JO00005–JO00006"), "{text}");
    let o = audit(&["audit", "v1.lex", "--productions", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["documents"][0]["first_bates"], "JO00002");
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

/// The OCR of a TIFF's stamp band alone (its bottom 133 rows, 32 pt at 300 dpi), cut out by
/// libtiff's `tiffcrop` and enlarged twice by poppler: whole-page OCR can misread a digit
/// of a 9 pt stamp.
fn band_ocr(tif: &Path, scratch: &Path) -> String {
    let band = scratch.join("band.tif");
    let o = Command::new("tiffcrop")
        .args(["-U", "px", "-E", "b", "-Y", "133"])
        .arg(tif)
        .arg(&band)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pdf = scratch.join("band.pdf");
    let o = Command::new("tiff2pdf")
        .arg("-o")
        .arg(&pdf)
        .arg(&band)
        .output()
        .unwrap();
    assert!(o.status.success());
    // Read at a few sizes: each reading is kept, the stamp must be in one of them.
    let mut all = String::new();
    for (dpi, colour, psm) in [
        ("450", "-gray", "6"),
        ("750", "-gray", "7"),
        ("600", "-mono", "7"),
    ] {
        let base = scratch.join("band");
        let o = Command::new("pdftoppm")
            .args(["-r", dpi, colour, "-singlefile"])
            .arg(&pdf)
            .arg(&base)
            .output()
            .unwrap();
        assert!(o.status.success());
        let ext = if colour == "-mono" { "pbm" } else { "pgm" };
        let o = Command::new("tesseract")
            .arg(base.with_extension(ext))
            .arg("-")
            .args(["--dpi", dpi, "--psm", psm])
            .output()
            .unwrap();
        all.push_str(&String::from_utf8_lossy(&o.stdout));
        all.push('\n');
    }
    all
}

/// Letters and digits in capitals, with the round shapes OCR confuses in a stamp's Courier
/// (O, Q, D and 0) read as one.
fn ocr_form(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| match c.to_ascii_uppercase() {
            'O' | 'Q' | 'D' => '0',
            c => c,
        })
        .collect()
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
        let band = if squash(&seen).contains(bates) {
            String::new()
        } else {
            band_ocr(&p, scratch.path())
        };
        assert!(
            squash(&seen).contains(bates)
                || band.lines().any(|l| ocr_form(l).contains(&ocr_form(bates))),
            "{w}: OCR reads {seen} and, of its stamp band alone, {band}"
        );
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
    assert!(read[0].contains("Withheld"), "{}", read[0]);
    let first = &read[1];
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
        fs::read_to_string(vol.join(format!("TEXT/{}.txt", rows[1]["BEGBATES"]))).unwrap();
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

/// A one-page PDF saying `text`, with `extra` objects from 5 on and `catalog` entries in its
/// catalog; its cross-reference table is correct, so any reader opens it.
fn small_pdf(text: &str, catalog: &str, extra: &[String]) -> Vec<u8> {
    let content = format!("BT /F1 12 Tf 72 700 Td ({text}) Tj ET");
    let mut objects = vec![
        format!("<< /Type /Catalog /Pages 2 0 R {catalog} >>"),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
    ];
    objects.extend(extra.iter().cloned());
    pdf_of(&objects)
}

fn pdf_of(objects: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{o}\nendobj\n", i + 1).bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for o in offsets {
        out.extend(format!("{o:010} 00000 n \n").bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .bytes(),
    );
    out
}

fn b64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

const MEMO: &str = "Counsel's privileged advice on the lease renewal.";

/// A matter whose every kind of item must be accounted for: a note; an email with a
/// readable attachment, an unreadable PDF attachment and a privileged memo; a PDF with an
/// embedded file; and a PDF whose page tree lists no pages.
fn family_matter() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m/jo");
    fs::create_dir_all(&m).unwrap();
    fs::write(m.join("a-note.txt"), "A note about the lease.\n").unwrap();
    let part = |name: &str, ctype: &str, body: &[u8]| {
        format!(
            "--XX\r\nContent-Type: {ctype}; name=\"{name}\"\r\nContent-Disposition: attachment; filename=\"{name}\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n",
            b64(body)
        )
    };
    let mail = format!(
        "From: Jo Park <jo@example.com>\r\nTo: Sam Lee <sam@example.com>\r\nBcc: Ana Cruz <ana@example.com>\r\nSubject: The lease papers\r\nDate: Mon, 4 Mar 2024 09:15:00 -0500\r\nReceived: from mx.example.com by mail.example.com; Tue, 5 Mar 2024 08:00:00 +0000\r\nMessage-ID: <lease-1@example.com>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n--XX\r\nContent-Type: text/plain\r\n\r\nThe lease papers are attached.\r\n{}{}{}--XX--\r\n",
        part("schedule.txt", "text/plain", b"Rent schedule for the year.\n"),
        part(
            "broken.pdf",
            "application/pdf",
            b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
        ),
        part("privileged-memo.txt", "text/plain", MEMO.as_bytes()),
    );
    fs::write(m.join("b-mail.eml"), mail).unwrap();
    let note = "Embedded note about the deposit.";
    let embedded = small_pdf(
        "Cover page of the report.",
        "/Names << /EmbeddedFiles << /Names [(notes.txt) 5 0 R] >> >>",
        &[
            "<< /Type /Filespec /F (notes.txt) /UF (notes.txt) /EF << /F 6 0 R >> >>".into(),
            format!(
                "<< /Type /EmbeddedFile /Length {} >>\nstream\n{note}\nendstream",
                note.len()
            ),
        ],
    );
    fs::write(m.join("c-report.pdf"), embedded).unwrap();
    let damaged = pdf_of(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        "<< /Type /Pages /Kids [] /Count 0 >>".into(),
    ]);
    fs::write(m.join("d-damaged.pdf"), damaged).unwrap();
    fs::write(
        dir.path().join("v.lex"),
        "workflow w \"Volume\"\nmatter \"m\"\nsources s {\n  files \"jo/**\"\n}\nproduction vol {\n  reads s\n  volume \"VOL001\"\n  bates \"JO\" start 1 width 5\n  legend c \"CONFIDENTIAL\"\n  designate c \"**\"\n  withhold \"**/privileged-memo.txt\" as \"Attorney-Client Privilege\" because \"Advice of counsel on the lease\"\n  fields BEGBATES, ENDBATES, BEGATTACH, ENDATTACH, PGCOUNT, CUSTODIAN, FILENAME, TEXTPATH, FROM, BCC, DATESENT, TIMESENT, DATERCVD, MESSAGEID, AUTHOR, FILEEXT, FILESIZE, MD5HASH, SHA1HASH, ATTACHCOUNT, PRODVOL, REDACTED, ALLCUSTODIANS\n}\n",
    )
    .unwrap();
    dir
}

#[test]
fn every_item_is_produced_withheld_or_an_exception_with_a_numbered_slip_sheet() {
    tools();
    let dir = family_matter();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.path().join("VOL001");
    let rows = read_dat(&vol.join("DATA/VOL001.dat"));
    let by_name = |n: &str| {
        rows.iter()
            .find(|r| r["FILENAME"] == n)
            .unwrap_or_else(|| panic!("no row for {n}: {rows:#?}"))
    };
    // Every item has a row and a number, gapless: four files, three attachments (one
    // withheld, one unreadable) and the PDF's embedded file.
    assert_eq!(rows.len(), 8, "{rows:#?}");
    let num = |s: &str| s.trim_start_matches("JO").parse::<u64>().unwrap();
    let mut next = 1;
    for r in &rows {
        assert_eq!(num(&r["BEGBATES"]), next, "{r:?}");
        next = num(&r["ENDBATES"]) + 1;
        assert!(vol.join(r["TEXTPATH"].replace('\\', "/")).is_file());
    }
    let status = |r: &BTreeMap<String, String>| r["PRODSTATUS"].clone();
    assert_eq!(status(by_name("a-note.txt")), "Produced");
    assert_eq!(status(by_name("b-mail.eml")), "Produced");
    assert_eq!(status(by_name("schedule.txt")), "Produced");
    assert_eq!(status(by_name("c-report.pdf")), "Produced");
    assert_eq!(status(by_name("notes.txt")), "Produced");
    let broken = by_name("broken.pdf");
    assert_eq!(status(broken), "Exception – technical issue");
    assert!(!broken["EXCEPTION"].is_empty(), "{broken:?}");
    let damaged = by_name("d-damaged.pdf");
    assert_eq!(status(damaged), "Exception – technical issue");
    assert!(!damaged["EXCEPTION"].is_empty(), "{damaged:?}");
    // The standard fields, the digests checked by Python's hashlib.
    let mail = by_name("b-mail.eml");
    assert_eq!(mail["BCC"], "Ana Cruz <ana@example.com>");
    assert_eq!(mail["DATESENT"], "2024-03-04");
    assert_eq!(mail["TIMESENT"], "09:15:00 -05:00");
    assert_eq!(mail["DATERCVD"], "2024-03-05");
    assert_eq!(mail["MESSAGEID"], "lease-1@example.com");
    assert_eq!(mail["AUTHOR"], "Jo Park <jo@example.com>");
    assert_eq!(mail["ATTACHCOUNT"], "3");
    assert_eq!(mail["FILEEXT"], "eml");
    assert_eq!(mail["PRODVOL"], "VOL001");
    assert_eq!(mail["REDACTED"], "N");
    assert_eq!(mail["ALLCUSTODIANS"], "Jo");
    let native = dir.path().join("m/jo/b-mail.eml");
    assert_eq!(
        mail["FILESIZE"],
        fs::metadata(&native).unwrap().len().to_string()
    );
    let digest = |algo: &str| {
        let o = Command::new("python3")
            .arg("-c")
            .arg(format!(
                "import hashlib,sys; print(hashlib.{algo}(open(sys.argv[1],'rb').read()).hexdigest())"
            ))
            .arg(&native)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(mail["MD5HASH"], digest("md5"));
    assert_eq!(mail["SHA1HASH"], digest("sha1"));
    let schedule = by_name("schedule.txt");
    assert_eq!(schedule["FILESIZE"], "28");
    assert_eq!(schedule["ATTACHCOUNT"], "0");
    assert_eq!(by_name("c-report.pdf")["ATTACHCOUNT"], "1");
    // The withheld memo's row says nothing of it but that it is withheld.
    let memo = rows
        .iter()
        .find(|r| r["PRODSTATUS"] == "Withheld – Privileged")
        .expect("the memo's slip-sheet row");
    assert_eq!(memo["FILENAME"], "");
    assert_eq!(memo["MD5HASH"], "");
    // The email's family spans all four of its items, the memo's slip sheet included.
    assert_eq!(mail["BEGATTACH"], mail["BEGBATES"]);
    for r in [by_name("schedule.txt"), broken, memo] {
        assert_eq!(r["BEGATTACH"], mail["BEGATTACH"], "{r:?}");
        assert_eq!(r["ENDATTACH"], mail["ENDATTACH"], "{r:?}");
    }
    // The embedded file is in its PDF's family, and its text was produced.
    let notes = by_name("notes.txt");
    assert_eq!(notes["BEGATTACH"], by_name("c-report.pdf")["BEGBATES"]);
    let text = fs::read_to_string(vol.join(notes["TEXTPATH"].replace('\\', "/"))).unwrap();
    assert!(text.contains("Embedded note about the deposit"), "{text}");
    // Each slip sheet is a page of its own, numbered and saying why, checked by poppler and
    // qpdf.
    for (r, words) in [
        (broken, "Document not produced – technical issue"),
        (damaged, "Document not produced – technical issue"),
        (memo, "Withheld – Privileged"),
    ] {
        let p = vol.join(format!("IMAGES/{}.pdf", r["BEGBATES"]));
        let q = Command::new("qpdf")
            .arg("--check")
            .arg(&p)
            .output()
            .unwrap();
        assert!(q.status.success(), "qpdf --check {}", p.display());
        let t = pdftotext(&p);
        assert!(t.contains(words), "{t}");
        assert!(t.contains(&r["BEGBATES"]), "{t}");
        assert!(t.contains("CONFIDENTIAL"), "{t}");
    }
    // The exceptions report, the privilege log linked to the slip sheet and the family, and
    // never the folder the memo was collected from.
    let ex = fs::read_to_string(vol.join("DATA/VOL001-exceptions.csv")).unwrap();
    let ex: Vec<csv::StringRecord> = csv::Reader::from_reader(ex.as_bytes())
        .records()
        .map(Result::unwrap)
        .collect();
    let bates: Vec<&str> = ex.iter().map(|r| &r[0]).collect();
    assert_eq!(bates, [broken["BEGBATES"].as_str(), &damaged["BEGBATES"]]);
    let log = fs::read_to_string(vol.join("DATA/VOL001-privilege-log.csv")).unwrap();
    assert!(!log.contains("jo/"), "{log}");
    let entries: Vec<csv::StringRecord> = csv::Reader::from_reader(log.as_bytes())
        .records()
        .map(Result::unwrap)
        .collect();
    assert_eq!(entries.len(), 1);
    assert_eq!(&entries[0][1], memo["BEGBATES"]);
    assert_eq!(
        &entries[0][2],
        format!("{}–{}", mail["BEGATTACH"], mail["ENDATTACH"])
    );
    // Nothing of the memo went out.
    for f in files_under(&vol) {
        let bytes = fs::read(&f).unwrap();
        assert!(
            memchr::memmem::find(&bytes, b"privileged advice").is_none(),
            "{}",
            f.display()
        );
    }
    // The reconciliation counts every level and balances.
    let recon = fs::read_to_string(vol.join("DATA/reconciliation.md")).unwrap();
    for line in [
        "| files | 4 | 3 | 0 | 1 | 0 |",
        "| attachments | 3 | 1 | 1 | 1 | 0 |",
        "| embedded files | 1 | 1 | 0 | 0 | 0 |",
        "produced 5 + withheld 1 + exceptions 2 = collected 8: balanced",
    ] {
        assert!(recon.contains(line), "no `{line}` in {recon}");
    }
}

/// A word and its box (x min, y min, x max, y max, from the top left).
type Boxed = (String, [f64; 4]);

/// The words poppler finds on a PDF's one page, each with its box, and the page's size.
fn words_on(path: &Path) -> ((f64, f64), Vec<Boxed>) {
    let o = Command::new("pdftotext")
        .arg("-bbox")
        .arg(path)
        .arg("-")
        .output()
        .unwrap();
    assert!(o.status.success(), "pdftotext -bbox {}", path.display());
    let html = String::from_utf8_lossy(&o.stdout).into_owned();
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        tag[at..].split('"').next().unwrap().parse().unwrap()
    };
    let page = html.split("<page").nth(1).unwrap();
    let size = (attr(page, "width"), attr(page, "height"));
    let words = html
        .split("<word")
        .skip(1)
        .map(|w| {
            let text = w.split('>').nth(1).unwrap().split('<').next().unwrap();
            let b = ["xMin", "yMin", "xMax", "yMax"].map(|k| attr(w, k));
            (text.to_string(), b)
        })
        .collect();
    (size, words)
}

#[test]
fn stamps_print_inside_a_four_point_page_and_a_cropped_page() {
    tools();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m/jo");
    fs::create_dir_all(&m).unwrap();
    let page = |media: &str, crop: &str, text: &str, at: &str| {
        let content = format!("BT /F1 3 Tf {at} Td ({text}) Tj ET");
        pdf_of(&[
            "<< /Type /Catalog /Pages 2 0 R >>".into(),
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".into(),
            format!("<< /Type /Page /Parent 2 0 R /MediaBox [{media}] {crop} /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"),
            format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        ])
    };
    fs::write(
        m.join("a-narrow.pdf"),
        page("0 0 4 200", "", "Hi", "0.5 100"),
    )
    .unwrap();
    fs::write(
        m.join("b-cropped.pdf"),
        page(
            "0 0 612 792",
            "/CropBox [200 300 400 500]",
            "Inside",
            "250 400",
        ),
    )
    .unwrap();
    fs::write(
        dir.path().join("v.lex"),
        "workflow w \"Volume\"\nmatter \"m\"\nsources s {\n  files \"jo/**\"\n}\nproduction vol {\n  reads s\n  volume \"VOL001\"\n  bates \"JO\" start 1 width 5\n  legend c \"CONFIDENTIAL\"\n  designate c \"**\"\n}\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.path().join("VOL001");
    for bates in ["JO00001", "JO00002"] {
        let p = vol.join(format!("IMAGES/{bates}.pdf"));
        let q = Command::new("qpdf")
            .arg("--check")
            .arg(&p)
            .output()
            .unwrap();
        assert!(q.status.success(), "qpdf --check {bates}");
        // Each stamp is a word poppler places wholly inside the page it prints on.
        let ((w, h), words) = words_on(&p);
        for stamp in [bates, "CONFIDENTIAL"] {
            let (_, b) = words
                .iter()
                .find(|(t, _)| t == stamp)
                .unwrap_or_else(|| panic!("{bates}: no `{stamp}` in {words:?}"));
            assert!(
                b[0] >= 0.0 && b[1] >= 0.0 && b[2] <= w && b[3] <= h,
                "{bates}: `{stamp}` at {b:?} on a {w} × {h} page"
            );
        }
    }
    // The cropped page shows its own words, and only its visible box.
    let (size, words) = words_on(&vol.join("IMAGES/JO00002.pdf"));
    assert!(size.0 <= 201.0, "{size:?}");
    assert!(words.iter().any(|(t, _)| t == "Inside"), "{words:?}");
}

#[test]
fn a_rule_on_whole_words_redacts_and_checks_whole_words_only() {
    tools();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m/jo");
    fs::create_dir_all(&m).unwrap();
    fs::write(
        m.join("helloworld-notes.txt"),
        "The company sent the accompanying papers worldwide.\nThe world knew the Company.\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("v.lex"),
        "workflow w \"Volume\"\nmatter \"m\"\nsources s {\n  files \"jo/**\"\n}\nproduction vol {\n  reads s\n  volume \"VOL001\"\n  bates \"JO\" start 1 width 5\n  legend c \"CONFIDENTIAL\"\n  designate c \"**\"\n  redact pattern \"\\\\b(company|world)\\\\b\" as \"Name\"\n}\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v.lex", out.path());
    // No false finding in longer words, other cases or the file name: the volume is written.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.path().join("VOL001");
    let text = fs::read_to_string(vol.join("TEXT/JO00001.txt")).unwrap();
    for kept in ["accompanying", "worldwide", "Company"] {
        assert!(text.contains(kept), "{kept}: {text}");
    }
    assert_eq!(text.matches("[REDACTED – NAME]").count(), 2, "{text}");
    let rows = read_dat(&vol.join("DATA/VOL001.dat"));
    assert_eq!(rows[0]["FILENAME"], "helloworld-notes.txt");
    // poppler finds neither word standing alone on the page.
    let page = pdftotext(&vol.join("IMAGES/JO00001.pdf"));
    let words: Vec<&str> = page
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    assert!(
        !words.contains(&"company") && !words.contains(&"world"),
        "{page}"
    );
    assert!(page.contains("accompanying"), "{page}");
}

#[test]
fn a_page_with_nothing_to_redact_stays_text_whatever_its_glyphs_read() {
    tools();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m/jo");
    fs::create_dir_all(&m).unwrap();
    // Words on the page, and a word set beyond its right edge that poppler leaves out: the
    // two readings of the page disagree, and there is nothing on it to redact.
    let content = "BT /F1 12 Tf 72 700 Td (Quarterly report for the tenants) Tj ET BT /F1 12 Tf 640 600 Td (Offpage) Tj ET";
    let pdf = pdf_of(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".into(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>".into(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
    ]);
    fs::write(m.join("report.pdf"), pdf).unwrap();
    fs::write(
        dir.path().join("v.lex"),
        "workflow w \"Volume\"\nmatter \"m\"\nsources s {\n  files \"jo/**\"\n}\nproduction vol {\n  reads s\n  volume \"VOL001\"\n  bates \"JO\" start 1 width 5\n  legend c \"CONFIDENTIAL\"\n  designate c \"**\"\n  redact ssn as \"PII\"\n}\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "v.lex", out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let vol = out.path().join("VOL001");
    let p = vol.join("IMAGES/JO00001.pdf");
    // poppler lists no image on the page: it is text, and reads as text.
    let list = Command::new("pdfimages")
        .arg("-list")
        .arg(&p)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert_eq!(list.lines().count(), 2, "{list}");
    let text = pdftotext(&p);
    assert!(text.contains("Quarterly report for the tenants"), "{text}");
    let recon = fs::read_to_string(vol.join("DATA/reconciliation.md")).unwrap();
    assert!(recon.contains("Pages rasterised: 0 of 1"), "{recon}");
}
