//! Pinpoints: a fact must be on the page its sentence cites. A labelled corpus — evidence of
//! stamped pages, each holding one fact of every kind, and drafts citing each fact to its own
//! page (must be `supported`) or to another page (must be `miscited`, naming where the fact
//! really is) — in every form a cite takes: inline, a citation sentence after the fact, a
//! range, a string cite, a paragraph-final cite, several clauses with their own cites.
//!
//! `cargo test --test tests pinpoints:: -- --nocapture` prints the rates.

use lexrun::verify::{self, Evidence, Status};

const PAGES: u32 = 30;

/// One page's facts, each written as a draft would state it.
fn facts(p: u32) -> Vec<(&'static str, String)> {
    let month = ["January", "February", "March", "April", "May", "June"][(p % 6) as usize];
    vec![
        ("date", format!("{month} {}, {}", 1 + p % 27, 2000 + p)),
        (
            "amount",
            format!("${},{:03}.{:02}", 1 + p, p * 7 % 1000, p % 100),
        ),
        (
            "quote",
            format!("\"the tenant shall pay item number {p} on demand\""),
        ),
        ("statute", format!("Cal. Civ. Code § {}", 1900 + p)),
        ("citation", format!("{} Cal. App. 4th {}", 10 + p, 100 + p)),
    ]
}

fn bates(p: u32) -> String {
    format!("PIN{p:06}")
}

fn evidence() -> Evidence {
    let mut ev = Evidence::new(vec!["PIN".into()]);
    let mut pages = Vec::new();
    for p in 1..=PAGES {
        let f = facts(p);
        pages.push(format!(
            "Page of record {p}.\nOn {} the owner paid {}. The lease says {}. See {}; Doe v. Roe, {} (2001).\n\n{}",
            f[0].1,
            f[1].1,
            f[2].1,
            f[3].1,
            f[4].1,
            bates(p)
        ));
    }
    // Two files, so that cites cross files too.
    let second = pages.split_off(PAGES as usize / 2);
    ev.add_pages("record/01-first.txt".into(), pages);
    ev.add_pages("record/02-second.txt".into(), second);
    ev
}

/// A wrong page for page `p`'s facts.
fn wrong(p: u32) -> u32 {
    (p + 7) % PAGES + 1
}

/// Draft sentences, each with its expectation for every fact in it: the fact's text, and
/// whether it is cited rightly.
fn cases() -> Vec<(String, Vec<(String, bool)>)> {
    let mut out = Vec::new();
    for p in 1..=PAGES {
        let f = facts(p);
        for (kind, fact) in &f {
            let fact = fact.clone();
            let text = |cite: String| match *kind {
                "quote" => format!("The lease provides {fact} {cite}."),
                "citation" => format!("The court so held in Ace v. Bay, {fact} (2001) {cite}."),
                _ => format!("The record shows {fact} {cite}."),
            };
            let w = wrong(p);
            // Inline, right and wrong.
            out.push((text(format!("({})", bates(p))), vec![(fact.clone(), true)]));
            out.push((text(format!("({})", bates(w))), vec![(fact.clone(), false)]));
            // A range holding the page, and one that does not.
            let (lo, hi) = (p.saturating_sub(1).max(1), (p + 1).min(PAGES));
            out.push((
                text(format!("({}–{})", bates(lo), bates(hi))),
                vec![(fact.clone(), true)],
            ));
            let (wlo, whi) = if p > PAGES / 2 {
                (1, 3)
            } else {
                (PAGES - 2, PAGES)
            };
            out.push((
                text(format!("({} through {})", bates(wlo), bates(whi))),
                vec![(fact.clone(), false)],
            ));
            // A string cite with the page among others, and one without it.
            out.push((
                text(format!("({}; {})", bates(w), bates(p))),
                vec![(fact.clone(), true)],
            ));
            out.push((
                text(format!("(see {}; see also {})", bates(w), bates(wrong(w)))),
                vec![(fact.clone(), false)],
            ));
        }
        // A citation sentence after a sentence with two facts; a paragraph-final cite; two
        // clauses with their own cites, one of them wrong.
        let (d, a) = (&f[0].1, &f[1].1);
        out.push((
            format!("On {d} the owner paid {a}. ({})", bates(p)),
            vec![(d.clone(), true), (a.clone(), true)],
        ));
        out.push((
            format!("On {d} the owner paid {a}. ({})", bates(wrong(p))),
            vec![(d.clone(), false), (a.clone(), false)],
        ));
        out.push((
            format!("The owner paid {a}. The date was {d}. See {}.", bates(p)),
            vec![(a.clone(), true), (d.clone(), true)],
        ));
        out.push((
            format!(
                "The owner paid {a} ({}), and the date was {d} ({}).",
                bates(p),
                bates(wrong(p))
            ),
            vec![(a.clone(), true), (d.clone(), false)],
        ));
    }
    out
}

