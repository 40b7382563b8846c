//! A wrong answer is never presented as right, and nothing is half-written: an edited text
//! cache entry is detected, damaged page trees are errors naming the file, a page object
//! listed twice gets one number per page, an answer that is not UTF-8 is an error, a re-stamp
//! replaces the old set whole or not at all, an exhibit is never overwritten by its binder, a
//! lost ledger is not a fresh start, and `cache gc` keeps what `why` compares.

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lopdf::{Document, Object};
use support::pdf::{page, pdf, text_pdf};
use support::raw::{two_pool_workflow, Raw, Reply};
use support::servers::{Answer, Fake, Seen, Speaks};
use support::{lexrun, stderr, stdout, Lexrun};

fn verify(sources: &Path, draft: &Path, cache: &Path) -> std::process::Output {
    Lexrun::new()
        .arg("verify")
        .arg("--sources")
        .arg(sources)
        .arg(draft)
        .env("LEXRUN_CACHE", cache)
        .output()
}

#[test]
fn an_edited_text_cache_entry_is_detected_and_the_source_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let sources = dir.path().join("sources");
    fs::create_dir_all(&sources).unwrap();
    text_pdf(
        &sources.join("invoice.pdf"),
        &["Invoice 1187. Total due: $3,875.00 for repairs."],
    );
    let draft = dir.path().join("draft.md");
    fs::write(&draft, "The repairs cost $38,750.00.\n").unwrap();
    let cache = dir.path().join("cache");
    let o = verify(&sources, &draft, &cache);
    assert_eq!(o.status.code(), Some(1), "unsupported: {}", stdout(&o));
    let entries: Vec<PathBuf> = fs::read_dir(cache.join("text"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(entries.len(), 1);
    let text = fs::read_to_string(&entries[0]).unwrap();
    assert!(text.contains("3,875.00"));
    fs::write(&entries[0], text.replace("3,875.00", "38,750.00")).unwrap();
    let o = verify(&sources, &draft, &cache);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the edited cache made the amount supported: {}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("0 supported, 1 unsupported"),
        "{}",
        stdout(&o)
    );
    // Read again from the source, the entry is whole once more.
    assert!(fs::read_to_string(&entries[0])
        .unwrap()
        .contains("\"Invoice 1187. Total due: $3,875.00"));
}

/// A PDF of two pages, its page tree then changed by `damage`.
fn damaged(path: &Path, damage: impl Fn(&mut Document, lopdf::ObjectId, Vec<Object>)) {
    let bytes = pdf(&[page("First page: rent $1,250.00"), page("Second page")]);
    let mut doc = Document::load_mem(&bytes).unwrap();
    let root = doc
        .catalog()
        .unwrap()
        .get(b"Pages")
        .unwrap()
        .as_reference()
        .unwrap();
    let kids = doc
        .get_dictionary(root)
        .unwrap()
        .get(b"Kids")
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    damage(&mut doc, root, kids);
    doc.save(path).unwrap();
}

#[test]
fn a_pdf_whose_page_tree_lists_no_pages_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let sources = dir.path().join("sources");
    fs::create_dir_all(&sources).unwrap();
    let bad = sources.join("damaged.pdf");
    damaged(&bad, |doc, root, _| {
        let d = doc.get_dictionary_mut(root).unwrap();
        d.set("Kids", Object::Array(vec![]));
        d.set("Count", 2);
    });
    text_pdf(&sources.join("good.pdf"), &["The rent was $1,250.00."]);
    let draft = dir.path().join("draft.md");
    fs::write(&draft, "The rent was $1,250.00.\n").unwrap();
    let o = verify(&sources, &draft, &dir.path().join("cache"));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("Sources that could not be read") && out.contains("damaged.pdf"),
        "{out}"
    );
    assert!(out.contains("page tree lists no pages"), "{out}");
    let o = lexrun(&["text", bad.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("damaged.pdf"), "{}", stderr(&o));
}

#[test]
fn a_page_object_listed_twice_gets_one_number_per_page() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("twice.pdf");
    damaged(&input, |doc, root, kids| {
        let mut k = kids.clone();
        k.push(kids[0].clone());
        let d = doc.get_dictionary_mut(root).unwrap();
        d.set("Kids", Object::Array(k));
        d.set("Count", 3);
    });
    let out = dir.path().join("stamped");
    let o = lexrun(&[
        "bates",
        "--prefix",
        "DUP",
        "-o",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let map: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("bates-map.json")).unwrap()).unwrap();
    let numbers: Vec<&str> = map
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["bates"].as_str().unwrap())
        .collect();
    assert_eq!(numbers, ["DUP000001", "DUP000002", "DUP000003"]);
    let pages = lexrun::sources::read_pages(&out.join("twice.pdf")).unwrap();
    assert_eq!(pages.len(), 3);
    for (i, text) in pages.iter().enumerate() {
        let stamps: Vec<&str> = text
            .split_whitespace()
            .filter(|w| w.starts_with("DUP"))
            .collect();
        assert_eq!(stamps, [numbers[i]], "page {}: {text}", i + 1);
    }
}

