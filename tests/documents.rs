//! Documents from a run: the Word file's XML parts, its conversion by LibreOffice to PDF
//! (text compared with the stage's output), page 1 rendered and compared with a reviewed
//! snapshot image, provenance in both, and hard input surviving intact.

use crate::support;
use support::{fresh_store, Lexrun};

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::servers::{Answer, Fake, Speaks};

const DRAFT: &str = "# Statement of facts\n\n\
I, Zoë O'Brien-Nakamura, being duly sworn, state:\n\n\
1. My lease with Ōsaka Café & Bar \"Müller\" GmbH is dated January 5, 2024 (DOC000001).\n\
2. I paid **$1,250.00** on April 1, 2024.[^1]\n\
3. The landlord wrote *in writing*:\n\n\
> \"Repairs will be made within 30 days.\"\n\n\
4. The landlord also promised a refund on May 9, 2024.\n\n\
5. 大阪の店舗について。 <tags> & ampersands stay. **unclosed bold and a_snake_name.\n\n\
[^1]: Receipt in the client's file, DOC000001.\n";

fn run(out: &Path, draft: String) -> std::process::Output {
    let server = Fake::start(Speaks::Llama, Duration::ZERO, move |_| Answer {
        text: draft.clone(),
        fault: None,
    });
    let o = Lexrun::new()
        .env("LEXRUN_STORE", fresh_store())
        .args(["run", "tests/documents/filing.lex", "--out"])
        .arg(out)
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .output();
    drop(server);
    o
}

fn part(docx: &Path, name: &str) -> String {
    let mut z = zip::ZipArchive::new(fs::File::open(docx).unwrap()).unwrap();
    let mut s = String::new();
    z.by_name(name).unwrap().read_to_string(&mut s).unwrap();
    s
}