#[test]
fn wrong_pinpoints_are_caught_and_right_ones_pass() {
    let ev = evidence();
    let (mut wrong_total, mut caught, mut right_total, mut flagged) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for (sentence, expect) in cases() {
        let v = verify::verify(&sentence, &ev);
        for (fact, right) in expect {
            let fold = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            let Some(o) = v
                .outcomes
                .iter()
                .find(|o| fold(&o.claim.text).contains(&fold(fact.trim_matches('"'))))
            else {
                problems.push(format!("not extracted: {fact} in {sentence}"));
                continue;
            };
            if right {
                right_total += 1;
                if o.status != Status::Supported {
                    flagged += 1;
                    problems.push(format!(
                        "flagged: {sentence} → {:?} {:?}",
                        o.status, o.reason
                    ));
                }
            } else {
                wrong_total += 1;
                if o.status == Status::Miscited {
                    caught += 1;
                    // The fix names where the fact really is.
                    let real = o
                        .source
                        .as_ref()
                        .and_then(|s| s.bates.clone())
                        .unwrap_or_default();
                    assert!(
                        o.reason
                            .as_deref()
                            .unwrap_or("")
                            .contains(&format!("cite {real} instead")),
                        "{:?}",
                        o.reason
                    );
                    assert!(!o.cited.is_empty());
                } else {
                    problems.push(format!("missed: {sentence} → {:?}", o.status));
                }
            }
        }
    }
    println!(
        "pinpoints: {caught} of {wrong_total} wrong pinpoints caught ({:.2}%); {flagged} of {right_total} right ones flagged",
        100.0 * caught as f64 / wrong_total as f64
    );
    for p in problems.iter().take(20) {
        println!("  {p}");
    }
    assert!(caught as f64 >= 0.99 * wrong_total as f64);
    assert_eq!(flagged, 0);
}

#[test]
fn facts_without_a_pinpoint_and_cites_to_pages_that_do_not_exist() {
    let ev = evidence();
    let f = facts(5);
    // No pinpoint: supported wherever it is.
    let v = verify::verify(&format!("The owner paid {}.", f[1].1), &ev);
    assert_eq!(v.outcomes[0].status, Status::Supported);
    // A cite to a Bates number no source has: that cite is unsupported, and the fact is still
    // checked against the rest of the evidence.
    let v = verify::verify(&format!("The owner paid {} (PIN009999).", f[1].1), &ev);
    let statuses: Vec<(&str, Status)> = v
        .outcomes
        .iter()
        .map(|o| (o.claim.kind.as_str(), o.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("amount", Status::Supported),
            ("bates", Status::Unsupported)
        ]
    );
}

