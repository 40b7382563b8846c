//! Citations measured against the catalogue itself: every reporter edition and variant
//! spelling reporters-db lists, written as briefs write them, must be recognised as the
//! edition it names; an invented page of a real volume is never supported by another page;
//! short forms resolve to their full citation; citation-shaped text with an unknown reporter
//! is `unrecognized`; statutes in every state's principal form; and nothing from street
//! addresses, phone numbers or the draft's own numbering.
//!
//! `cargo test --test tests citations:: -- --nocapture` prints the rates.

use lexrun::verify::{self, catalogue::CATALOGUE, Allowed, Evidence, Key, Kind, Status};

/// `(spelling, canonical edition, start year)` for every edition and variation line.
fn spellings() -> Vec<(String, String, Option<u16>)> {
    let tsv = include_str!("../crates/verify/src/catalogue/catalogue.tsv");
    let mut years = std::collections::HashMap::new();
    let mut out = Vec::new();
    for line in tsv.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        match f[0] {
            "E" | "J" => {
                let start: Option<u16> = f[2].parse().ok();
                let end: Option<u16> = f[3].parse().ok();
                // A year inside the edition's range.
                let y = match (start, end) {
                    (Some(s), _) => Some(s),
                    (None, Some(e)) => Some(e),
                    _ => None,
                };
                years.insert(f[1].to_string(), y);
                out.push((f[1].to_string(), f[1].to_string(), y));
            }
            "V" | "JV" => out.push((f[1].to_string(), f[2].to_string(), None)),
            _ => {}
        }
    }
    for s in &mut out {
        if s.2.is_none() {
            s.2 = years.get(&s.1).copied().flatten();
        }
    }
    out
}

/// Volume, reporter, first page, pinpoint and year of a case citation.
type CaseKey<'a> = (u32, &'a str, u32, Option<&'a str>, Option<u16>);

fn case_key(c: &verify::Claim) -> Option<CaseKey<'_>> {
    match &c.key {
        Key::Case {
            volume,
            reporter,
            page,
            pin,
            year,
        } => Some((*volume, reporter, *page, pin.as_deref(), *year)),
        _ => None,
    }
}

#[test]
fn every_catalogue_spelling_is_recognised_as_its_edition() {
    let all = spellings();
    let mut missed = Vec::new();
    for (i, (spelling, edition, year)) in all.iter().enumerate() {
        let vol = 10 + (i % 900) as u32;
        let page = 100 + (i % 7000) as u32;
        let year_text = year.map(|y| format!(" ({y})")).unwrap_or_default();
        let draft = format!(
            "See Alpha v. Beta, {vol} {spelling} {page}, {} {year_text}.",
            page + 2
        );
        let claims = verify::claims(&draft, &[]);
        // The spelling names its edition — or, where reporters-db gives it to several
        // editions, all of them, matched by the spelling itself.
        let want = CATALOGUE
            .edition(spelling)
            .filter(|e| e.name == *edition || e.name.split(" or ").any(|n| n == edition))
            .map(|e| e.key.clone())
            .unwrap_or_else(|| "(no edition)".into());
        let ok = claims.iter().filter(|c| c.kind == Kind::Citation).any(|c| {
            case_key(c).is_some_and(|(v, r, p, pin, _)| {
                v == vol && r == want && p == page && pin == Some(&(page + 2).to_string()[..])
            })
        });
        if !ok {
            missed.push(format!("{draft}  →  {claims:?}"));
        }
    }
    let rate = 1.0 - missed.len() as f64 / all.len() as f64;
    println!(
        "catalogue spellings recognised: {} of {} ({:.2}%)",
        all.len() - missed.len(),
        all.len(),
        rate * 100.0
    );
    for m in missed.iter().take(40) {
        println!("  missed: {m}");
    }
    assert!(rate >= 0.99, "{} missed", missed.len());
}

