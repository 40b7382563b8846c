//! The review page, opened in headless Chromium: every claim marked with its status, the
//! evidence of a selected claim (its reason, or its page with the match highlighted, the scan
//! of an OCR'd page), keyboard navigation and filters, the print layout, markup in drafts and
//! evidence shown as text, a moved source file, the intake guard, and a screenshot against
//! the reviewed snapshot. Without Chromium (`scripts/install-tools` installs it) the browser
//! tests say so and pass.

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;
use support::browser::{self, Browser};

const MATTER: &str = "workflows/matters/smith-v-acme";
const READY: &str = "document.body && document.body.getAttribute('data-ready') === '1'";

/// One browser at a time: the machine running the tests has few cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn browser() -> Option<(Browser, std::sync::MutexGuard<'static, ()>)> {
    if let Err(why) = browser::chromium() {
        eprintln!("skipped: {why}");
        return None;
    }
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    Some((Browser::launch(1280, 900).expect("chromium starts"), guard))
}

/// `lexrun verify --html` and `--json` on the same draft: the page, in a temp dir, and the
/// claims as the JSON report gives them.
fn page(sources: &[&Path], draft: &Path) -> (tempfile::TempDir, PathBuf, Value) {
    let run = |flag: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lexrun"));
        // Never the user's own store.
        c.env("XDG_DATA_HOME", draft.with_extension("data"))
            .env_remove("LEXRUN_STORE")
            .env_remove("LEXRUN_LEDGER");
        c.arg("verify").arg(flag);
        for s in sources {
            c.arg("--sources").arg(s);
        }
        let o = c.arg(draft).output().unwrap();
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("review.html");
    fs::write(&file, run("--html")).unwrap();
    let json = serde_json::from_slice(&run("--json")).unwrap();
    (dir, file, json)
}

fn smith() -> (tempfile::TempDir, PathBuf, Value) {
    page(
        &[Path::new(&format!("{MATTER}/exhibits"))],
        Path::new(&format!("{MATTER}/drafts/affidavit-draft.md")),
    )
}

/// The claim's text as the page shows it in the draft: its marks' text without the icon and
/// the status word, with white space collapsed.
fn shown_claim(b: &mut Browser, i: usize) -> Value {
    b.eval(&format!(
        "(() => {{ const ms = [...document.querySelectorAll('#draft mark.c[data-i=\"{i}\"]')];
            if (!ms.length) return null;
            const own = ms.filter(m => !m.parentElement.closest('mark.c[data-i=\"{i}\"]'));
            const text = own.map(m => {{ const c = m.cloneNode(true);
                c.querySelectorAll('.ic, .sw').forEach(x => x.remove()); return c.textContent; }}).join('');
            return {{ status: ms[0].getAttribute('data-s'), word: ms[ms.length - 1].querySelector('.sw:last-child') ?
                ms[ms.length - 1].querySelector('.sw:last-child').textContent : null,
                text: text.replace(/\\s+/g, ' ').trim(), id: ms[0].id }}; }})()"
    ))
}