#[test]
fn json_carries_cited_pages_and_the_documents_own_dates() {
    let (code, v) = verify_json(
        "record.txt",
        "The deposit was $3,875.00.\n\nSMITH000001\u{000C}Lease terms.\n\nSMITH000002",
        "I paid $3,875.00 (SMITH000002).\n\nExecuted on March 18, 2024, at Oakland, California.\n",
    );
    assert_eq!(code, Some(1));
    let amount = &v["claims"][0];
    assert_eq!(amount["status"], "miscited", "{v}");
    assert_eq!(amount["source"]["bates"], "SMITH000001");
    assert_eq!(amount["cited"][0]["bates"], "SMITH000002");
    assert!(amount["reason"]
        .as_str()
        .unwrap()
        .contains("cite SMITH000001 instead"));
    assert_eq!(v["miscited"], 1);
    assert_eq!(v["document_dates"][0]["text"], "March 18, 2024");
    assert_eq!(v["claims"].as_array().unwrap().len(), 2, "{v}");
}

/// `Ex. B at 2` through the binder's slip sheets, or through an exhibit index's Bates ranges.
#[test]
fn exhibit_letter_cites_resolve_through_slip_sheets_and_the_index() {
    let mut binder = Evidence::new(vec![]);
    binder.add_pages(
        "binder.pdf".into(),
        vec![
            "Exhibit A\n\nSMITH000000".into(),
            "Rent is $2,150.00 per month.\n\nSMITH000001".into(),
            "Exhibit B".into(),
            "Notice sent November 14, 2023.\n\nSMITH000002".into(),
            "Invoice total $3,875.00.\n\nSMITH000003".into(),
        ],
    );
    let status = |ev: &Evidence, draft: &str| -> Vec<(String, Status, Option<String>)> {
        verify::verify(draft, ev)
            .outcomes
            .into_iter()
            .map(|o| (o.claim.text, o.status, o.reason))
            .collect()
    };
    let s = status(&binder, "I paid $3,875.00 (Ex. B at 2).");
    assert_eq!(s[0].1, Status::Supported, "{s:?}");
    let s = status(&binder, "I paid $3,875.00 (Exhibit B, at 1).");
    assert_eq!(s[0].1, Status::Miscited, "{s:?}");
    assert!(s[0].2.as_deref().unwrap().contains("SMITH000003"), "{s:?}");
    let s = status(&binder, "Rent was $2,150.00. See Ex. A.");
    assert_eq!(s[0].1, Status::Supported, "{s:?}");
    let s = status(&binder, "Rent was $2,150.00 (Ex. C at 1).");
    assert_eq!(s[1].1, Status::Unsupported, "{s:?}");
    assert!(s[1].2.as_deref().unwrap().contains("no Exhibit C"), "{s:?}");
    let s = status(&binder, "Rent was $2,150.00 (Ex. A at 4).");
    assert!(s[1].2.as_deref().unwrap().contains("has 1 page"), "{s:?}");

    // The same exhibits through an index beside stamped files.
    let mut stamped = Evidence::new(vec![]);
    stamped.add_pages(
        "exhibit-index.md".into(),
        vec!["| Exhibit | Description | Bates range | Pages |\n|---|---|---|---|\n| A | lease | SMITH000001 | 1 |\n| B | notices | SMITH000002–SMITH000003 | 2 |\n".into()],
    );
    stamped.add_pages(
        "02-notices.txt".into(),
        vec![
            "Notice sent November 14, 2023.\n\nSMITH000002".into(),
            "Invoice total $3,875.00.\n\nSMITH000003".into(),
        ],
    );
    let s = status(&stamped, "I paid $3,875.00 (Ex. B at 2).");
    assert_eq!(s[0].1, Status::Supported, "{s:?}");
    let s = status(
        &stamped,
        "Notice went out on November 14, 2023 (Ex. B at 2).",
    );
    assert_eq!(s[0].1, Status::Miscited, "{s:?}");
}

