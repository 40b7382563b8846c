//! The whole pipeline on a small real instruct model: `workflows/live.lex` on SmolLM2-135M-
//! Instruct (`scripts/small-model`), served by the real llama.cpp server on one CPU thread.
//! The model writes real prose and invents freely; what lexrun says of each claim is checked
//! here against the matter's own pages, read by this test, not by lexrun.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;
use support::{read_docx, run_record, servers, stderr, Lexrun};

const MATTER: &str = "workflows/matters/okafor-v-lakeside";

/// Each page of the matter's intake by its Bates stamp (the last line of the page).
fn pages() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut files: Vec<_> = fs::read_dir(Path::new(MATTER).join("intake"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for f in files {
        for page in fs::read_to_string(&f).unwrap().split('\u{c}') {
            let stamp = page
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap()
                .trim()
                .to_string();
            assert!(stamp.starts_with("OKAFOR"), "{stamp}");
            out.insert(stamp, page.to_string());
        }
    }
    out
}

/// Lower case, straight quotes, single spaces.
fn norm(s: &str) -> String {
    s.replace(['\u{201c}', '\u{201d}'], "\"")
        .replace(['\u{2018}', '\u{2019}'], "'")
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Every calendar date written in `text` (`March 3, 2025`, `March 3rd, 2025`, `2025-03-03`,
/// `3/3/2025`), as (year, month, day).
fn dates(text: &str) -> Vec<(u32, u32, u32)> {
    let t = norm(text);
    let mut out = Vec::new();
    let long =
        regex::Regex::new(r"(?i)\b([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b").unwrap();
    for c in long.captures_iter(&t) {
        if let Some(m) = MONTHS
            .iter()
            .position(|m| m.starts_with(&c[1]) && c[1].len() >= 3)
        {
            out.push((c[3].parse().unwrap(), m as u32 + 1, c[2].parse().unwrap()));
        }
    }
    let iso = regex::Regex::new(r"\b(\d{4})-(\d{2})-(\d{2})\b").unwrap();
    for c in iso.captures_iter(&t) {
        out.push((
            c[1].parse().unwrap(),
            c[2].parse().unwrap(),
            c[3].parse().unwrap(),
        ));
    }
    let us = regex::Regex::new(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b").unwrap();
    for c in us.captures_iter(&t) {
        out.push((
            c[3].parse().unwrap(),
            c[1].parse().unwrap(),
            c[2].parse().unwrap(),
        ));
    }
    out
}

/// Every amount of money written in `text`, in cents.
fn amounts(text: &str) -> Vec<u64> {
    let re = regex::Regex::new(r"\$\s?(\d[\d,]*)(?:\.(\d{2}))?").unwrap();
    re.captures_iter(text)
        .map(|c| {
            let whole: u64 = c[1].replace(',', "").parse().unwrap();
            whole * 100 + c.get(2).map_or(0, |m| m.as_str().parse().unwrap())
        })
        .collect()
}

/// Whether `claim` (of lexrun's `kind`) is on `page`, by this test's own reading.
fn on_page(kind: &str, claim: &Value, page: &str) -> bool {
    let text = claim["text"].as_str().unwrap();
    match kind {
        "date" => {
            let want = dates(text);
            if want.is_empty() {
                return norm(page).contains(&norm(text));
            }
            let have = dates(page);
            want.iter().all(|d| have.contains(d))
        }
        "amount" => {
            let want = amounts(text);
            if want.is_empty() {
                return norm(page).contains(&norm(text));
            }
            let have = amounts(page);
            want.iter().all(|a| have.contains(a))
        }
        "bates" => page.contains(text.trim()),
        "quote" => {
            let inner = text
                .trim()
                .trim_matches(|c| "\"\u{201c}\u{201d}".contains(c));
            norm(page).contains(&norm(inner))
        }
        _ => norm(page).contains(&norm(text)),
    }
}

fn bates_of(loc: &Value) -> Option<String> {
    loc["bates"].as_str().map(str::to_string)
}

/// The run's final verification report of `draft` (the last round's).
fn final_report(rec: &lexrun::run::RunRecord) -> (String, Value) {
    let v = rec.matters[0]
        .verifications
        .iter()
        .rfind(|v| v.stage == "draft")
        .expect("the draft was verified");
    let json = Path::new(&v.report).with_extension("json");
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    (v.decision.as_str().to_string(), report)
}

/// `workflows/live.lex` as shipped, but with room for a busy machine: every stage's
/// `timeout` raised to 30 minutes. The model decodes greedily (`temperature 0`, one server
/// slot), so what it writes does not depend on the load; only how long it takes does, and a
/// stage cut by its timeout on a loaded machine would fail this test for nothing it checks.
fn unhurried_workflow(dir: &Path) -> std::path::PathBuf {
    let src = fs::read_to_string("workflows/live.lex").unwrap();
    let re = regex::Regex::new(r"(?m)^(\s*)timeout \S+").unwrap();
    assert!(
        re.is_match(&src),
        "workflows/live.lex sets no stage timeout"
    );
    let file = dir.join("live.lex");
    fs::write(&file, re.replace_all(&src, "${1}timeout 30m").as_ref()).unwrap();
    file
}

#[test]
fn the_live_workflow_runs_to_the_end_on_a_real_model_and_its_verdicts_hold() {
    let server = servers::start_small();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let workflow = unhurried_workflow(dir.path());
    let o = Lexrun::new()
        .arg("run")
        .arg(&workflow)
        .arg("--matter")
        .arg(fs::canonicalize(MATTER).unwrap())
        .arg("--out")
        .arg(&out)
        .arg("--endpoint")
        .arg(format!("*={}", server.url))
        .output();
    let err = stderr(&o);
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1 | 4)), "exit {code:?}\n{err}");
    let (run, rec) = run_record(&out);
    let m = &rec.matters[0];
    // Every stage ran to the end: none failed, none was skipped (a small model's answer cut
    // for repeating itself is incomplete, and said so).
    for s in &m.steps {
        assert!(
            matches!(
                s.status,
                Some(
                    lexrun::run::Status::Done
                        | lexrun::run::Status::Blocked
                        | lexrun::run::Status::Incomplete
                )
            ),
            "step `{}` is {:?}: {:?}\n{err}",
            s.name,
            s.status,
            s.why
        );
    }
    for stage in ["gate", "draft", "attack"] {
        assert!(
            m.steps.iter().any(|s| s.name == stage),
            "no step `{stage}`\n{err}"
        );
    }
    // The stdlib prompts' answers parsed under their schemas with the real model.
    let answer = |stage: &str| -> Value {
        let rounds: Vec<_> = m.steps.iter().filter(|s| s.name == stage).collect();
        let last = rounds.last().unwrap();
        let file = last
            .outputs
            .iter()
            .find(|f| f.ends_with("answer.json"))
            .unwrap_or_else(|| panic!("`{stage}` wrote no answer.json: {:?}", last.outputs));
        serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap()
    };
    let gate = answer("gate");
    assert!(
        gate["grounds"].is_boolean() && gate["reason"].is_string(),
        "{gate}"
    );
    let attack = answer("attack");
    assert!(
        attack["passes"].is_boolean() && attack["objections"].is_array(),
        "{attack}"
    );

    // What lexrun says of each claim, checked against the pages by this test.
    let pages = pages();
    let (decision, report) = final_report(&rec);
    let claims = report["claims"].as_array().unwrap();
    // The greedy small model's last revision may cite nothing (its third draft, written once
    // the reviewer's self-contradicting passes are read as objections, does): there is then
    // no verdict to hold to the pages, and the verification must have passed on nothing.
    if claims.is_empty() {
        assert_eq!(
            decision, "passed",
            "a draft with no claims can only pass\n{err}"
        );
        assert!(
            m.steps.iter().filter(|s| s.name == "draft").count() > 2,
            "only a draft revised past the reviewer's contradictions cites nothing\n{err}"
        );
    }
    let mut judged = 0;
    for c in claims {
        let kind = c["kind"].as_str().unwrap();
        let status = c["status"].as_str().unwrap();
        let cited: Vec<String> = c["cited"]
            .as_array()
            .map(|a| a.iter().filter_map(bates_of).collect())
            .unwrap_or_default();
        if kind == "proposition" {
            judged += 1;
            let verdict = c["verdict"].as_str();
            let quote = c["quote"].as_str().unwrap_or("");
            let quoted_on_cited = quote.split_whitespace().count() >= 3
                && cited
                    .iter()
                    .filter_map(|b| pages.get(b))
                    .any(|p| norm(p).contains(&norm(quote)));
            if status == "supported" {
                assert_eq!(verdict, Some("supported"), "{c}");
                assert!(
                    quoted_on_cited,
                    "supported, but its quotation is on no cited page: {c}"
                );
            } else {
                assert!(
                    verdict != Some("supported") || !quoted_on_cited,
                    "blocked, but the judge quoted a cited page in support: {c}"
                );
            }
            continue;
        }
        match status {
            "supported" => {
                let b = bates_of(&c["source"]).unwrap_or_else(|| panic!("no page: {c}"));
                let page = pages.get(&b).unwrap_or_else(|| panic!("no page {b}: {c}"));
                assert!(on_page(kind, c, page), "called supported, not on {b}: {c}");
            }
            "miscited" => {
                for b in &cited {
                    if let Some(p) = pages.get(b) {
                        assert!(!on_page(kind, c, p), "called miscited, but on {b}: {c}");
                    }
                }
                assert!(
                    pages.values().any(|p| on_page(kind, c, p)),
                    "called miscited, but on no page at all: {c}"
                );
            }
            _ => {
                assert!(
                    !pages.values().any(|p| on_page(kind, c, p)),
                    "called {status}, but this test finds it on a page: {c}"
                );
            }
        }
    }
    // A sentence citing pages goes to the judge: its step is there whenever one was judged.
    if judged > 0 {
        assert!(m.steps.iter().any(|s| s.name == "judge draft"), "{err}");
    }

    // The exit code is the verifier's; the documents follow it. A blocked draft is still
    // written for a person to read, beside the declared path and marked as not for filing.
    let filed = out.join("declaration.docx");
    let draft = out.join("declaration.blocked-draft.docx");
    let unfinished = !m.incomplete_steps().is_empty();
    let docx = if (decision == "passed" || decision == "flagged") && unfinished {
        // A draft that passed but was cut is written only as an incomplete draft.
        assert_eq!(code, Some(4), "{err}");
        assert!(
            !filed.exists(),
            "an incomplete draft was written as the filing copy"
        );
        out.join("declaration.incomplete-draft.docx")
    } else if decision == "passed" || decision == "flagged" {
        assert_eq!(code, Some(0), "{err}");
        assert!(!draft.exists(), "a blocked draft of a draft that passed");
        filed
    } else {
        assert_eq!(decision, "blocked");
        assert_eq!(code, Some(1), "{err}");
        assert!(
            !filed.exists(),
            "a blocked draft was written as the filing copy"
        );
        assert!(
            !out.join("declaration.md").exists(),
            "a blocked draft left as Markdown"
        );
        let md = fs::read_to_string(run.join("report.md")).unwrap();
        assert!(md.contains("blocked"), "{md}");
        draft
    };
    // It opens in two readers that are not lexrun's: python-docx and LibreOffice.
    let d = read_docx(&docx);
    let paragraphs: Vec<String> = d["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let body = paragraphs.join("\n");
    let rows = d["tables"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_array()
        .unwrap();
    assert_eq!(rows.len(), claims.len() + 1, "one appendix row per claim");
    if docx.ends_with("declaration.blocked-draft.docx") {
        assert_eq!(
            paragraphs[0], "BLOCKED DRAFT — NOT FOR FILING OR SIGNATURE",
            "{body}"
        );
        assert!(d["footer"].to_string().contains("NOT FOR FILING"));
        // Every claim that is not supported is removed, and its marker names its row.
        let marker =
            regex::Regex::new(r"\[removed: [^\]]* — appendix nos?\. ([0-9, ]+)\]").unwrap();
        let marked: Vec<usize> = marker
            .captures_iter(&body)
            .flat_map(|c| {
                c[1].split(", ")
                    .map(|n| n.trim().parse::<usize>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        for (i, c) in claims.iter().enumerate() {
            if c["status"] != "supported" {
                assert!(
                    marked.contains(&(i + 1)),
                    "claim {} not removed: {c}\n{body}",
                    i + 1
                );
            }
        }
    } else if docx.ends_with("declaration.incomplete-draft.docx") {
        assert_eq!(
            paragraphs[0], "INCOMPLETE DRAFT — NOT FOR FILING OR SIGNATURE",
            "{body}"
        );
        assert!(d["footer"].to_string().contains("NOT FOR FILING"));
    } else {
        assert!(!body.contains("BLOCKED"), "{body}");
    }
    let txt = dir.path().join("txt");
    let s = std::process::Command::new("soffice")
        .args(["--headless", "--convert-to", "txt:Text", "--outdir"])
        .arg(&txt)
        .arg(&docx)
        .env("HOME", dir.path())
        .output()
        .expect("LibreOffice (scripts/install-tools installs it)");
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let stem = docx.file_stem().unwrap().to_string_lossy().into_owned();
    let text = fs::read_to_string(txt.join(format!("{stem}.txt"))).unwrap();
    assert!(text.contains("Verification appendix"), "{text}");
}