#[test]
fn every_claim_is_marked_with_its_status() {
    let (_dir, file, json) = smith();
    let Some((mut b, _g)) = browser() else { return };
    b.open(&file, READY);
    let claims = json["claims"].as_array().unwrap();
    assert!(claims.len() >= 20, "{json}");
    let marks = b.eval("new Set([...document.querySelectorAll('#draft mark.c[data-i]')].map(m => m.dataset.i)).size");
    assert_eq!(
        marks.as_u64(),
        Some(claims.len() as u64),
        "one mark per claim"
    );
    for (i, c) in claims.iter().enumerate() {
        let shown = shown_claim(&mut b, i);
        assert_eq!(shown["status"], c["status"], "claim {i}: {c}");
        assert_eq!(
            shown["word"], c["status"],
            "claim {i} says its status in words"
        );
        assert_eq!(shown["id"], format!("c{i}"));
        let want = c["text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(shown["text"].as_str(), Some(want.as_str()), "claim {i}");
    }
    // The problems, unsupported first, each a link into the draft; and the counts.
    let unsupported: Vec<usize> = claims
        .iter()
        .enumerate()
        .filter(|(_, c)| c["status"] == "unsupported")
        .map(|(i, _)| i)
        .collect();
    let listed = b.eval("[...document.querySelectorAll('#problems li a')].map(a => [+a.dataset.i, a.getAttribute('href')])");
    let listed: Vec<(u64, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x[0].as_u64().unwrap(), x[1].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(listed.len(), unsupported.len());
    for ((i, href), want) in listed.iter().zip(&unsupported) {
        assert_eq!(*i as usize, *want);
        assert_eq!(href, &format!("#c{want}"));
    }
    let counts = b.eval("[...document.querySelectorAll('table.counts')[0].querySelectorAll('tbody tr')].map(r => r.innerText.replace(/\\s+/g, ' ').trim())");
    let counts = counts.to_string();
    assert!(
        counts.contains(&format!("unsupported {}", unsupported.len()))
            && counts.contains(&format!("supported {}", json["supported"])),
        "{counts}"
    );
    // The provenance is on the page and in its marker.
    let html = fs::read_to_string(&file).unwrap();
    assert!(html.contains("<!-- lexrun:provenance kind=review command=lexrun_verify"));
    assert!(b
        .eval("document.querySelector('.prov').innerText")
        .to_string()
        .contains("draft blake3"));
}

#[test]
fn selecting_a_claim_shows_its_reason_or_its_page_with_the_match() {
    let (_dir, file, json) = smith();
    let Some((mut b, _g)) = browser() else { return };
    b.open(&file, READY);
    let claims = json["claims"].as_array().unwrap();

    // An unsupported claim, from the list of problems: its reason, and the nearest pages.
    let (ui, u) = claims
        .iter()
        .enumerate()
        .find(|(_, c)| c["kind"] == "citation" && c["status"] == "unsupported")
        .unwrap();
    b.click(&format!("#problems a[data-i=\"{ui}\"]"));
    assert_eq!(
        b.eval("document.body.dataset.selected"),
        Value::from(ui.to_string())
    );
    let reason = b.eval("document.querySelector('#ev-body .reason').textContent");
    assert_eq!(reason, u["reason"], "{u}");
    assert!(b.eval("document.activeElement.id").as_str() == Some(&format!("c{ui}")));

    // A supported amount, clicked in the draft: the page that supports it, with the amount
    // highlighted in the page's text.
    let (si, s) = claims
        .iter()
        .enumerate()
        .find(|(_, c)| c["text"] == "$2,150.00")
        .unwrap();
    assert_eq!(s["status"], "supported");
    b.click(&format!("#draft mark#c{si}"));
    let head = b.eval("document.querySelector('#ev-body h3').textContent");
    let src = &s["source"];
    assert_eq!(
        head.as_str().unwrap(),
        format!(
            "Supported by {}, page {}",
            src["file"].as_str().unwrap(),
            src["page"]
        )
    );
    let hit = b.eval("[...document.querySelectorAll('#ev-body pre mark')].map(m => m.textContent)");
    assert_eq!(
        hit,
        serde_json::json!(["2,150.00"]),
        "the match, highlighted"
    );
    let page_text = b.eval("document.querySelector('#ev-body pre').textContent");
    assert!(page_text.as_str().unwrap().contains("2,150.00"));

    // A claim only the scanned letter supports: the scan itself, beside its OCR text.
    let (ci, _) = claims
        .iter()
        .enumerate()
        .find(|(_, c)| {
            c["status"] == "supported"
                && c["source"]["file"]
                    .as_str()
                    .is_some_and(|f| f.ends_with("01-client-letter-scan.pdf"))
        })
        .expect("a claim supported by the scan");
    b.click(&format!("#draft mark#c{ci}"));
    let img = b.eval(
        "(async () => { const i = document.querySelector('#ev-body img'); if (!i) return null;
          await i.decode(); return [i.naturalWidth, i.naturalHeight, i.alt]; })()",
    );
    assert!(img[0].as_u64().unwrap() > 200, "{img}");
    assert!(
        img[2].as_str().unwrap().starts_with("Scan of page 1 of"),
        "{img}"
    );
    assert_eq!(
        b.eval("document.querySelectorAll('#ev-body pre mark').length"),
        1
    );
}