/// A reported opinion in the sources, with Westlaw's star markers (`*305`: page 305 begins
/// here): its pages 300–320 over eight pages of the file, each opinion page holding a date,
/// an amount and a quotation of its own, and page breaks of the file falling inside opinion
/// pages.
fn opinion() -> (Evidence, Vec<(u32, [String; 3])>) {
    const FIRST: u32 = 300;
    let mut facts = Vec::new();
    let mut file_pages = vec![String::from(
        "ACE v. BAY\nAce v. Bay, 150 Cal. App. 4th 300 (2005)\nCourt of Appeal\n\n",
    )];
    for star in FIRST..=FIRST + 20 {
        let n = star - FIRST;
        let month = ["January", "March", "May", "July", "September", "November"][(n % 6) as usize];
        let f = [
            format!("{month} {}, {}", 1 + n % 27, 1980 + n),
            format!("${},{:03}.{:02}", 2 + n, n * 37 % 1000, n % 100),
            format!("\"the landlord owed duty number {star} to every tenant\""),
        ];
        let marker = if star == FIRST {
            String::new()
        } else {
            format!("*{star} ")
        };
        let first_half = format!(
            "{marker}The record shows that on {} the tenant paid {}.",
            f[0], f[1]
        );
        let second_half = format!(
            " We hold that {} under the statute.\n",
            f[2].trim_matches('"')
        );
        let page = file_pages.last_mut().unwrap();
        page.push_str(&first_half);
        // Every third opinion page is cut by a page break of the file.
        if n % 3 == 2 {
            file_pages.push(String::new());
        }
        file_pages.last_mut().unwrap().push_str(&second_half);
        facts.push((star, f));
    }
    let mut ev = Evidence::new(vec![]);
    ev.add_pages("authorities/ace-v-bay.txt".into(), file_pages);
    (ev, facts)
}

#[test]
fn a_case_pinpoint_binds_facts_to_the_opinion_page_it_names() {
    let (ev, facts) = opinion();
    let cite = |pin: &str| format!("Ace v. Bay, 150 Cal. App. 4th 300, {pin} (2005)");
    let wrong = |star: u32| if star >= 310 { star - 7 } else { star + 7 };
    let mut cases: Vec<(String, String, bool)> = Vec::new();
    for (star, f) in &facts {
        let (star, w) = (*star, wrong(*star));
        for fact in f {
            let said = if fact.starts_with('"') {
                format!("The court held {fact}")
            } else {
                format!("The tenant paid on the date the court gives, {fact}")
            };
            // Inline, a citation sentence, and `Id.` after a first full cite.
            for pin in [star.to_string(), format!("*{star}")] {
                cases.push((format!("{said}, {}.", cite(&pin)), fact.clone(), true));
            }
            cases.push((
                format!("{said}, {}.", cite(&w.to_string())),
                fact.clone(),
                false,
            ));
            cases.push((
                format!("{said}. {}.", cite(&star.to_string())),
                fact.clone(),
                true,
            ));
            cases.push((
                format!("{said}. {}.", cite(&w.to_string())),
                fact.clone(),
                false,
            ));
            let first = format!("The court decided the appeal. {}.", cite("300"));
            cases.push((
                format!("{first} {said}. Id. at {star}."),
                fact.clone(),
                true,
            ));
            cases.push((format!("{first} {said}. Id. at {w}."), fact.clone(), false));
            // A range that holds the page, and one that does not.
            let lo = star.saturating_sub(1).max(300);
            cases.push((
                format!(
                    "{said}, {}.",
                    cite(&format!("{lo}-{:02}", (star + 1) % 100))
                ),
                fact.clone(),
                true,
            ));
            cases.push((
                format!("{said}, {}.", cite(&format!("{w}-{:02}", (w + 1) % 100))),
                fact.clone(),
                wrong(star).abs_diff(star) <= 1,
            ));
        }
    }
    let (mut wrong_total, mut caught, mut right_total, mut flagged) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for (draft, fact, right) in &cases {
        let v = verify::verify(draft, &ev);
        let Some(o) = v
            .outcomes
            .iter()
            .find(|o| o.claim.text.contains(fact.trim_matches('"')))
        else {
            problems.push(format!("not extracted: {fact} in {draft}"));
            continue;
        };
        if *right {
            right_total += 1;
            if o.status != Status::Supported {
                flagged += 1;
                problems.push(format!("flagged: {draft} → {:?} {:?}", o.status, o.reason));
            }
        } else {
            wrong_total += 1;
            if o.status == Status::Miscited {
                caught += 1;
                assert!(
                    o.cited.iter().all(|c| c.star.is_some()),
                    "the cited pages are the opinion's: {:?}",
                    o.cited
                );
                assert!(o.reason.as_deref().unwrap_or("").contains("ace-v-bay.txt"));
            } else {
                problems.push(format!("missed: {draft} → {:?} {:?}", o.status, o.reason));
            }
        }
    }
    println!(
        "opinion pinpoints: {caught} of {wrong_total} wrong pinpoints caught; {flagged} of {right_total} right ones flagged"
    );
    for p in problems.iter().take(20) {
        println!("  {p}");
    }
    assert!(wrong_total > 100 && right_total > 200);
    assert!(caught as f64 >= 0.99 * wrong_total as f64, "{problems:#?}");
    assert_eq!(flagged, 0, "{problems:#?}");
}