/// Evidence citing page P of a volume never supports page P + 1 (or P·10 + d, what a partial
/// parse of a series marker would read) of the same volume.
#[test]
fn an_invented_page_of_a_real_volume_is_never_supported() {
    let all = spellings();
    let mut evidence = String::new();
    let mut draft = String::new();
    for (i, (spelling, _, year)) in all.iter().enumerate() {
        let vol = 10 + (i % 900) as u32;
        let year_text = year.map(|y| format!(" ({y})")).unwrap_or_default();
        evidence.push_str(&format!(
            "Case {i} v. Other, {vol} {spelling} 2{year_text}.\n"
        ));
        draft.push_str(&format!(
            "Case {i} v. Other, {vol} {spelling} 2379{year_text}.\n"
        ));
    }
    let mut ev = Evidence::new(vec![]);
    ev.add_pages("opinions.txt".into(), vec![evidence]);
    let v = verify::verify(&draft, &ev);
    let wrongly: Vec<String> = v
        .outcomes
        .iter()
        .filter(|o| o.status == Status::Supported && o.claim.kind == Kind::Citation)
        .map(|o| o.claim.text.clone())
        .collect();
    println!(
        "invented pages checked: {}; supported by another page: {}",
        v.outcomes.len(),
        wrongly.len()
    );
    assert!(wrongly.is_empty(), "{wrongly:?}");
}

#[test]
fn partial_parses_of_the_series_marker_are_gone() {
    let evidence =
        "Smith v. Jones, 190 Wash. App. 2d 379 (2019); Roe v. Wade, 12 So. 2d 34 (1943); \
                    Doe v. Poe, 5 N.W.2d 6 (1942); Lee v. Kim, 100 F. Supp. 3d 200 (2015).";
    let mut ev = Evidence::new(vec![]);
    ev.add_pages("cases.txt".into(), vec![evidence.into()]);
    for draft in [
        "190 Wash. App. 2d 3790 (2019)",
        "12 So. 2d. 345 (1943)",
        "12 So. 2nd 345 (1943)",
        "5 N.W. 2nd 60 (1942)",
        "100 F.Supp. 3D 2001 (2015)",
    ] {
        let v = verify::verify(draft, &ev);
        assert_eq!(v.outcomes.len(), 1, "{draft}: {:?}", v.outcomes);
        assert_eq!(v.outcomes[0].status, Status::Unsupported, "{draft}");
    }
    let v = verify::verify("12 So. 2d. 34 (1943) and 5 N.W. 2nd 6 (1942)", &ev);
    assert!(
        v.outcomes.iter().all(|o| o.status == Status::Supported),
        "{:?}",
        v.outcomes
    );
}

#[test]
fn canonical_matching_across_variants() {
    let pairs = [
        ("140 Wash. 2d 568 (2000)", "140 Wn.2d 568 (2000)"),
        ("12 Cal. Rptr. 3d 45 (2004)", "12 Cal.Rptr.3d 45 (2004)"),
        ("5 F. App'x 9 (2001)", "5 Fed. Appx. 9 (2001)"),
        ("7 P.2d 8 (1932)", "7 P. [2d] 8 (1932)"),
        ("23 Pa. Cons. Stat. § 5301", "23 Pa.C.S. § 5301"),
        ("28 U.S.C. § 1332", "28 USC Section 1332"),
        ("735 ILCS 5/2-1001", "735 Ill. Comp. Stat. 5/2-1001"),
    ];
    for (source, draft) in pairs {
        let mut ev = Evidence::new(vec![]);
        ev.add_pages(
            "s.txt".into(),
            vec![format!("As held in {source}, the rule applies.")],
        );
        let v = verify::verify(&format!("See {draft}."), &ev);
        assert_eq!(v.outcomes.len(), 1, "{draft}: {:?}", v.outcomes);
        assert_eq!(
            v.outcomes[0].status,
            Status::Supported,
            "{draft} against {source}: {:?}",
            v.outcomes[0].reason
        );
    }
}

#[test]
fn a_year_outside_the_edition_is_unsupported_before_matching() {
    let mut ev = Evidence::new(vec![]);
    ev.add_pages("s.txt".into(), vec!["Ace v. Bay, 1 F.4th 5 (2019).".into()]);
    let v = verify::verify("Ace v. Bay, 1 F.4th 5 (2019).", &ev);
    assert_eq!(v.outcomes[0].status, Status::Unsupported);
    let why = v.outcomes[0].reason.as_deref().unwrap();
    assert!(why.contains("F.4th") && why.contains("2021"), "{why}");
}