fn pdftotext(pdf: &Path) -> String {
    let o = Command::new("pdftotext")
        .arg(pdf)
        .arg("-")
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn an_affidavit_as_word_and_pdf() {
    let out = tempfile::tempdir().unwrap();
    let o = run(out.path(), DRAFT.into());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let docx = out.path().join("affidavit.docx");

    // The parts a word processor needs, with the content in them.
    let doc = part(&docx, "word/document.xml");
    for want in [
        "ZOË O&apos;BRIEN-NAKAMURA,",
        "Case No. 24-CV-00999 &lt;A&amp;B&gt;",
        "ŌSAKA CAFÉ &amp; BAR &quot;MÜLLER&quot; GMBH — 大阪,",
        "<w:pStyle w:val=\"Heading1\"/>",
        "<w:pStyle w:val=\"Quote\"/>",
        "<w:footnoteReference w:id=\"1\"/>",
        "大阪の店舗について。 &lt;tags&gt; &amp; ampersands stay.",
        "**unclosed bold and a_snake_name.",
        "Subscribed and sworn to before me",
        "Verification appendix",
        "<w:footerReference",
    ] {
        let want = want.replace("&apos;", "'");
        assert!(doc.contains(&want), "document.xml lacks {want:?}");
    }
    assert!(part(&docx, "word/footnotes.xml").contains("Receipt in the client"));
    assert!(part(&docx, "word/footer1.xml").contains("PAGE"));
    let custom = part(&docx, "docProps/custom.xml");
    assert!(
        custom.contains("name=\"lexrun.run\"") && custom.contains("name=\"lexrun.text_blake3\"")
    );
    let blake = blake3::hash(DRAFT.as_bytes()).to_hex().to_string();
    assert!(
        custom.contains(&blake),
        "the provenance names the text it came from"
    );
    // The appendix lists the unsupported promise of May 9.
    assert!(
        doc.contains("May 9, 2024</w:t>") && doc.contains(">unsupported</w:t>"),
        "appendix"
    );

    // The PDF lexrun wrote (through LibreOffice) says what the stage said.
    let pdf = out.path().join("affidavit.pdf");
    let text = words(&pdftotext(&pdf));
    for line in [
        "My lease with Ōsaka Café & Bar \"Müller\" GmbH is dated January 5, 2024 (DOC000001).",
        "I paid $1,250.00 on April 1, 2024.",
        "\"Repairs will be made within 30 days.\"",
        "大阪の店舗について。",
        "Receipt in the client's file, DOC000001.",
        "Notary Public",
    ] {
        assert!(
            text.contains(&words(line)),
            "the PDF lacks {line:?}:\n{text}"
        );
    }
    let info = lopdf::Document::load(&pdf).unwrap();
    let id = info.trailer.get(b"Info").unwrap().as_reference().unwrap();
    let dict = info.get_dictionary(id).unwrap();
    assert!(dict.get(b"LexrunRun").is_ok(), "{dict:?}");

    // Page 1, rendered, against the reviewed snapshot (tests/documents/affidavit-page1.png
    // for people; the .pgm beside it for the comparison).
    page_one_matches(&pdf, "affidavit-page1");
}

/// Page 1 of `pdf`, rendered, against the reviewed image `tests/documents/NAME.pgm` (and
/// `NAME.png` beside it for people to look at). `LEXRUN_ACCEPT_IMAGES=1` writes them again.
fn page_one_matches(pdf: &Path, name: &str) {
    let png = Path::new("tests/documents").join(name);
    let dir = tempfile::tempdir().unwrap();
    let st = Command::new("pdftoppm")
        .args(["-r", "40", "-gray", "-f", "1", "-l", "1", "-singlefile"])
        .arg(pdf)
        .arg(dir.path().join("p"))
        .status()
        .unwrap();
    assert!(st.success());
    let got = fs::read(dir.path().join("p.pgm")).unwrap();
    let reference = png.with_extension("pgm");
    if std::env::var_os("LEXRUN_ACCEPT_IMAGES").is_some() || !reference.exists() {
        fs::write(&reference, &got).unwrap();
        Command::new("pdftoppm")
            .args(["-r", "60", "-png", "-f", "1", "-l", "1", "-singlefile"])
            .arg(pdf)
            .arg(&png)
            .status()
            .unwrap();
    }
    let want = fs::read(&reference).unwrap();
    assert_eq!(got.len(), want.len(), "{name}: page size changed");
    let diff: u64 = got
        .iter()
        .zip(&want)
        .map(|(a, b)| a.abs_diff(*b) as u64)
        .sum();
    let mean = diff as f64 / got.len() as f64;
    assert!(mean < 2.0, "{name}: page 1 differs from the snapshot (mean difference {mean:.2}/255); review with LEXRUN_ACCEPT_IMAGES=1");
}

const LETTER: &str = "We represent Jane Smith, the tenant of Unit 3B at 1420 Harbor View Drive, Oakland (DOC000001).\n\n\
Ms. Smith paid Bay Area Mold Solutions $3,875.00 on January 9, 2024 to remove the mold your company left in her bedroom (DOC000001).\n\n\
We ask that you repay that sum within fourteen days of this letter.\n";

/// One draft laid out three ways, each filled from the matter's record: a letter
/// (letterhead, date, addressee, re: line, salutation, signature), a memo (To / From / Date /
/// Re) and a pleading (court caption); page 1 of each against its reviewed image.
#[test]
fn a_letter_a_memo_and_a_pleading_from_one_draft() {
    let out = tempfile::tempdir().unwrap();
    let server = Fake::start(Speaks::Llama, Duration::ZERO, |_| Answer {
        text: LETTER.into(),
        fault: None,
    });
    let o = Lexrun::new()
        .args(["run", "tests/documents/layouts.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let letter = part(&out.path().join("letter.docx"), "word/document.xml");
    let at = |what: &str| {
        letter
            .find(what)
            .unwrap_or_else(|| panic!("the letter lacks {what:?}"))
    };
    // In the order a letter reads.
    let order = [
        at("HARBOR TENANT LAW LLP"),
        at("410 Embarcadero West, Suite 200"),
        at("March 4, 2024"),
        at("Attn: Legal Department"),
        at("Jane Smith v. Acme Property Management LLC, Case No. 24-CV-01187"),
        at("Dear Acme Property Management LLC:"),
        at("We represent Jane Smith"),
        at("Very truly yours,"),
        at("Maria Lopez"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(!letter.contains("SUPERIOR COURT") && !letter.contains("Plaintiff,"));
    assert!(!letter.contains("Subscribed and sworn"));

    let text = |f: &str| words(&pdftotext(&out.path().join(f)));
    let memo = text("memo.pdf");
    for want in [
        "MEMORANDUM",
        "TO: Acme Property Management LLC",
        "FROM: Maria Lopez, Harbor Tenant Law LLP",
        "DATE: March 4, 2024",
        "RE: Jane Smith v. Acme Property Management LLC, Case No. 24-CV-01187",
        "We represent Jane Smith",
    ] {
        assert!(memo.contains(want), "the memo lacks {want:?}:\n{memo}");
    }
    assert!(!memo.contains("SUPERIOR COURT"), "{memo}");
    let pleading = text("motion.pdf");
    for want in [
        "SUPERIOR COURT OF THE STATE, COUNTY OF HARBOR",
        "Case No. 24-CV-01187",
        "JANE SMITH,",
        "We represent Jane Smith",
    ] {
        assert!(
            pleading.contains(want),
            "the pleading lacks {want:?}:\n{pleading}"
        );
    }
    assert!(!pleading.contains("Very truly yours"));
    for (pdf, name) in [
        ("letter.pdf", "letter-page1"),
        ("memo.pdf", "memo-page1"),
        ("motion.pdf", "pleading-page1"),
    ] {
        page_one_matches(&out.path().join(pdf), name);
    }
}

#[test]
fn very_long_paragraphs_and_malformed_markdown_survive() {
    // Five thousand different words: a model's stream that repeats itself is cut short, and
    // this paragraph is long, not looping.
    let long: String = (0..5000).map(|i| format!("word{i} ")).collect();
    let draft = format!(
        "1. {long}\n\n> > nested > quote\n\n#### deep heading\n\n[^x] dangling\n\n***\n\n* * *\n"
    );
    let out = tempfile::tempdir().unwrap();
    let o = run(out.path(), draft);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = part(&out.path().join("affidavit.docx"), "word/document.xml");
    assert!(
        doc.contains(long.trim_end()),
        "the long paragraph is one run, intact"
    );
    let text = pdftotext(&out.path().join("affidavit.pdf"));
    let n = text
        .split_whitespace()
        .filter(|w| {
            w.strip_prefix("word")
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(n, 5000);
    assert!(text.contains("[^x] dangling"));
}

#[test]
fn pdf_without_libreoffice_is_a_clear_failure() {
    let out = tempfile::tempdir().unwrap();
    let server = Fake::start(Speaks::Llama, Duration::ZERO, |_| Answer {
        text: "1. A fact.".into(),
        fault: None,
    });
    let o = Lexrun::new()
        .env("LEXRUN_STORE", fresh_store())
        .args(["run", "tests/documents/filing.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .env("LEXRUN_SOFFICE", "/nonexistent/soffice")
        .output();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("PDF output needs LibreOffice") && err.contains("libreoffice-writer-nogui"),
        "{err}"
    );
    // The Word document and the Markdown were still written.
    assert!(out.path().join("affidavit.docx").is_file());
    assert!(out.path().join("affidavit.md").is_file());
}