#[test]
fn keys_move_between_problems_and_filters_narrow_them() {
    let (_dir, file, json) = smith();
    let Some((mut b, _g)) = browser() else { return };
    b.open(&file, READY);
    let problems: Vec<String> = json["claims"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, c)| c["status"] != "supported")
        .map(|(i, _)| i.to_string())
        .collect();
    assert!(problems.len() >= 2);
    b.key("n");
    assert_eq!(
        b.eval("document.body.dataset.selected"),
        Value::from(problems[0].clone())
    );
    b.key("n");
    assert_eq!(
        b.eval("document.body.dataset.selected"),
        Value::from(problems[1].clone())
    );
    b.key("p");
    assert_eq!(
        b.eval("document.body.dataset.selected"),
        Value::from(problems[0].clone())
    );

    // Only citations: the list shows the citation problems alone.
    b.eval("(() => { const s = document.getElementById('f-kind'); s.value = 'citation'; s.dispatchEvent(new Event('change')); })()");
    let shown = b.eval("[...document.querySelectorAll('#problems li')].filter(l => !l.hidden).map(l => l.dataset.k)");
    assert!(!shown.as_array().unwrap().is_empty());
    assert!(
        shown.as_array().unwrap().iter().all(|k| k == "citation"),
        "{shown}"
    );
    // Only dates, and of them the supported ones: the keys move through the claims of that
    // kind and status.
    b.eval("(() => { const s = document.getElementById('f-kind'); s.value = 'date'; s.dispatchEvent(new Event('change')); })()");
    b.eval("(() => { const s = document.getElementById('f-status'); s.value = 'supported'; s.dispatchEvent(new Event('change')); })()");
    b.key("n");
    let sel: usize = b.eval("+document.body.dataset.selected").as_u64().unwrap() as usize;
    let c = &json["claims"][sel];
    assert!(c["status"] == "supported" && c["kind"] == "date", "{c}");
    // A supported citation is no longer marked while the filter shows dates.
    let dimmed = b.eval("getComputedStyle(document.querySelector('#draft mark.c[data-k=\"citation\"]')).borderBottomStyle");
    assert_eq!(dimmed, "none");
}