#[test]
fn unknown_reporters_are_unrecognized_unless_allowed() {
    let draft =
        "Betts v. Smith, 12 Betts' Dec. 45, 47 (1820); Doe v. Roe, 9 Zqx. Rptr. 2d 10 (2001).";
    let ev = Evidence::new(vec![]);
    let v = verify::verify(draft, &ev);
    let unknown: Vec<&str> = v
        .outcomes
        .iter()
        .filter(|o| o.status == Status::Unrecognized)
        .map(|o| o.claim.text.as_str())
        .collect();
    assert_eq!(unknown, vec!["9 Zqx. Rptr. 2d 10"], "{:?}", v.outcomes);
    let why = v
        .outcomes
        .iter()
        .find(|o| o.status == Status::Unrecognized)
        .and_then(|o| o.reason.clone())
        .unwrap();
    assert!(why.contains("`Zqx. Rptr. 2d`"), "{why}");

    let allowed = Allowed::new(&["Zqx. Rptr. 2d"]);
    let mut ev = Evidence::new(vec![]);
    ev.allowed_reporters = allowed;
    ev.add_pages(
        "s.txt".into(),
        vec!["Doe v. Roe, 9 Zqx. Rptr. 2d 10 (2001).".into()],
    );
    let v = verify::verify("Doe v. Roe, 9 Zqx. Rptr. 2d 10 (2001).", &ev);
    assert_eq!(v.outcomes.len(), 1);
    assert_eq!(v.outcomes[0].status, Status::Supported, "{:?}", v.outcomes);
}

/// Short forms as briefs write them, each after its full citation: `at`, with and without
/// the comma; `Id.`, `id. at`, `Ibid.`; `supra` after capitalised and lower-case names, with
/// a space before the comma.
#[test]
fn short_forms_resolve_to_their_full_citation() {
    let cases = [
        (
            "Celotex Corp. v. Catrett, 477 U.S. 317 (1986).",
            "477 U.S. at 322.",
            "477 us 317, 322 (1986)",
        ),
        (
            "Celotex Corp. v. Catrett, 477 U.S. 317 (1986).",
            "477 U.S., at 322.",
            "477 us 317, 322 (1986)",
        ),
        (
            "Anderson v. Liberty Lobby, Inc., 477 U.S. 242, 248 (1986).",
            "Id. at 250.",
            "477 us 242, 250 (1986)",
        ),
        (
            "Anderson v. Liberty Lobby, Inc., 477 U.S. 242, 248 (1986).",
            "See id. at 255.",
            "477 us 242, 255 (1986)",
        ),
        (
            "Anderson v. Liberty Lobby, Inc., 477 U.S. 242, 248 (1986).",
            "Ibid.",
            "477 us 242, 248 (1986)",
        ),
        (
            "Anderson v. Liberty Lobby, Inc., 477 U.S. 242, 248 (1986).",
            "Id.",
            "477 us 242, 248 (1986)",
        ),
        (
            "Celotex Corp. v. Catrett, 477 U.S. 317 (1986).",
            "Celotex, supra, at 323.",
            "477 us 317, 323 (1986)",
        ),
        (
            "Celotex Corp. v. Catrett, 477 U.S. 317 (1986).",
            "Celotex , supra, at 323.",
            "477 us 317, 323 (1986)",
        ),
        (
            "eBay Inc. v. MercExchange, L.L.C., 547 U.S. 388 (2006).",
            "eBay, supra, at 391.",
            "547 us 388, 391 (2006)",
        ),
        (
            "In re Marriage of Smith, 12 Cal. App. 5th 100 (2017).",
            "12 Cal. App. 5th at 104.",
            "12 calapp5th 100, 104 (2017)",
        ),
        (
            "Doe v. Roe, 140 Wn.2d 568 (2000).",
            "140 Wash. 2d at 570.",
            "140 wash2d 568, 570 (2000)",
        ),
        (
            "Doe v. Roe, 2019 WL 123456 (S.D.N.Y. 2019).",
            "2019 WL 123456, at *3.",
            "2019 wl 123456, *3 (2019)",
        ),
        (
            "Doe v. Roe, 2019 WL 123456 (S.D.N.Y. 2019).",
            "Id. at *4.",
            "2019 wl 123456, *4 (2019)",
        ),
        (
            "Pat v. Lee, 45 Harv. L. Rev. 123 (1931).",
            "45 Harv. L. Rev. at 130.",
            "45 harvlrev 123, 130 (1931)",
        ),
        (
            "Under 42 U.S.C. § 1983, a person may sue.",
            "Id.",
            "42usc § 1983",
        ),
        (
            "Under Cal. Civ. Code § 1942.4, rent is withheld.",
            "Ibid.",
            "calcivcode § 1942.4",
        ),
    ];
    let mut resolved = 0;
    for (full, short, want) in cases {
        let draft = format!("{full} Later, {short}");
        let claims = verify::claims(&draft, &[]);
        let at = full.len() + " Later, ".len();
        let last = claims.iter().rfind(|c| c.start >= at);
        match last {
            Some(c) if c.key.to_string() == want => resolved += 1,
            other => println!("  unresolved: {short} after {full}: {other:?}"),
        }
    }
    println!("short forms resolved: {resolved} of {}", cases.len());
    assert_eq!(resolved, cases.len());
}