#[test]
fn a_stamp_the_font_cannot_show_is_refused_and_latin_letters_are_encoded() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a.pdf");
    text_pdf(&input, &["A page"]);
    let out = dir.path().join("out");
    let o = lexrun(&[
        "bates",
        "--prefix",
        "MULLER",
        "--suffix",
        "-Ü",
        "-o",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let pages = lexrun::sources::read_pages(&out.join("a.pdf")).unwrap();
    assert!(pages[0].contains("MULLER000001-Ü"), "{}", pages[0]);
    assert!(!pages[0].contains("Ã"), "mojibake: {}", pages[0]);
    let o = lexrun(&[
        "bates",
        "--prefix",
        "MULLER",
        "--suffix",
        "-案件",
        "-o",
        dir.path().join("out2").to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot show"), "{}", stderr(&o));
}

/// Every file of a stamped set carries the stamps its map gives it.
fn consistent(out: &Path) -> Option<String> {
    let map: Vec<serde_json::Value> =
        serde_json::from_slice(&fs::read(out.join("bates-map.json")).ok()?).ok()?;
    let prefix = map[0]["bates"].as_str()?[..3].to_string();
    for row in &map {
        let file = Path::new(row["output"].as_str()?).file_name()?;
        let pages = lexrun::sources::read_pages(&out.join(file)).ok()?;
        let n = row["page"].as_u64()? as usize;
        if !pages.get(n - 1)?.contains(row["bates"].as_str()?) {
            return None;
        }
    }
    Some(prefix)
}

#[test]
fn a_re_stamp_replaces_the_set_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for i in 0..30 {
        let p = dir.path().join(format!("{i:02}.pdf"));
        let texts: Vec<String> = (0..4).map(|j| format!("Exhibit {i} page {j}")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        text_pdf(&p, &refs);
        inputs.push(p);
    }
    let out = dir.path().join("stamped");
    let stamp = |prefix: &str| {
        Lexrun::new()
            .args(["bates", "--prefix", prefix, "-o"])
            .arg(&out)
            .args(&inputs)
    };
    assert_eq!(stamp("OLD").output().status.code(), Some(0));
    fs::write(out.join("notes.txt"), "kept").unwrap();
    assert_eq!(consistent(&out).as_deref(), Some("OLD"));
    // Killed at moments throughout a re-stamp: always one whole set.
    for ms in [5u64, 20, 40, 80, 120, 200, 300, 500] {
        let mut child = stamp(if ms % 2 == 0 { "NEW" } else { "NEX" }).spawn();
        std::thread::sleep(Duration::from_millis(ms));
        let _ = child.kill();
        let _ = child.wait();
        let got = consistent(&out);
        assert!(got.is_some(), "after a kill at {ms} ms the set is mixed");
        assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "kept");
    }
    // A re-stamp that fails leaves the set it found.
    let before = consistent(&out).unwrap();
    let bad = dir.path().join("zz-bad.pdf");
    fs::write(&bad, b"%PDF-1.5 not really").unwrap();
    let o = Lexrun::new()
        .args(["bates", "--prefix", "BAD", "-o"])
        .arg(&out)
        .args(&inputs)
        .arg(&bad)
        .output();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(consistent(&out), Some(before));
}

#[test]
fn merge_refuses_to_write_over_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.pdf"), dir.path().join("b.pdf"));
    text_pdf(&a, &["Exhibit a"]);
    text_pdf(&b, &["Exhibit b"]);
    let before = fs::read(&a).unwrap();
    for target in [a.clone(), dir.path().join(".").join("a.pdf")] {
        let o = lexrun(&[
            "merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            target.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("both an input and the output"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(fs::read(&a).unwrap(), before);
}

#[test]
fn an_answer_that_is_not_utf8_is_an_error_not_replacement_characters() {
    let dir = tempfile::tempdir().unwrap();
    let firm = Raw::start(&["drafter"], Reply::Bytes(b"caf\xe9 au lait".to_vec()));
    let other = Raw::start(&["gatekeeper"], Reply::Text("Fine. ".into()));
    fs::write(
        dir.path().join("w.lex"),
        two_pool_workflow(&firm.url, &other.url, "LEXRUN_TEST_KEY_UTF8", 64),
    )
    .unwrap();
    fs::write(dir.path().join("a.txt"), "A letter.").unwrap();
    let out = dir.path().join("out");
    let o = Lexrun::new()
        .arg("run")
        .arg(dir.path().join("w.lex"))
        .arg("--out")
        .arg(&out)
        .args(["--backoff-ms", "5"])
        .env("LEXRUN_TEST_KEY_UTF8", "k")
        .output();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (run, rec) = support::run_record(&out);
    let why = rec.matters[0].steps[0].why.clone().unwrap_or_default();
    assert!(why.contains("not UTF-8"), "{why}");
    assert!(!out.join("draft.md").exists());
    let mut all = String::new();
    for f in ["run.json", "report.md"] {
        all.push_str(&fs::read_to_string(run.join(f)).unwrap());
    }
    assert!(!all.contains('\u{FFFD}'));
}

/// A llama.cpp-protocol server for `tests/runtime/pipeline.lex`.
fn pipeline_server() -> Fake {
    Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            "1. The tenant states under oath that the monthly payment of $1,250.00 \
             for April 2024 (TEST000002) reached the landlord's agent in full, and that every \
             later month was withheld only because the apartment stayed unheatable.\n"
                .into()
        };
        Answer { text, fault: None }
    })
}

fn pipeline(matter: &Path, out: &Path, store: &Path, url: &str) -> std::process::Output {
    Lexrun::new()
        .args(["run", "tests/runtime/pipeline.lex", "--matter"])
        .arg(matter)
        .arg("--out")
        .arg(out)
        .arg("--store")
        .arg(store)
        .args(["--endpoint", &format!("gpu_a={url}")])
        .args(["--endpoint", &format!("gpu_b={url}")])
        .output()
}

#[test]
fn a_lost_ledger_is_an_error_not_a_fresh_start() {
    let dir = tempfile::tempdir().unwrap();
    let matter = dir.path().join("matter");
    support::copy_dir(Path::new("tests/runtime/matter"), &matter);
    let store = dir.path().join("store");
    let srv = pipeline_server();
    let o = pipeline(&matter, &dir.path().join("a"), &store, &srv.url);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The earlier output, copied back into the matter: refused while the ledger knows it.
    fs::copy(
        dir.path().join("a/draft.md"),
        matter.join("intake/03-copy.txt"),
    )
    .unwrap();
    let losses: [fn(&Path); 2] = [
        |p| fs::remove_file(p).unwrap(),
        |p| fs::write(p, b"").unwrap(),
    ];
    for lose in losses {
        for f in ["ledger.sqlite-wal", "ledger.sqlite-shm"] {
            let _ = fs::remove_file(store.join(f));
        }
        lose(&store.join("ledger.sqlite"));
        let calls = srv.calls.load(std::sync::atomic::Ordering::SeqCst);
        let o = pipeline(&matter, &dir.path().join("b"), &store, &srv.url);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("missing or empty"), "{}", stderr(&o));
        assert_eq!(
            srv.calls.load(std::sync::atomic::Ordering::SeqCst),
            calls,
            "nothing was sent to the model"
        );
    }
}