#[test]
fn the_print_layout_lists_every_problem_with_its_evidence() {
    let (dir, file, json) = smith();
    let Some((mut b, _g)) = browser() else { return };
    b.open(&file, READY);
    b.call(
        "Emulation.setEmulatedMedia",
        serde_json::json!({"media": "print"}),
    )
    .unwrap();
    let layout = b.eval("[getComputedStyle(document.getElementById('print-problems')).display, getComputedStyle(document.getElementById('evidence')).display, document.querySelectorAll('#print-problems tbody tr').length]");
    let problems: Vec<&Value> = json["claims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "supported")
        .collect();
    assert_eq!(layout[0], "block");
    assert_eq!(layout[1], "none");
    assert_eq!(layout[2].as_u64(), Some(problems.len() as u64));
    // Printed for real: every problem and its reason are on paper.
    let pdf = dir.path().join("printed.pdf");
    fs::write(&pdf, b.print_pdf()).unwrap();
    let o = Command::new("pdftotext")
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = words(&String::from_utf8_lossy(&o.stdout));
    assert!(text.contains("Every problem, with its evidence"), "{text}");
    for c in problems {
        for part in [c["text"].as_str().unwrap(), c["reason"].as_str().unwrap()] {
            assert!(
                text.contains(&words(part)),
                "{part:?} is not printed:\n{text}"
            );
        }
    }
}

#[test]
fn markup_in_drafts_and_evidence_is_shown_as_text() {
    let (_dir, file, json) = page(
        &[Path::new("tests/review/hostile/sources")],
        Path::new("tests/review/hostile/draft.md"),
    );
    let html = fs::read_to_string(&file).unwrap();
    assert_eq!(
        html.matches("<script").count(),
        2,
        "only the page's own scripts"
    );
    let Some((mut b, _g)) = browser() else { return };
    b.open(&file, READY);
    assert_eq!(b.eval("typeof window.pwned"), "undefined");
    assert_eq!(b.eval("document.scripts.length"), 2);
    assert_eq!(
        b.eval("document.querySelectorAll('#draft img, #draft b, main script').length"),
        0
    );
    let draft = b
        .eval("(() => { const d = document.getElementById('draft').cloneNode(true); d.querySelectorAll('.ic, .sw').forEach(x => x.remove()); return d.textContent; })()")
        .to_string();
    for s in [
        "<script>window.pwned = 1</script>",
        "<img src=x onerror=\\\"window.pwned = 2\\\">",
        "{{evidence}}",
        "{{#each sources}}x{{/each}}",
        "</mark></main><script>window.pwned = 3</script>",
    ] {
        assert!(draft.contains(s), "{s} is not shown as text: {draft}");
    }
    // The page of the lease, shown beside a claim it supports, is text too.
    let claims = json["claims"].as_array().unwrap();
    let i = claims
        .iter()
        .position(|c| c["text"] == "$1,250.00")
        .unwrap();
    assert_eq!(claims[i]["status"], "supported");
    b.click(&format!("#draft mark#c{i}"));
    let ev = b
        .eval("document.getElementById('ev-body').textContent")
        .to_string();
    assert!(
        ev.contains("<script>window.pwned = 4</script> {{evidence}}"),
        "{ev}"
    );
    assert!(
        ev.contains("<b onclick=\\\"window.pwned = 5\\\">bold</b> </pre></aside>"),
        "{ev}"
    );
    assert_eq!(
        b.eval("document.querySelectorAll('#ev-body b, #ev-body script').length"),
        0
    );
    b.click("#ev-body pre");
    assert_eq!(b.eval("typeof window.pwned"), "undefined");
}

#[test]
fn a_page_whose_source_file_moved_still_opens_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("sources");
    fs::create_dir(&src).unwrap();
    fs::copy(
        "tests/review/hostile/sources/lease.txt",
        src.join("lease.txt"),
    )
    .unwrap();
    let draft = "The lease is dated January 5, 2024 and the rent was $1,250.00.\n";
    let ev = lexrun::verify::evidence::load(std::slice::from_ref(&src), Vec::new()).unwrap();
    let v = lexrun::verify::verify(draft, &ev);
    assert!(v
        .outcomes
        .iter()
        .all(|o| o.status == lexrun::verify::Status::Supported));
    // The source moves away after the verification, before the page is made.
    fs::rename(src.join("lease.txt"), dir.path().join("moved.txt")).unwrap();
    let html = lexrun::review::page(&lexrun::review::Review {
        title: "draft.md",
        draft,
        outcomes: &v.outcomes,
        files: &v.files,
        evidence: &ev,
        provenance: vec![("run".into(), "run-test".into())],
        images: false,
        ids: &[],
    });
    let file = dir.path().join("review.html");
    fs::write(&file, &html).unwrap();
    let missing = src.join("lease.txt").display().to_string();
    assert!(html.contains("Source file missing"), "{html}");
    let Some((mut b, _g)) = browser() else { return };
    b.open(&file, READY);
    let banner = b
        .eval("document.querySelector('.warn.missing').textContent")
        .to_string();
    assert!(
        banner.contains(&missing) && banner.contains("moved or been deleted"),
        "{banner}"
    );
    b.click("#draft mark#c0");
    let ev = b
        .eval("document.getElementById('ev-body').textContent")
        .to_string();
    assert!(
        ev.contains(&format!("The source file {missing} is missing"))
            && ev.contains("January 5, 2024"),
        "{ev}"
    );
}