#[test]
fn a_case_pinpoint_without_the_opinion_in_the_sources_changes_nothing() {
    // The sources do not carry the opinion: the citation is checked as before, and the fact
    // before it against all the evidence.
    let ev = evidence();
    let f = facts(4);
    let draft = format!(
        "The owner paid {}, Ace v. Bay, 150 Cal. App. 4th 300, 305 (2005).",
        f[1].1
    );
    let v = verify::verify(&draft, &ev);
    let amount = v
        .outcomes
        .iter()
        .find(|o| o.claim.kind.as_str() == "amount")
        .unwrap();
    assert_eq!(amount.status, Status::Supported, "{:?}", amount.reason);
    assert!(amount.cited.is_empty());
}

#[test]
fn the_command_line_names_the_opinion_page() {
    let (code, v) = verify_json(
        "ace-v-bay.txt",
        "Ace v. Bay, 150 Cal. App. 4th 300 (2005)\n\nThe lease was signed. *301 Rent was $1,200.00.\u{000C}It rose. *302 The court held the landlord owed $9,950.00 in damages.",
        "Damages were $9,950.00, Ace v. Bay, 150 Cal. App. 4th 300, 301 (2005). Rent was $1,200.00. Id. at 301.\n",
    );
    assert_eq!(code, Some(1));
    let claims = v["claims"].as_array().unwrap();
    let damages = claims.iter().find(|c| c["text"] == "$9,950.00").unwrap();
    assert_eq!(damages["status"], "miscited", "{v}");
    assert_eq!(damages["cited"][0]["star"], 301);
    assert_eq!(damages["source"]["star"], 302);
    assert_eq!(damages["source"]["page"], 2);
    assert!(damages["reason"].as_str().unwrap().contains("at *302"));
    let rent = claims.iter().find(|c| c["text"] == "$1,200.00").unwrap();
    assert_eq!(rent["status"], "supported", "{v}");
}

/// `lexrun verify --json` of `draft` against one source file named `name`, in a folder of its
/// own and never with the user's own store: the exit code and the report.
fn verify_json(name: &str, source: &str, draft: &str) -> (Option<i32>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join(name);
    std::fs::write(&src, source).unwrap();
    let draft_file = dir.path().join("draft.md");
    std::fs::write(&draft_file, draft).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lexrun"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env_remove("LEXRUN_STORE")
        .env_remove("LEXRUN_LEDGER")
        .args(["verify", "--json", "--sources"])
        .arg(&src)
        .arg(&draft_file)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_default();
    (out.status.code(), v)
}