#[test]
fn statutes_in_every_principal_form() {
    let cases = [
        ("Cal. Bus. & Prof. Code § 17200", "calbusprofcode § 17200"),
        (
            "Tex. Civ. Prac. & Rem. Code Ann. § 16.003",
            "texcivpracremcode § 16.003",
        ),
        ("Cal. Gov't Code § 12940(a)", "calgovtcode § 12940(a)"),
        ("735 ILCS 5/2-1001", "735illcompstat § 5/2-1001"),
        ("765 Ill. Comp. Stat. 705/1", "765illcompstat § 705/1"),
        ("N.Y. C.P.L.R. 3212(b)", "nycplr § 3212(b)"),
        ("Mass. Gen. Laws ch. 186, § 14", "massgenlawsch186 § 14"),
        (
            "Md. Code Ann., Real Prop. § 8-211",
            "mdcoderealprop § 8-211",
        ),
        ("La. Civ. Code Ann. art. 2696", "lacivcode § art2696"),
        ("40 C.F.R. pt. 261", "40cfr § pt261"),
        ("23 Pa.C.S. § 5301", "23paconsstat § 5301"),
        ("23 Pa. Cons. Stat. § 5301", "23paconsstat § 5301"),
        ("Fla. Stat. § 83.56(3)", "flastat § 83.56(3)"),
        ("Wash. Rev. Code § 59.18.060", "washrevcode § 59.18.060"),
        ("N.C. Gen. Stat. § 42-42", "ncgenstat § 42-42"),
        ("Ohio Rev. Code Ann. § 5321.04", "ohiorevcode § 5321.04"),
        ("Okla. Stat. tit. 41, § 118", "oklastattit41 § 118"),
        ("Va. Code Ann. § 55.1-1220", "vacode § 55.1-1220"),
        ("Ga. Code Ann. § 44-7-13", "gacode § 44-7-13"),
        ("Colo. Rev. Stat. § 38-12-503", "colorevstat § 38-12-503"),
        ("N.J. Stat. Ann. § 2A:42-85", "njstat § 2A:42-85"),
        ("42 U.S.C. § 1983", "42usc § 1983"),
        ("28 U.S.C. §§ 1332(a)", "28usc § 1332(a)"),
        ("Fed. R. Civ. P. 56(a)", "fedrcivp § 56(a)"),
        ("Fed. R. Evid. 803(6)", "fedrevid § 803(6)"),
    ];
    let mut missed = Vec::new();
    for (text, want) in cases {
        let draft = format!("The claim arises under {text}. Nothing else.");
        let claims = verify::claims(&draft, &[]);
        let got: Vec<String> = claims
            .iter()
            .filter(|c| c.kind == Kind::Statute)
            .map(|c| c.key.to_string())
            .collect();
        if got != [want] {
            missed.push(format!("{text}: {got:?}, want {want}"));
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// Street addresses, phone numbers, ordinals and the draft's own numbering make no citation
/// or statute claim.
#[test]
fn addresses_phones_and_numbering_are_not_citations() {
    let mut texts: Vec<String> = Vec::new();
    for dir in [
        "N.", "S.", "E.", "W.", "N.E.", "N.W.", "S.E.", "S.W.", "NE", "SW",
    ] {
        for n in [1, 2, 3, 4, 5, 12, 21, 33, 104] {
            let ord = match (n % 10, n % 100) {
                (1, x) if x != 11 => "st",
                (2, x) if x != 12 => "nd",
                (3, x) if x != 13 => "rd",
                _ => "th",
            };
            for suffix in [
                "St.", "Street", "Ave.", "Avenue", "Blvd.", "Rd.", "Way", "Pl.",
            ] {
                texts.push(format!(
                    "The office is at {} {dir} {n}{ord} {suffix}, Suite 200, Portland, OR 97205.",
                    100 + n * 7
                ));
                texts.push(format!("Mail went to 1200 {dir} {n}{ord} {suffix} 4"));
            }
        }
    }
    for t in [
        "Call (415) 555-1212 or 415.555.1212 or +1 415 555 1212.",
        "Section 3.2 Background 4",
        "Part 2 Sec. 3 of the lease",
        "Article 5 Section 2 governs.",
        "1. Introduction 2. Facts 3. Argument",
        "See ¶ 12 and Exhibit 3 p. 4.",
        "Count 2 Claim 3 fails.",
        "On 5 Jan. 2024 at 3 p.m. 2 tenants left.",
        "He paid 3 times in 2019 and 4 times in 2020.",
        "Apt. 4B, Unit 12 Bldg. 3",
        "the 2nd Floor 3 rooms",
    ] {
        texts.push(t.to_string());
    }
    let mut bad = Vec::new();
    for t in &texts {
        for c in verify::claims(t, &[]) {
            if matches!(c.kind, Kind::Citation | Kind::Statute) {
                bad.push(format!("{t} → {} ({})", c.text, c.key));
            }
        }
    }
    println!(
        "non-citations checked: {}; claims from them: {}",
        texts.len(),
        bad.len()
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn lexrun_verify_json_reports_unrecognized_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.txt"), "Doe v. Roe, 9 F.3d 10 (1993).").unwrap();
    let draft = dir.path().join("d.md");
    std::fs::write(
        &draft,
        "Doe v. Roe, 9 F.3d 10 (1993); Poe v. Moe, 9 Zqx. Rptr. 10 (1993).",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["verify", "--json", "--sources"];
        let s = dir.path().join("s.txt");
        let s = s.to_str().unwrap().to_string();
        let d = draft.to_str().unwrap().to_string();
        let mut owned: Vec<String> = args.drain(..).map(String::from).collect();
        owned.push(s);
        owned.extend(extra.iter().map(|x| x.to_string()));
        owned.push(d);
        std::process::Command::new(env!("CARGO_BIN_EXE_lexrun"))
            // Never the user's own store.
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env_remove("LEXRUN_STORE")
            .env_remove("LEXRUN_LEDGER")
            .args(&owned)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let statuses: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["supported", "unrecognized"]);
    assert_eq!(v["unrecognized"], 1);
    let out = run(&["--allow-reporter", "Zqx. Rptr."]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["claims"][1]["status"], "unsupported", "{v}");
    assert_eq!(out.status.code(), Some(1));
}

/// `allow reporter` in a workflow reaches the plan, and only through the plan the verifier.
#[test]
fn a_workflow_can_accept_named_reporters() {
    let dir = tempfile::tempdir().unwrap();
    let lex = dir.path().join("w.lex");
    std::fs::write(
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
  citations must appear
  allow reporter "Betts' Dec.", "Zqx. Rptr."
}
"#,
    )
    .unwrap();
    let path = camino::Utf8PathBuf::from_path_buf(lex).unwrap();
    let checked = lexrun::check::check_path(&path);
    let workflow = checked.workflow.expect("the workflow checks");
    let plan = lexrun::plan::lower(&workflow);
    assert_eq!(
        plan.verify[0].allow_reporters,
        vec!["Betts' Dec.".to_string(), "Zqx. Rptr.".to_string()]
    );
    assert!(plan
        .to_text()
        .contains("reporters accepted beyond the catalogue: Betts' Dec., Zqx. Rptr."));
}

/// Every spelling of the catalogue in the four short forms after its full citation:
/// `VOL ABBR at PIN`, `VOL ABBR, at PIN`, `Id. at PIN`, `NAME, supra, at PIN`.
#[test]
fn short_forms_of_every_spelling_resolve() {
    let all = spellings();
    let (mut tried, mut resolved) = (0, 0);
    let mut missed = Vec::new();
    for (i, (spelling, _, year)) in all.iter().enumerate() {
        let vol = 10 + (i % 900) as u32;
        let page = 100 + (i % 7000) as u32;
        let y = year.map(|y| format!(" ({y})")).unwrap_or_default();
        let full = format!("Quill v. Rook, {vol} {spelling} {page}{y}.");
        for (n, short) in [
            format!("{vol} {spelling} at {}", page + 3),
            format!("{vol} {}, at {}", spelling.trim_end_matches(','), page + 3),
            format!("Id. at {}", page + 3),
            format!("Quill, supra, at {}", page + 3),
        ]
        .iter()
        .enumerate()
        {
            let draft = format!("{full} Later: {short}.");
            let claims = verify::claims(&draft, &[]);
            let Some(first) = claims.iter().find(|c| c.kind == Kind::Citation) else {
                continue; // not recognised in full: counted by the recognition test
            };
            tried += 1;
            let at = full.len() + " Later: ".len();
            let ok = claims.iter().any(|c| {
                c.start >= at
                    && matches!((&c.key, &first.key),
                        (Key::Case { volume, reporter, page: p, pin: Some(pin), .. },
                         Key::Case { volume: v0, reporter: r0, page: p0, .. })
                        if volume == v0 && reporter == r0 && p == p0 && *pin == (page + 3).to_string())
            });
            if ok {
                resolved += 1;
            } else if missed.len() < 20 {
                missed.push(format!("[{n}] {draft}"));
            }
        }
    }
    let rate = resolved as f64 / tried as f64;
    println!(
        "short forms resolved: {resolved} of {tried} ({:.2}%)",
        rate * 100.0
    );
    for m in &missed {
        println!("  unresolved: {m}");
    }
    assert!(rate >= 0.95, "{rate}");
}

/// Opinions among the sources as a firm keeps them: each file begins with its caption and
/// citation, its reporter pages marked with stars. Invented names on their real pages,
/// misspelt and abbreviated genuine names, a page inside an opinion, an unpublished
/// decision's number without its letter, and Westlaw and Lexis citations.
fn authorities() -> Evidence {
    let mut ev = Evidence::new(vec![]);
    let add = |ev: &mut Evidence, path: &str, pages: &[&str]| {
        ev.add_pages(path.into(), pages.iter().map(|p| p.to_string()).collect());
    };
    add(
        &mut ev,
        "authorities/iss-marine.txt",
        &[
            "UNITED STATES of America, Plaintiff,\nv.\nISS MARINE SERVICES, INC., Defendant.\n\n905 F. Supp. 2d 121 (D.D.C. 2012)\n\nMEMORANDUM OPINION\n\nThe United States alleges that ISS Marine overbilled the Navy for port services. *122 The contract ran from March 2005. *123 A false claim requires knowledge of falsity.",
            "*124 The relator's theory fails for want of materiality. *125 Summary judgment is granted in part. *126 So ordered.",
        ],
    );
    add(
        &mut ev,
        "authorities/celotex.txt",
        &[
            "CELOTFX CORPORATION v. CATRETT, ADMINISTRATRIX OF THE ESTATE OF CATRETT\nCelotex Corp. v. Catrett, 477 U.S. 317 (1986)\nSupreme Court of the United States\n\nJustice Rehnquist delivered the opinion of the Court. *318 Respondent sued in 1980. *322 The plain language of Rule 56(c) mandates the entry of summary judgment. *323 One of the principal purposes of the rule is to isolate factually unsupported claims. *327 Summary judgment is no disfavored shortcut. *330 Reversed.",
        ],
    );
    add(
        &mut ev,
        "authorities/rimsat.txt",
        &["In the Matter of RIMSAT, LTD., Debtor.\nIn re Rimsat, Ltd., 212 F.3d 1039 (7th Cir. 2000)\n\nThe bankruptcy court's order is affirmed."],
    );
    add(
        &mut ev,
        "authorities/hale.txt",
        &["People v. Hale, 2022 IL App (1st) 210454-U\n\nNOTICE: This order was filed under Supreme Court Rule 23 and is not precedent.\n\n¶ 1 Held: the conviction is affirmed."],
    );
    add(
        &mut ev,
        "authorities/acme-beta.txt",
        &["Acme Corp. v. Beta LLC, No. 18-cv-1234, 2019 WL 4639462 (S.D.N.Y. Sept. 30, 2019)\n\nOPINION AND ORDER\n\nThe parties signed the supply agreement in 2016. *2 Beta stopped paying in May 2018. *3 The unpaid balance was $48,200.00 on the day of filing. *4 The motion is denied."],
    );
    ev
}

fn outcomes_of(draft: &str, ev: &Evidence) -> Vec<(String, Status, String)> {
    verify::verify(draft, ev)
        .outcomes
        .into_iter()
        .filter(|o| o.claim.kind == Kind::Citation)
        .map(|o| (o.claim.text, o.status, o.reason.unwrap_or_default()))
        .collect()
}

#[test]
fn the_case_behind_the_cite_must_be_the_case_named() {
    let ev = authorities();
    let draft = "\
The government need not show intent. United States v. ISS Marine Servs., Inc., 905 F. Supp. 2d 121, 123 (D.D.C. 2012).
A foreign carrier is immune. Petersen v. Iran Air, 905 F. Supp. 2d 121 (D.D.C. 2012).
Summary judgment isolates unsupported claims. Celotex Corp. v. Catrett, 477 U.S. 317, 323 (1986); see also 477 U.S. at 327.
Courts construe the rule broadly. Smith v. Jones, 477 U.S. 322 (1986).
Unitcd States v. ISS Marinc Services, 905 F. Supp. 2d 121 (D.D.C. 2012), is on point.
The stay tolls every deadline. In re Rimsat, Ltd., 212 F.3d 1039 (7th Cir. 2000).
The stay tolls nothing. In re Zenith Holdings, 212 F.3d 1039 (7th Cir. 2000).
A lawyer may rely on the record. Doe v. Roe, 123 F.3d 456 (9th Cir. 1999).
";
    let got = outcomes_of(draft, &ev);
    let brief: Vec<(&str, Status)> = got.iter().map(|(t, s, _)| (t.as_str(), *s)).collect();
    assert_eq!(
        brief,
        vec![
            ("905 F. Supp. 2d 121, 123 (D.D.C. 2012)", Status::Supported),
            ("905 F. Supp. 2d 121 (D.D.C. 2012)", Status::Miscited),
            ("477 U.S. 317, 323 (1986)", Status::Supported),
            ("477 U.S. at 327", Status::Supported),
            ("477 U.S. 322 (1986)", Status::Miscited),
            ("905 F. Supp. 2d 121 (D.D.C. 2012)", Status::Supported),
            ("212 F.3d 1039 (7th Cir. 2000)", Status::Supported),
            ("212 F.3d 1039 (7th Cir. 2000)", Status::Miscited),
            ("123 F.3d 456 (9th Cir. 1999)", Status::Unsupported),
        ],
        "{got:#?}"
    );
    assert!(
        got[1]
            .2
            .contains("`905 F. Supp. 2d 121` begins UNITED STATES of America")
            && got[1].2.contains("ISS MARINE SERVICES")
            && got[1].2.contains("authorities/iss-marine.txt")
            && got[1].2.contains("not Petersen v. Iran Air"),
        "{}",
        got[1].2
    );
    assert!(
        got[4].2.contains("is a page inside")
            && got[4].2.contains("which begins at page 317")
            && got[4].2.contains("not Smith v. Jones"),
        "{}",
        got[4].2
    );
    assert!(
        got[7].2.contains("not In re Zenith Holdings"),
        "{}",
        got[7].2
    );
    assert!(got[8].2.contains("no source cites"), "{}", got[8].2);
}

#[test]
fn a_page_inside_an_opinion_under_its_own_name_names_the_first_page() {
    let got = outcomes_of(
        "Summary judgment is no shortcut. Celotex Corp. v. Catrett, 477 U.S. 327 (1986).",
        &authorities(),
    );
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].1, Status::Miscited, "{got:#?}");
    assert!(
        got[0].2.contains("cite it as `477 U.S. 317, 327`"),
        "{}",
        got[0].2
    );
    // The last page of an opinion may be the first of the next case: no alarm there.
    let got = outcomes_of(
        "Reversed. Brown v. Green, 477 U.S. 330 (1986).",
        &authorities(),
    );
    assert_eq!(got[0].1, Status::Unsupported, "{got:#?}");
    assert!(got[0].2.contains("no source cites"), "{got:#?}");
}

#[test]
fn a_neutral_citation_matches_only_whole() {
    let got = outcomes_of(
        "Affirmed. People v. Hale, 2022 IL App (1st) 210454, ¶ 1. Again, People v. Hale, 2022 IL App (1st) 210454-U, ¶ 1.",
        &authorities(),
    );
    let brief: Vec<(&str, Status)> = got.iter().map(|(t, s, _)| (t.as_str(), *s)).collect();
    assert_eq!(
        brief,
        vec![
            ("2022 IL App (1st) 210454, ¶ 1", Status::Unsupported),
            ("2022 IL App (1st) 210454-U, ¶ 1", Status::Supported),
        ],
        "{got:#?}"
    );
    let keys: Vec<String> =
        verify::claims("2024 N.Y. Slip Op. 51192(U); 2024 N.Y. Slip Op. 51192", &[])
            .into_iter()
            .map(|c| c.key.to_string())
            .collect();
    assert_eq!(keys, ["2024 nyslipop-u 51192", "2024 nyslipop 51192"]);
}

#[test]
fn westlaw_and_lexis_citations_are_claims_with_star_pins() {
    let ev = authorities();
    let draft = "\
Beta stopped paying in May 2018. Acme Corp. v. Beta LLC, No. 18-cv-1234, 2019 WL 4639462, at *2 (S.D.N.Y. Sept. 30, 2019).
The unpaid balance was $48,200.00. Acme Corp. v. Beta LLC, 2019 WL 4639462, at *2.
Breach excuses performance. Zeta Inc. v. Omega Co., 2019 WL 4639462, at *3 (S.D.N.Y. 2019).
Airlines owe a duty of care. Varghese v. China S. Airlines Co., 2012 WL 12873819 (S.D.N.Y. 2012).
Tolling applies. Kline v. Ortiz, 2015 U.S. Dist. LEXIS 12345, at *4 (E.D. Pa. 2015).
";
    let v = verify::verify(draft, &ev);
    let got: Vec<(String, Status, String)> = v
        .outcomes
        .iter()
        .map(|o| {
            (
                o.claim.text.clone(),
                o.status,
                o.reason.clone().unwrap_or_default(),
            )
        })
        .collect();
    let brief: Vec<(&str, Status)> = got.iter().map(|(t, s, _)| (t.as_str(), *s)).collect();
    assert_eq!(
        brief,
        vec![
            ("May 2018", Status::Supported),
            (
                "2019 WL 4639462, at *2 (S.D.N.Y. Sept. 30, 2019)",
                Status::Supported
            ),
            ("$48,200.00", Status::Miscited),
            ("2019 WL 4639462, at *2", Status::Supported),
            ("2019 WL 4639462, at *3 (S.D.N.Y. 2019)", Status::Miscited),
            ("2012 WL 12873819 (S.D.N.Y. 2012)", Status::Unsupported),
            (
                "2015 U.S. Dist. LEXIS 12345, at *4 (E.D. Pa. 2015)",
                Status::Unsupported
            ),
        ],
        "{got:#?}"
    );
    assert!(got[2].2.contains("at *3"), "{}", got[2].2);
    assert!(
        got[4].2.contains("not Zeta Inc. v. Omega Co."),
        "{}",
        got[4].2
    );
    let keys: Vec<String> = v.outcomes[5..]
        .iter()
        .map(|o| o.claim.key.to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "2012 wl 12873819 (2012)",
            "2015 usdistlexis 12345, *4 (2015)"
        ]
    );
}

