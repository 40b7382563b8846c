//! Reviewers' decisions from the command line: `lexrun decide` confirms a flagged claim by a
//! page, strikes one, or waives one; `lexrun verify` applies them while the sentence and the
//! page are unchanged, and says when one lapsed; bad decisions are refused with nothing
//! written.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::Lexrun;

const PAGES: &str =
    "RESIDENTIAL LEASE\n\nThe Tenant shall pay rent of $2,150.00 per month.\n\nSMITH000001\u{c}\
Tenant took possession of the unit in the first days of spring.\n\nSMITH000002\n";

const DRAFT: &str = "The Tenant moved in on March 3, 2023.\n\n\
The rent was $2,150.00 a month.\n\n\
Courts enforce such terms. Doe v. Roe, 999 F.3d 123 (9th Cir. 2021).\n\n\
The \"Leased Unit Premises\" is the apartment.\n";

struct Desk {
    dir: tempfile::TempDir,
    store: PathBuf,
}

impl Desk {
    fn new() -> Desk {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        for matter in ["smith", "jones"] {
            let intake = dir.path().join(matter).join("intake");
            fs::create_dir_all(&intake).unwrap();
            fs::write(intake.join("lease.txt"), PAGES).unwrap();
            fs::write(dir.path().join(matter).join("draft.md"), DRAFT).unwrap();
        }
        Desk { dir, store }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn lexrun(&self, args: &[&str]) -> std::process::Output {
        Lexrun::new()
            .env("LEXRUN_STORE", &self.store)
            .env("USER", "osuser")
            .current_dir(self.dir.path())
            .args(args)
            .output()
    }

    fn verify(&self, matter: &str) -> (Option<i32>, Value) {
        let o = self.lexrun(&[
            "verify",
            "--json",
            "--sources",
            &format!("{matter}/intake"),
            &format!("{matter}/draft.md"),
        ]);
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        (o.status.code(), v)
    }

    fn decide(&self, matter: &str, args: &[&str]) -> std::process::Output {
        let mut all = vec!["decide"];
        all.extend_from_slice(args);
        let sources = format!("{matter}/intake");
        let draft = format!("{matter}/draft.md");
        all.extend_from_slice(&["--draft", &draft, "--sources", &sources]);
        self.lexrun(&all)
    }

    fn decisions(&self, matter: &str) -> Vec<lexrun::store::Decision> {
        match lexrun::store::Store::open(&self.store) {
            Ok(s) => s.decisions(matter).unwrap(),
            Err(_) => Vec::new(),
        }
    }
}

/// The id of the claim whose text holds `words`, and its status.
fn claim<'a>(v: &'a Value, words: &str) -> (&'a str, &'a str) {
    let c = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["text"].as_str().unwrap().contains(words))
        .unwrap_or_else(|| panic!("no claim `{words}` in {v}"));
    (c["id"].as_str().unwrap(), c["status"].as_str().unwrap())
}