/// The corners of star paging: a marker for the first page, a pin cite to another report
/// inside the opinion, a case the opinion cites, a file that is no opinion, a pin past the
/// opinion's last page, and a short form as a citation sentence.
#[test]
fn star_paging_corners() {
    let mut ev = Evidence::new(vec![]);
    ev.add_pages(
        "ace-v-bay.txt".into(),
        vec![
            "Ace v. Bay, 150 Cal. App. 4th 300 (2005)\n*300 The lease ended March 3, 2020. See Doe v. Roe, 2019 WL 1234, at *3.".into(),
            "*301 Rent was $1,200.00, as Foo v. Bar, 5 Cal. 2d 10 (1935) held. *302 The end of the opinion.".into(),
        ],
    );
    ev.add_pages(
        "notes.txt".into(),
        vec!["Call log *12 The deposit was $500.00.".into()],
    );
    let status = |draft: &str, fact: &str| {
        let v = verify::verify(draft, &ev);
        let o = v
            .outcomes
            .iter()
            .find(|o| o.claim.text.contains(fact))
            .unwrap_or_else(|| panic!("{fact} not in {:#?}", v.outcomes));
        (
            o.status,
            o.reason.clone().unwrap_or_default(),
            o.source.clone(),
        )
    };
    let ace = |pin: &str| format!("Ace v. Bay, 150 Cal. App. 4th 300, {pin} (2005)");
    // A marker for the first page: the text after it is the first page.
    assert_eq!(
        status(
            &format!("The lease ended March 3, 2020, {}.", ace("300")),
            "March 3"
        )
        .0,
        Status::Supported
    );
    // `at *3` inside the opinion is no page break: the opinion has no page 3.
    let (s3, why, _) = status(
        &format!("The lease ended March 3, 2020, {}.", ace("3")),
        "150 Cal. App. 4th 300",
    );
    assert_eq!(s3, Status::Unsupported);
    assert!(why.contains("no page 3"), "{why}");
    // A case the opinion cites, on the page cited.
    assert_eq!(
        status(
            &format!(
                "Foo v. Bar, 5 Cal. 2d 10 (1935) was followed. {}.",
                ace("301")
            ),
            "5 Cal. 2d 10"
        )
        .0,
        Status::Supported
    );
    let (s, why, _) = status(
        &format!(
            "Foo v. Bar, 5 Cal. 2d 10 (1935) was followed. {}.",
            ace("302")
        ),
        "5 Cal. 2d 10",
    );
    assert_eq!(s, Status::Miscited, "{why}");
    assert!(why.contains("at *301"), "{why}");
    // A file that is no opinion has no opinion pages, whatever stars it holds.
    let (_, _, source) = status(
        &format!("The deposit was $500.00, {}.", ace("302")),
        "$500.00",
    );
    assert_eq!(source.unwrap().star, None);
    // A pin past the last page: the citation is unsupported, the fact checked against all.
    let draft = format!("Rent was $1,200.00, {}.", ace("700"));
    let (s, why, _) = status(&draft, "150 Cal. App. 4th 300");
    assert_eq!(s, Status::Unsupported);
    assert!(why.contains("no page 700"), "{why}");
    assert_eq!(status(&draft, "$1,200.00").0, Status::Supported);
    // A short form as a citation sentence binds the sentence before it.
    let draft = format!(
        "The court decided, {}. Rent was $1,200.00. Ace, 150 Cal. App. 4th at 302.",
        ace("300")
    );
    assert_eq!(status(&draft, "$1,200.00").0, Status::Miscited);
    let draft = format!(
        "The court decided, {}. Rent was $1,200.00. Ace, 150 Cal. App. 4th at 301.",
        ace("300")
    );
    assert_eq!(status(&draft, "$1,200.00").0, Status::Supported);
}