/// What a case is cited for (`(holding that …)`) is listed as not checked, beside the
/// citation's own outcome: never passed as if the authority said it.
#[test]
fn a_holding_parenthetical_is_listed_as_not_checked() {
    let draft = "The stay tolls every deadline. In re Rimsat, Ltd., 212 F.3d 1039 (7th Cir. 2000) (holding that the automatic stay suspends limitations periods (citing 11 U.S.C. § 108)). See also Doe v. Roe, 123 F.3d 456 (9th Cir. 1999) (per curiam).";
    let v = verify::verify(draft, &authorities());
    let statuses: Vec<(&str, Status)> = v
        .outcomes
        .iter()
        .filter(|o| o.claim.kind == Kind::Citation)
        .map(|o| (o.claim.text.as_str(), o.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("212 F.3d 1039 (7th Cir. 2000)", Status::Supported),
            ("123 F.3d 456 (9th Cir. 1999)", Status::Unsupported),
        ]
    );
    let listed: Vec<(&str, &str)> = v
        .unchecked
        .iter()
        .map(|(c, why)| (c.text.as_str(), why.as_str()))
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        listed[0].0,
        "(holding that the automatic stay suspends limitations periods (citing 11 U.S.C. § 108))"
    );
    assert!(
        listed[0]
            .1
            .contains("what `212 F.3d 1039 (7th Cir. 2000)` is cited for is not checked"),
        "{listed:?}"
    );
}