#[test]
fn the_intake_guard_refuses_a_copy_of_the_page_as_evidence() {
    let (dir, file, _) = page(
        &[Path::new("tests/review/hostile/sources")],
        Path::new("tests/review/hostile/draft.md"),
    );
    let copy = dir.path().join("exhibit-7.html");
    fs::copy(&file, &copy).unwrap();
    let store = lexrun::store::Store::open(&dir.path().join("store")).unwrap();
    let text = fs::read_to_string(&copy).unwrap();
    let v = lexrun::run::intake::check(&store, "m", "exhibit-7.html", &copy, &text, &[]);
    assert!(v.blocked(), "{v:?}");
    assert!(v.refused.unwrap().contains("provenance marker"));
}

/// Grey levels of a PNG, reduced `by` times in each direction (a mean over each block).
fn grey(png: &[u8], by: usize) -> (usize, usize, Vec<u8>) {
    let dec = png::Decoder::new(std::io::Cursor::new(png));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let (w, h) = (info.width as usize / by, info.height as usize / by);
    let mut out = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut sum = 0u32;
            for dy in 0..by {
                for dx in 0..by {
                    let p = ((y * by + dy) * info.width as usize + x * by + dx) * ch;
                    let (r, g, b) = (buf[p] as u32, buf[p + 1] as u32, buf[p + 2] as u32);
                    sum += (r * 299 + g * 587 + b * 114) / 1000;
                }
            }
            out[y * w + x] = (sum / (by * by) as u32) as u8;
        }
    }
    (w, h, out)
}

#[test]
fn the_page_looks_as_reviewed() {
    let (_dir, file, json) = smith();
    let Some((mut b, _g)) = browser() else { return };
    b.open(&file, READY);
    // A fixed state: the first problem selected, the provenance's draft hash hidden (it is
    // the same for the same draft, but the sources' paths are absolute).
    b.eval("document.querySelector('.prov').style.visibility = 'hidden'");
    let first = json["claims"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["status"] == "unsupported")
        .unwrap();
    b.click(&format!("#problems a[data-i=\"{first}\"]"));
    b.eval("window.scrollTo(0, 0)");
    let shot = b.screenshot();
    let (w, h, got) = grey(&shot, 4);
    let snap = Path::new("tests/review/page.png");
    let reference = snap.with_extension("pgm");
    let pgm = |w: usize, h: usize, px: &[u8]| {
        let mut v = format!("P5\n{w} {h}\n255\n").into_bytes();
        v.extend_from_slice(px);
        v
    };
    if std::env::var_os("LEXRUN_ACCEPT_IMAGES").is_some() || !reference.exists() {
        fs::write(&reference, pgm(w, h, &got)).unwrap();
        fs::write(snap, &shot).unwrap();
    }
    let want = fs::read(&reference).unwrap();
    let header = format!("P5\n{w} {h}\n255\n");
    assert!(want.starts_with(header.as_bytes()), "the page size changed");
    let want = &want[header.len()..];
    let diff: u64 = got
        .iter()
        .zip(want)
        .map(|(a, b)| a.abs_diff(*b) as u64)
        .sum();
    let mean = diff as f64 / got.len() as f64;
    assert!(
        mean < 4.0,
        "the page differs from the snapshot (mean difference {mean:.2}/255); review tests/review/page.png with LEXRUN_ACCEPT_IMAGES=1"
    );
}
