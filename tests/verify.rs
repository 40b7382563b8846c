//! The verifier against labelled evidence: hand-written drafts with planted fabrications
//! (`tests/verify/*/`), a generated corpus measured for recall and false flags, and the
//! `lexrun verify` command's output, exit codes and bad inputs.

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};

use lexrun::verify::{self, Evidence, Status};
use support::{corpus, lexrun};

/// Each case: `draft.md`, `sources` (the path of its evidence) and `expected.tsv` (every
/// claim, in order, with its verdict).
#[test]
fn labelled_drafts_get_exactly_their_verdicts() {
    for case in ["smith", "jones", "motion"] {
        let dir = Path::new("tests/verify").join(case);
        let sources = fs::read_to_string(dir.join("sources")).unwrap();
        let draft = fs::read_to_string(dir.join("draft.md")).unwrap();
        let expected: Vec<(String, String, String)> = fs::read_to_string(dir.join("expected.tsv"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (f[0].to_string(), f[1].to_string(), f[2].to_string())
            })
            .collect();
        let ev = verify::evidence::load(&[PathBuf::from(sources.trim())], vec![]).unwrap();
        let v = verify::verify(&draft, &ev);
        // Record cites (`unchecked.tsv`): listed as unchecked, never among the outcomes.
        let unchecked: Vec<String> = v
            .unchecked
            .iter()
            .map(|(c, _)| c.text.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let want_unchecked: Vec<String> = fs::read_to_string(dir.join("unchecked.tsv"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        assert_eq!(unchecked, want_unchecked, "case {case}: record cites");
        let got: Vec<(String, String, String)> = v
            .outcomes
            .into_iter()
            .map(|o| {
                let status = o.status.as_str();
                (
                    o.claim.kind.as_str().to_string(),
                    o.claim
                        .text
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                    status.to_string(),
                )
            })
            .collect();
        assert_eq!(got, expected, "case {case}");
    }
}

#[test]
fn generated_fabrications_are_caught_and_genuine_claims_pass() {
    let c = corpus::generate(40, 600, 7);
    let mut ev = Evidence::new(vec!["GEN".into()]);
    for (name, pages) in &c.files {
        ev.add_pages(name.clone(), pages.clone());
    }
    let outcomes = verify::verify(&c.draft, &ev).outcomes;
    let (mut caught, mut fabricated, mut flagged, mut genuine) = (0, 0, 0, 0);
    let fold = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    // Claims come out in draft order, as they were planted; walk both together.
    let mut next = 0;
    for (text, is_genuine) in &c.planted {
        let at = outcomes[next..]
            .iter()
            .position(|o| text.contains(&fold(&o.claim.text)))
            .unwrap_or_else(|| panic!("`{text}` was not extracted"));
        let o = &outcomes[next + at];
        next += at + 1;
        let unsupported = o.status == Status::Unsupported;
        if *is_genuine {
            genuine += 1;
            flagged += unsupported as u32;
        } else {
            fabricated += 1;
            caught += unsupported as u32;
        }
    }
    let recall = caught as f64 / fabricated as f64;
    let false_flags = flagged as f64 / genuine as f64;
    println!("generated corpus: {fabricated} fabrications, {caught} caught (recall {:.3}); {genuine} genuine claims, {flagged} wrongly flagged ({:.4})", recall, false_flags);
    assert!(recall >= 0.98, "recall {recall}");
    assert!(false_flags <= 0.01, "false flags {false_flags}");
}

#[test]
fn json_output_has_the_documented_shape() {
    let o = lexrun(&[
        "verify",
        "--json",
        "--sources",
        "workflows/matters/smith-v-acme/intake",
        "tests/verify/smith/draft.md",
    ]);
    assert_eq!(o.status.code(), Some(1), "fabrications make it fail");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let claims = v["claims"].as_array().unwrap();
    let count = |k: &str| v[k].as_u64().unwrap_or(0);
    assert_eq!(
        count("supported") + count("unsupported") + count("miscited") + count("unrecognized"),
        claims.len() as u64
    );
    let draft = fs::read_to_string("tests/verify/smith/draft.md").unwrap();
    for c in claims {
        let (s, e) = (
            c["start"].as_u64().unwrap() as usize,
            c["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            &draft[s..e],
            c["text"].as_str().unwrap(),
            "offsets are byte offsets into the draft"
        );
        match c["status"].as_str().unwrap() {
            "supported" => {
                assert!(c["source"]["file"].is_string() && c["source"]["page"].is_u64());
                assert!(c["reason"].is_null());
            }
            "unsupported" | "unrecognized" => {
                assert!(c["source"].is_null() && c["reason"].is_string())
            }
            // Where the fact really is, and the pages its sentence cites.
            "miscited" => assert!(
                c["source"]["file"].is_string() && c["reason"].is_string() && c["cited"].is_array()
            ),
            other => panic!("status {other}"),
        }
        assert!(["citation", "statute", "date", "bates", "quote", "amount"]
            .contains(&c["kind"].as_str().unwrap()));
    }
}

#[test]
fn a_fully_supported_draft_exits_0_with_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let draft = dir.path().join("ok.md");
    fs::write(
        &draft,
        "Rent was $2,150.00 from June 1, 2022 (SMITH000002).\n",
    )
    .unwrap();
    let o = lexrun(&[
        "verify",
        "--sources",
        "workflows/matters/smith-v-acme/intake",
        draft.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("Every claim is supported"), "{md}");
    assert!(md.contains("02-lease.txt"), "{md}");
    let o = lexrun(&[
        "verify",
        "--html",
        "--sources",
        "workflows/matters/smith-v-acme/intake",
        draft.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("<!doctype html>"));
}

#[test]
fn bad_drafts_are_usage_errors_never_passes() {
    let dir = tempfile::tempdir().unwrap();
    let src = "workflows/matters/smith-v-acme/intake";
    let cases: [(&str, &[u8], &str); 3] = [
        ("empty.md", b"  \n\n", "empty"),
        ("latin1.md", b"caf\xe9 $5.00", "not UTF-8"),
        ("binary.md", b"\x00\x01PK", "binary"),
    ];
    for (name, bytes, says) in cases {
        let p = dir.path().join(name);
        fs::write(&p, bytes).unwrap();
        let o = lexrun(&["verify", "--sources", src, p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = lexrun(&["verify", "--sources", src, "no/such/draft.md"]);
    assert_eq!(o.status.code(), Some(2));
    let o = lexrun(&[
        "verify",
        "--sources",
        "no/such/folder",
        "tests/verify/smith/draft.md",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        lexrun(&["verify", "tests/verify/smith/draft.md"])
            .status
            .code(),
        Some(2),
        "--sources is required"
    );
}

/// A PDF with one page per text, written with lopdf.
fn pdf(pages: &[&str]) -> Vec<u8> {
    let specs: Vec<_> = pages.iter().map(|t| support::pdf::page(t)).collect();
    support::pdf::pdf(&specs)
}

#[test]
fn pdf_sources_are_read_per_page_and_empty_pages_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("sources");
    fs::create_dir(&src).unwrap();
    fs::write(
        src.join("invoice.pdf"),
        pdf(&[
            "Invoice dated March 3, 2024",
            "Total due $1,234.56",
            "ACME000042",
        ]),
    )
    .unwrap();
    fs::write(src.join("scan.pdf"), pdf(&["", "ACME000043"])).unwrap();
    let draft = dir.path().join("d.md");
    fs::write(
        &draft,
        // The invoice's pages carry no stamp of their own, so the stamp is cited apart.
        "On March 3, 2024 Acme billed $1,234.56.\n\nThe file ends at ACME000042.\n",
    )
    .unwrap();
    let o = lexrun(&[
        "verify",
        "--sources",
        src.to_str().unwrap(),
        draft.to_str().unwrap(),
    ]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{md}");
    let o = lexrun(&[
        "verify",
        "--json",
        "--sources",
        src.to_str().unwrap(),
        draft.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["claims"][2]["source"]["bates"], "ACME000042");
    let o = lexrun(&[
        "verify",
        "--sources",
        src.to_str().unwrap(),
        draft.to_str().unwrap(),
    ]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Pages with no text"),
        "the scan's empty page is reported"
    );
}

#[test]
fn an_unreadable_source_never_lets_the_draft_pass() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("sources");
    fs::create_dir(&src).unwrap();
    fs::write(src.join("lease.txt"), "Rent is $2,150.00.\nSMITH000002\n").unwrap();
    fs::write(src.join("broken.pdf"), b"%PDF-1.7 truncated").unwrap();
    fs::write(src.join("photo.png"), b"\x89PNG").unwrap();
    let draft = dir.path().join("d.md");
    fs::write(&draft, "Rent is $2,150.00 (SMITH000002).\n").unwrap();
    let o = lexrun(&[
        "verify",
        "--sources",
        src.to_str().unwrap(),
        draft.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "every claim is supported, but two sources were not read"
    );
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("could not be read") && md.contains("broken.pdf") && md.contains("photo.png"),
        "{md}"
    );
}

mod never_panics {
    use lexrun::verify::{self, Evidence};
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "531 U.S. 98",
        ", 99-100",
        " (2000)",
        "Id.",
        " at 5",
        "supra",
        "§",
        "28 U.S.C. § 1332(a)",
        "Fed. R. Civ. P. 12(b)(6)",
        "January 5, 2024",
        "5th day of",
        "01/05/2024",
        "$12,500.00",
        "12.5%",
        "percent",
        "SMITH000123",
        "–",
        "RTX 3060",
        "\"",
        "“",
        "”",
        "...",
        "[T]he",
        "> ",
        "\n",
        "\u{000C}",
        " ",
        "é",
        "日本",
        "\u{0}",
        "ﬁ",
        "-\n",
        "v.",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_drafts_and_evidence(draft in "\\PC{0,300}", page in "\\PC{0,300}") {
            let mut ev = Evidence::new(vec!["SMITH".into()]);
            ev.add_pages("e.txt".into(), vec![page]);
            let v = verify::verify(&draft, &ev);
            for o in v.outcomes {
                prop_assert_eq!(&draft[o.claim.start..o.claim.end], o.claim.text.as_str());
            }
        }

        #[test]
        fn legal_token_soup(d in proptest::collection::vec(0..PIECES.len(), 0..80), e in proptest::collection::vec(0..PIECES.len(), 0..80)) {
            let draft: String = d.iter().map(|i| PIECES[*i]).collect();
            let page: String = e.iter().map(|i| PIECES[*i]).collect();
            let mut ev = Evidence::new(vec![]);
            ev.add_pages("e.txt".into(), page.split('\u{000C}').map(str::to_string).collect());
            let v = verify::verify(&draft, &ev);
            for o in v.outcomes {
                prop_assert_eq!(&draft[o.claim.start..o.claim.end], o.claim.text.as_str());
            }
        }
    }
}

/// `(Ex. C, RTX 3060)`: an exhibit pinned to a number that is no Bates number of these
/// sources is one cite naming that number, and every fact cited to it is blocked, even where
/// the fact is in the sources; the same exhibit pinned to a real page supports its facts.
#[test]
fn an_exhibit_pinned_to_an_invented_bates_number_blocks_its_facts() {
    let mut ev = Evidence::new(vec![]);
    ev.add_pages(
        "production/acme.txt".into(),
        vec![
            "INVOICE 2024-001\nAcme Supply invoiced $5,000.00 on January 3, 2024, due in thirty days.\nACME000014".into(),
            "Payment received February 2, 2024.\nACME000015".into(),
        ],
    );
    let draft = "Acme invoiced $5,000.00 on January 3, 2024 (Ex. C, RTX 3060). \
                 Payment arrived on February 2, 2024 (Ex. C, ACME000015).";
    let v = verify::verify(draft, &ev);
    let got: Vec<(&str, Status, String)> = v
        .outcomes
        .iter()
        .map(|o| {
            (
                o.claim.text.as_str(),
                o.status,
                o.reason.clone().unwrap_or_default(),
            )
        })
        .collect();
    let brief: Vec<(&str, Status)> = got.iter().map(|(t, s, _)| (*t, *s)).collect();
    assert_eq!(
        brief,
        vec![
            ("$5,000.00", Status::Unsupported),
            ("January 3, 2024", Status::Unsupported),
            ("Ex. C, RTX 3060", Status::Unsupported),
            ("February 2, 2024", Status::Supported),
            ("Ex. C, ACME000015", Status::Supported),
        ],
        "{got:#?}"
    );
    assert!(
        got[2]
            .2
            .contains("`RTX 3060` is not a Bates number of these sources"),
        "{}",
        got[2].2
    );
    for fact in &got[..2] {
        assert!(fact.2.contains("cited to `Ex. C, RTX 3060`"), "{}", fact.2);
    }
}

/// Exhibits kept as files named for them, with no binder or index: each cite is found by
/// its file's name and checked on its pages; an exhibit no file holds is listed as unchecked,
/// one beyond the last exhibit present is unsupported.
#[test]
fn exhibits_are_found_by_the_names_of_their_files() {
    let mut ev = Evidence::new(vec![]);
    ev.add_pages(
        "exhibits/Exhibit 7.pdf".into(),
        vec!["RESIDENTIAL LEASE\nMonthly rent: $2,150.00, due on the first.".into()],
    );
    ev.add_pages(
        "exhibits/Ex_12.pdf".into(),
        vec![
            "NOTICE OF ENTRY\nCover page".into(),
            "The landlord will enter on March 4, 2024 to repair the heater.".into(),
        ],
    );
    ev.add_pages(
        "exhibits/3 - Photographs.pdf".into(),
        vec!["Photographs of the water damage taken April 2, 2024.".into()],
    );
    let draft = "The rent was $2,150.00 (Ex. 7). The landlord set entry for March 4, 2024 \
                 (Ex. 12 at 2). The photographs were taken April 2, 2024 (Ex. 3). The notice \
                 came on March 4, 2024 (Ex. 12 at 1). The inspection report is Ex. 5. The \
                 invoice is Ex. 14.";
    let v = verify::verify(draft, &ev);
    let got: Vec<(&str, Status)> = v
        .outcomes
        .iter()
        .map(|o| (o.claim.text.as_str(), o.status))
        .collect();
    assert_eq!(
        got,
        vec![
            ("$2,150.00", Status::Supported),
            ("Ex. 7", Status::Supported),
            ("March 4, 2024", Status::Supported),
            ("Ex. 12 at 2", Status::Supported),
            ("April 2, 2024", Status::Supported),
            ("Ex. 3", Status::Supported),
            ("March 4, 2024", Status::Miscited),
            ("Ex. 12 at 1", Status::Supported),
            ("Ex. 14", Status::Unsupported),
        ],
        "{:#?}",
        v.outcomes
    );
    let unchecked: Vec<(&str, &str)> = v
        .unchecked
        .iter()
        .map(|(c, why)| (c.text.as_str(), why.as_str()))
        .collect();
    assert_eq!(unchecked.len(), 1, "{unchecked:?}");
    assert_eq!(unchecked[0].0, "Ex. 5");
    assert!(
        unchecked[0]
            .1
            .contains("not among the exhibits the sources hold (12, 3, 7)"),
        "{unchecked:?}"
    );
    // With no exhibits at all among the sources, an exhibit cite is listed, not blocked.
    let mut bare = Evidence::new(vec![]);
    bare.add_pages("notes.txt".into(), vec!["Rent is $2,150.00.".into()]);
    let v = verify::verify("The rent was $2,150.00 (Ex. 7).", &bare);
    assert_eq!(v.outcomes.len(), 1);
    assert_eq!(v.outcomes[0].status, Status::Supported);
    assert_eq!(v.unchecked.len(), 1);
    assert!(
        v.unchecked[0].1.contains("Exhibit 7 is not located"),
        "{:?}",
        v.unchecked
    );
}

/// Invoice numbers are no Bates numbers: beside the sources' own Bates cites `BD-1073` is
/// an unsupported Bates claim, until the workflow (`ignore prefixes "BD"`) or the command
/// (`--ignore-prefix BD`) says numbers so prefixed are identifiers; a prefix declared as a
/// Bates prefix stays one.
#[test]
fn identifiers_with_an_ignored_prefix_are_no_bates_claims() {
    let mut ev = Evidence::new(vec![]);
    ev.add_pages(
        "production/email.txt".into(),
        vec!["From: Ana Ruiz\nSubject: Invoices BD-1057 and BD-1073\nInvoice BD-1073 for $4,310.00 was due on June 19, 2025.\nACME000002".into()],
    );
    let draft =
        "The invoice was for $4,310.00 (ACME000002). Invoice BD-1073 was due on June 19, 2025.";
    let statuses = |ev: &Evidence| -> Vec<(String, Status)> {
        verify::verify(draft, ev)
            .outcomes
            .into_iter()
            .map(|o| (o.claim.text, o.status))
            .collect()
    };
    let before = statuses(&ev);
    assert!(
        before
            .iter()
            .any(|(t, s)| t == "BD-1073" && *s == Status::Unsupported),
        "{before:?}"
    );
    ev.ignored_prefixes = vec!["BD".into()];
    let after = statuses(&ev);
    assert_eq!(
        after,
        vec![
            ("$4,310.00".to_string(), Status::Supported),
            ("ACME000002".to_string(), Status::Supported),
            ("June 19, 2025".to_string(), Status::Supported),
        ]
    );
    // The command line's flag.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("email.txt");
    fs::write(
        &src,
        "Invoice BD-1073 for $4,310.00 was due on June 19, 2025.\nACME000002\n",
    )
    .unwrap();
    let d = dir.path().join("draft.md");
    fs::write(&d, format!("{draft}\n")).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["verify", "--json", "--sources", src.to_str().unwrap()];
        args.extend(extra);
        args.push(d.to_str().unwrap());
        lexrun(&args)
    };
    assert_eq!(run(&[]).status.code(), Some(1));
    let o = run(&["--ignore-prefix", "BD"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // And the workflow's rule, through the plan.
    let lex = dir.path().join("w.lex");
    fs::write(
        &lex,
        r#"workflow w
pool gpu {
  gpus 0
  vram 32 GiB
  serve llama_cpp at "http://127.0.0.1:8081"
}
model m on gpu {
  gguf "models/m.gguf"
  weights 8 GiB
  layers 32  kv_heads 8  head_dim 128
  ctx 8k
}
sources client {
  files "intake/*.txt"
}
stage draft {
  model m
  prompt "Draft from {{evidence}}"
  reads client
}
verify draft against client {
  bates must exist
  ignore prefixes "BD", "INV"
}
"#,
    )
    .unwrap();
    let path = camino::Utf8PathBuf::from_path_buf(lex.clone()).unwrap();
    let checked = lexrun::check::check_path(&path);
    let workflow = checked.workflow.expect("the workflow checks");
    let plan = lexrun::plan::lower(&workflow);
    assert_eq!(plan.verify[0].ignore_prefixes, vec!["BD", "INV"]);
    assert!(plan
        .to_text()
        .contains("not Bates numbers: identifiers prefixed BD, INV"));
    // Anything but prefixes, or a prefix that is not one, is an error with its fix.
    let text = fs::read_to_string(&lex).unwrap();
    fs::write(
        &lex,
        text.replace(r#"ignore prefixes "BD", "INV""#, r#"ignore dates "BD-1""#),
    )
    .unwrap();
    let checked = lexrun::check::check_path(&path);
    assert!(checked.workflow.is_none());
    let all: String = checked
        .diagnostics
        .iter()
        .map(|d| format!("{} {}\n", d.message, d.help.clone().unwrap_or_default()))
        .collect();
    assert!(all.contains("lexrun cannot ignore `dates`"), "{all}");
}

/// A deposition transcript among the sources, its lines numbered in the margin under a page
/// header: testimony quoted across line numbers, and an exchange quoted with its `Q.` and
/// `A.`, are found; words the witness did not say are not.
#[test]
fn transcript_quotations_match_across_line_numbers() {
    let mut ev = Evidence::new(vec![]);
    ev.add_pages(
        "depositions/lee-dep.txt".into(),
        vec![
            "                                                          Page 12\n 1        MARIA LEE, having been duly sworn, testified:\n 2   BY MR. OKAFOR:\n 3   Q.   When did you first see the leak?\n 4   A.   The water started coming through the\n 5        bedroom ceiling in early March, and I\n 6        called the landlord the same day.\n 7   Q.   Did anyone come?\n 8   A.   Nobody came for three weeks.\n 9\n10\n".into(),
        ],
    );
    let draft = "Ms. Lee testified that \"[t]he water started coming through the bedroom ceiling in early March, and I called the landlord the same day.\" Lee Dep. 12:4-6.\n\n\
                 > Q. Did anyone come?\n> A. Nobody came for three weeks.\n\n\
                 She added that \"the landlord came the next morning.\"\n";
    let v = verify::verify(draft, &ev);
    let got: Vec<(&str, Status)> = v
        .outcomes
        .iter()
        .filter(|o| o.claim.kind == lexrun::verify::Kind::Quote)
        .map(|o| (o.claim.text.as_str(), o.status))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "\"[t]he water started coming through the bedroom ceiling in early March, and I called the landlord the same day.\"",
                Status::Supported
            ),
            (
                "> Q. Did anyone come?\n> A. Nobody came for three weeks.",
                Status::Supported
            ),
            ("\"the landlord came the next morning.\"", Status::Unsupported),
        ],
        "{:#?}",
        v.outcomes
    );
}

/// Dates without a year take the year of the full date before them in the draft (and a day
/// alone its month too), and are checked like any date; with no full date before them they
/// are listed as not checked, never passed over.
#[test]
fn dates_without_a_year_take_it_from_the_draft_or_are_listed() {
    let mut ev = Evidence::new(vec![]);
    ev.add_pages(
        "letters.txt".into(),
        vec!["Notice served January 5, 2024. Repairs requested March 15, 2024 and again March 20, 2024.".into()],
    );
    let draft = "The tenant wrote on March 15th and again on the 20th. \
                 The landlord served notice on January 5, 2024. \
                 The tenant asked for repairs on March 15th, again on the 20th, and once more on April 2.";
    let v = verify::verify(draft, &ev);
    let got: Vec<(&str, String, Status)> = v
        .outcomes
        .iter()
        .map(|o| (o.claim.text.as_str(), o.claim.key.to_string(), o.status))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "January 5, 2024",
                "2024-01-05".to_string(),
                Status::Supported
            ),
            ("March 15th", "2024-03-15".to_string(), Status::Supported),
            ("the 20th", "2024-03-20".to_string(), Status::Supported),
            ("April 2", "2024-04-02".to_string(), Status::Unsupported),
        ],
        "{:#?}",
        v.outcomes
    );
    let unchecked: Vec<(&str, &str)> = v
        .unchecked
        .iter()
        .map(|(c, why)| (c.text.as_str(), why.as_str()))
        .collect();
    assert_eq!(unchecked.len(), 2, "{unchecked:?}");
    assert_eq!(unchecked[0].0, "March 15th");
    assert_eq!(unchecked[1].0, "the 20th");
    assert!(
        unchecked[0]
            .1
            .contains("gives no year, and no full date comes before it"),
        "{unchecked:?}"
    );
    let md = verify::report::markdown("draft.md", draft, &v);
    assert!(md.contains("Not checked: March 15th (line 1)"), "{md}");
}