/// A sentence citing a case for the law and the record for the facts: the dates and amounts
/// are the record's, checked on its cited page, not on the opinion's; a quotation of the
/// opinion stays with the case.
#[test]
fn a_sentence_citing_a_case_and_the_record_binds_each_fact_to_its_own_cite() {
    let (mut ev, facts) = opinion();
    ev.declared_prefixes = vec!["REC".into()];
    ev.add_pages(
        "record/ledger.txt".into(),
        vec![
            "Rent ledger, page one.\nREC000001".into(),
            "On March 3, 2019 the tenant paid $1,234.00 in full.\nREC000002".into(),
        ],
    );
    let (_, f305) = &facts[5];
    let draft = format!(
        "On March 3, 2019 the tenant paid $1,234.00, and as {} under Ace v. Bay, 150 Cal. App. 4th 300, 305 (2005), that payment was timely (REC000002).\n\n\
         On March 3, 2019 the tenant paid $1,234.00, and under Ace v. Bay, 150 Cal. App. 4th 300, 305 (2005), that payment was timely (REC000001).",
        f305[2]
    );
    let v = verify::verify(&draft, &ev);
    let got: Vec<(String, Status)> = v
        .outcomes
        .iter()
        .map(|o| (o.claim.text.clone(), o.status))
        .collect();
    let s = |t: &str, st: Status| (t.to_string(), st);
    assert_eq!(
        got,
        vec![
            s("March 3, 2019", Status::Supported),
            s("$1,234.00", Status::Supported),
            s(&f305[2], Status::Supported),
            s("150 Cal. App. 4th 300, 305 (2005)", Status::Supported),
            s("REC000002", Status::Supported),
            s("March 3, 2019", Status::Miscited),
            s("$1,234.00", Status::Miscited),
            s("150 Cal. App. 4th 300, 305 (2005)", Status::Supported),
            s("REC000001", Status::Supported),
        ],
        "{:#?}",
        v.outcomes
    );
    assert!(
        v.outcomes[5]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("REC000002") && r.contains("REC000001")),
        "{:?}",
        v.outcomes[5].reason
    );
}

/// An opinion cited by paragraph (a neutral citation, `2022 IL App (1st) 210454-U, ¶ 33`)
/// among the sources, its paragraphs numbered `¶ 1`, `¶ 2`, …: a paragraph pinpoint binds the
/// facts before it to that paragraph, as a page pinpoint does; a paragraph cited inside the
/// opinion's text is no paragraph of it.
#[test]
fn a_paragraph_pinpoint_binds_facts_to_the_paragraph_it_names() {
    let mut ev = Evidence::new(vec![]);
    let mut text = String::from("People v. Hale, 2022 IL App (1st) 210454-U\n\nORDER\n\n");
    for n in 1..=45 {
        let fact = match n {
            33 => "the search warrant was served on June 4, 2019, without a knock.".to_string(),
            12 => "as held in People v. Gray, 2017 IL 120958, ¶ 40, suppression is a last resort."
                .to_string(),
            _ => format!("the court considered point {n} of the appeal."),
        };
        text.push_str(&format!("¶ {n} In this paragraph {fact}\n\n"));
    }
    ev.add_pages("authorities/hale.txt".into(), vec![text]);
    let cite = |p: u32| format!("People v. Hale, 2022 IL App (1st) 210454-U, ¶ {p}");
    let draft = format!(
        "The warrant was served on June 4, 2019. {}.\n\nThe warrant was served on June 4, 2019. {}.\n\nThe opinion has no paragraph 60. {}.",
        cite(33),
        cite(41),
        cite(60)
    );
    let v = verify::verify(&draft, &ev);
    let got: Vec<(String, Status)> = v
        .outcomes
        .iter()
        .map(|o| (o.claim.text.clone(), o.status))
        .collect();
    let s = |t: &str, st: Status| (t.to_string(), st);
    assert_eq!(
        got,
        vec![
            s("June 4, 2019", Status::Supported),
            s("2022 IL App (1st) 210454-U, ¶ 33", Status::Supported),
            s("June 4, 2019", Status::Miscited),
            s("2022 IL App (1st) 210454-U, ¶ 41", Status::Supported),
            s("2022 IL App (1st) 210454-U, ¶ 60", Status::Unsupported),
        ],
        "{:#?}",
        v.outcomes
    );
    assert!(
        v.outcomes[2]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("33") && r.contains("41")),
        "{:?}",
        v.outcomes[2].reason
    );
    assert!(
        v.outcomes[4]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("runs from ¶ 1 to ¶ 45") && r.contains("no ¶ 60")),
        "{:?}",
        v.outcomes[4].reason
    );
}