fn ok(o: &std::process::Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn refused(o: &std::process::Output, says: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(says), "expected `{says}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn confirmed_struck_and_waived_claims_let_the_draft_pass_once_the_struck_one_is_gone() {
    let d = Desk::new();
    let (code, v) = d.verify("smith");
    assert_eq!(code, Some(1));
    let (date, st) = claim(&v, "March 3, 2023");
    assert_eq!(st, "unsupported");
    let (cite, _) = claim(&v, "999 F.3d 123");
    let (quote, _) = claim(&v, "Leased Unit Premises");
    assert!(
        date.starts_with("date-") && cite.starts_with("citation-"),
        "{v}"
    );
    // The same sentence has the same id on every run.
    assert_eq!(claim(&d.verify("smith").1, "March 3, 2023").0, date);

    let said = ok(&d.decide(
        "smith",
        &[
            date,
            "--confirm",
            "--page",
            "lease.txt:2",
            "--note",
            "possession in early March, per the client",
            "--reviewer",
            "Ann Counsel",
        ],
    ));
    assert!(
        said.contains("Ann Counsel") && said.contains("SMITH000002"),
        "{said}"
    );
    ok(&d.decide("smith", &[cite, "--strike"]));
    ok(&d.decide(
        "smith",
        &[quote, "--waive", "--reason", "a defined term of the lease"],
    ));

    let (code, v) = d.verify("smith");
    assert_eq!(code, Some(1), "the struck citation still blocks: {v}");
    assert_eq!(claim(&v, "March 3, 2023").1, "supported");
    assert_eq!(claim(&v, "999 F.3d 123").1, "unsupported");
    assert!(
        !v["claims"].to_string().contains("Leased Unit Premises"),
        "waived: no claim"
    );
    let decisions = v["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 3, "{v}");
    let confirmed = decisions
        .iter()
        .find(|x| x["decision"] == "confirmed")
        .unwrap();
    assert_eq!(confirmed["reviewer"], "Ann Counsel");
    assert_eq!(confirmed["page"]["page"], 2);
    assert_eq!(confirmed["applies"], true);
    let struck = decisions
        .iter()
        .find(|x| x["decision"] == "struck")
        .unwrap();
    assert_eq!(struck["reviewer"], "osuser", "the OS user by default");

    // The Markdown report lists the claim confirmed by hand apart from the proven ones.
    let o = d.lexrun(&["verify", "--sources", "smith/intake", "smith/draft.md"]);
    let md = String::from_utf8_lossy(&o.stdout);
    let by_hand = md.find("## Confirmed by a reviewer").expect(&md);
    assert!(md[by_hand..].contains("Ann Counsel"), "{md}");
    assert!(md.contains(&format!("`{cite}`")), "{md}");

    // Take the struck sentence out: the draft passes.
    let edited = DRAFT.replace(
        "Courts enforce such terms. Doe v. Roe, 999 F.3d 123 (9th Cir. 2021).\n\n",
        "",
    );
    fs::write(d.path("smith/draft.md"), &edited).unwrap();
    let (code, v) = d.verify("smith");
    assert_eq!(code, Some(0), "{v}");

    // Another matter with the same draft and sources: none of these decisions applies.
    let (code, v) = d.verify("jones");
    assert_eq!(code, Some(1));
    assert_eq!(claim(&v, "March 3, 2023").1, "unsupported");
    assert!(v["decisions"].is_null(), "{v}");
}

#[test]
fn a_decision_lapses_when_its_sentence_or_its_page_changes() {
    let d = Desk::new();
    let (_, v) = d.verify("smith");
    let (date, _) = claim(&v, "March 3, 2023");
    ok(&d.decide("smith", &[date, "--confirm", "--page", "lease.txt:2"]));
    assert_eq!(claim(&d.verify("smith").1, "March 3, 2023").1, "supported");

    // The page changes.
    fs::write(
        d.path("smith/intake/lease.txt"),
        PAGES.replace("first days of spring", "last days of winter"),
    )
    .unwrap();
    let (code, v) = d.verify("smith");
    assert_eq!(code, Some(1));
    assert_eq!(claim(&v, "March 3, 2023").1, "unsupported");
    let lapsed = v["decisions"][0]["lapsed"].as_str().unwrap();
    assert!(
        lapsed.contains("lease.txt p. 2") && lapsed.contains("changed"),
        "{lapsed}"
    );
    fs::write(d.path("smith/intake/lease.txt"), PAGES).unwrap();
    assert_eq!(claim(&d.verify("smith").1, "March 3, 2023").1, "supported");

    // The sentence changes.
    fs::write(
        d.path("smith/draft.md"),
        DRAFT.replace("The Tenant moved in", "The Tenant arrived"),
    )
    .unwrap();
    let (_, v) = d.verify("smith");
    assert_eq!(claim(&v, "March 3, 2023").1, "unsupported");
    let lapsed = v["decisions"][0]["lapsed"].as_str().unwrap();
    assert!(lapsed.contains("sentence changed"), "{lapsed}");
    assert_eq!(v["decisions"][0]["applies"], false);
}

#[test]
fn bad_decisions_are_refused_and_nothing_is_written() {
    let d = Desk::new();
    let (_, v) = d.verify("smith");
    let (date, _) = claim(&v, "March 3, 2023");
    let (rent, st) = claim(&v, "$2,150.00");
    assert_eq!(st, "supported");
    fs::write(d.path("outside.txt"), "Anything at all.\n").unwrap();
    fs::write(
        d.path("smith/intake/memo.md"),
        "A note on the tenancy.\n<!-- lexrun:provenance run=r1 -->\n",
    )
    .unwrap();
    let outside = d.path("outside.txt");
    let outside_page = format!("{}:1", outside.display());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["date-000000", "--strike"], "no claim `date-000000`"),
        (
            vec![date, "--confirm", "--page", "lease.txt:9"],
            "has 2 pages",
        ),
        (
            vec![date, "--confirm", "--page", outside.to_str().unwrap()],
            "names no page",
        ),
        (
            vec![date, "--confirm", "--page", &outside_page],
            "outside matter `smith`",
        ),
        (
            vec![date, "--confirm", "--page", "nothere.txt:1"],
            "not a source of matter",
        ),
        (
            vec![date, "--confirm", "--page", "memo.md:1"],
            "provenance marker",
        ),
        (vec![rent, "--strike"], "nothing to decide"),
        (
            vec![date, "--confirm", "--strike", "--page", "lease.txt:1"],
            "cannot be used with",
        ),
        (vec![date, "--waive"], "--reason"),
        (
            vec![date, "--strike", "--page", "lease.txt:1"],
            "leave out --page",
        ),
    ];
    for (args, says) in cases {
        refused(&d.decide("smith", &args), says);
    }
    assert!(d.decisions("smith").is_empty());
}

#[test]
fn a_later_decision_supersedes_and_both_are_kept() {
    let d = Desk::new();
    let (_, v) = d.verify("smith");
    let (date, _) = claim(&v, "March 3, 2023");
    ok(&d.decide("smith", &[date, "--strike", "--reviewer", "Bo"]));
    ok(&d.decide(
        "smith",
        &[
            date,
            "--confirm",
            "--page",
            "SMITH000002",
            "--reviewer",
            "Ann",
        ],
    ));
    let all = d.decisions("smith");
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].superseded_by, Some(all[1].seq));
    assert_eq!(claim(&d.verify("smith").1, "March 3, 2023").1, "supported");
    ok(&d.decide("smith", &[date, "--withdraw"]));
    assert_eq!(
        claim(&d.verify("smith").1, "March 3, 2023").1,
        "unsupported"
    );
    assert_eq!(d.decisions("smith").len(), 3);
    let _ = Path::new(".");
}