#[test]
fn cache_gc_keeps_the_prompts_why_compares() {
    let dir = tempfile::tempdir().unwrap();
    let matter = dir.path().join("matter");
    support::copy_dir(Path::new("tests/runtime/matter"), &matter);
    let store = dir.path().join("store");
    let srv = pipeline_server();
    assert_eq!(
        pipeline(&matter, &dir.path().join("a"), &store, &srv.url)
            .status
            .code(),
        Some(0)
    );
    let letter = matter.join("intake/01-letter.txt");
    let text = fs::read_to_string(&letter).unwrap();
    fs::write(
        &letter,
        text.replace("Nothing was repaired.", "Nothing was fixed."),
    )
    .unwrap();
    let o = pipeline(&matter, &dir.path().join("b"), &store, &srv.url);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let store_arg = store.to_str().unwrap();
    let o = lexrun(&[
        "cache",
        "gc",
        "tests/runtime/pipeline.lex",
        "--keep",
        "1",
        "--store",
        store_arg,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = lexrun(&[
        "why",
        "tests/runtime/pipeline.lex",
        "gate",
        "--store",
        store_arg,
    ]);
    let text = stdout(&o);
    assert!(
        text.contains("-Nothing was repaired.") && text.contains("+Nothing was fixed."),
        "why lost its diff: {text}"
    );
}
