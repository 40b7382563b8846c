//! The intake guard on a generated corpus, and claim taint: copies of outputs (exact, edited,
//! disguised with look-alike letters and invisible characters) refused; genuine documents
//! that quote the evidence heavily admitted; a note that launders one invented citation,
//! date, amount or quotation caught at intake and by `lexrun verify`.
//! `cargo test --test taint -- --nocapture` prints the rates.
//! (Longer than most test files: the corpus generator and the cases measured on it belong
//! together.)

mod support;

use std::fs;
use std::path::Path;
use std::time::Duration;

use lexrun::run::intake;
use lexrun::store::{Artifact, ClaimRecord, Store};
use lexrun::verify::{self, taint::Taint, Status};
use support::servers::{Answer, Fake, Seen, Speaks};
use support::Lexrun;

/// xorshift: the corpus is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const COMMON: &[&str] = &[
    "the", "of", "and", "to", "in", "a", "that", "is", "was", "for", "on", "with", "as", "by",
    "at", "from", "this", "which", "be", "not", "or", "have", "had", "it", "an", "were", "been",
];
const WORDS: &[&str] = &[
    "tenant",
    "landlord",
    "lease",
    "premises",
    "heating",
    "repair",
    "notice",
    "rent",
    "deposit",
    "inspection",
    "mould",
    "damp",
    "bedroom",
    "kitchen",
    "agent",
    "engineer",
    "invoice",
    "receipt",
    "payment",
    "breach",
    "covenant",
    "habitability",
    "court",
    "order",
    "claim",
    "damages",
    "letter",
    "email",
    "visit",
    "promise",
    "week",
    "month",
    "winter",
    "radiator",
    "boiler",
    "window",
    "wall",
    "ceiling",
    "water",
    "leak",
    "complaint",
    "response",
    "delay",
    "condition",
    "property",
    "flat",
    "unit",
    "building",
    "owner",
    "manager",
    "contractor",
    "estimate",
    "cost",
    "withheld",
    "returned",
    "demanded",
    "refused",
    "ignored",
    "reported",
    "described",
    "stated",
    "photographs",
    "report",
    "council",
    "officer",
    "hazard",
    "health",
    "children",
    "family",
    "electric",
    "heater",
    "cold",
    "broken",
    "urgent",
    "written",
    "verbal",
    "signed",
    "dated",
];

fn sentence(r: &mut Rng, words: usize) -> String {
    let mut s: Vec<&str> = Vec::with_capacity(words);
    for i in 0..words {
        s.push(if i % 3 == 1 {
            r.pick(COMMON)
        } else {
            r.pick(WORDS)
        });
    }
    let mut t = s.join(" ");
    t.push('.');
    t
}

fn text(r: &mut Rng, sentences: usize) -> String {
    (0..sentences)
        .map(|_| {
            let n = 8 + r.below(10);
            sentence(r, n)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The corpus: evidence documents, and model outputs that quote them heavily (a third of
/// each output is passages of the evidence).
struct Corpus {
    evidence: Vec<String>,
    outputs: Vec<String>,
}

fn corpus(seed: u64) -> Corpus {
    let mut r = Rng(seed);
    let evidence: Vec<String> = (0..30).map(|_| text(&mut r, 25)).collect();
    let outputs = (0..40)
        .map(|i| {
            let quoted = quote(&mut r, &evidence[i % evidence.len()], 60);
            format!("{} {} {}", text(&mut r, 8), quoted, text(&mut r, 8))
        })
        .collect();
    Corpus { evidence, outputs }
}

/// A passage of about `words` words from `doc`.
fn quote(r: &mut Rng, doc: &str, words: usize) -> String {
    let w: Vec<&str> = doc.split(' ').collect();
    let start = r.below(w.len().saturating_sub(words).max(1));
    w[start..(start + words).min(w.len())].join(" ")
}

/// `text` with about `share` of its words replaced.
fn edited(r: &mut Rng, text: &str, share: f64) -> String {
    text.split(' ')
        .map(|w| {
            if (r.below(1000) as f64) < share * 1000.0 {
                r.pick(WORDS).to_string()
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` disguised: Latin letters swapped for Cyrillic look-alikes, zero-width spaces and
/// soft hyphens inside words, some letters full-width.
fn look_alike(r: &mut Rng, text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let roll = r.below(100);
        let d = match c {
            'a' if roll < 50 => 'а',
            'e' if roll < 50 => 'е',
            'o' if roll < 50 => 'о',
            'p' if roll < 50 => 'р',
            'c' if roll < 50 => 'с',
            'x' if roll < 50 => 'х',
            'i' if roll < 30 => 'і',
            c if c.is_ascii_lowercase() && roll < 5 => {
                char::from_u32(0xFF41 + (c as u32 - 'a' as u32)).unwrap()
            }
            c => c,
        };
        out.push(d);
        if c.is_alphabetic() && roll > 90 {
            out.push(if roll > 95 { '\u{200B}' } else { '\u{00AD}' });
        }
    }
    out
}

/// A store holding the corpus's outputs, as a run records them: the fingerprints of the
/// evidence they quote left out.
fn stored(c: &Corpus) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let evidence: std::collections::HashSet<u64> = c
        .evidence
        .iter()
        .flat_map(|e| lexrun::store::shingles::fingerprints(e))
        .collect();
    for (i, o) in c.outputs.iter().enumerate() {
        let a = Artifact {
            hash: blake3::hash(o.as_bytes()).to_hex().to_string(),
            text_hash: intake::text_hash(o),
            run_id: format!("run-{}", i / 10),
            matter: "smith".into(),
            stage: "draft".into(),
            round: 1,
            kind: "stage".into(),
            path: format!("out/{i}.md"),
            model: "m".into(),
            inputs: serde_json::Value::Null,
            plan_hash: String::new(),
            node_hash: String::new(),
            created: 0,
        };
        store.add_artifact(&a, o, &evidence).unwrap();
    }
    (dir, store)
}

fn refused(store: &Store, dir: &Path, name: &str, text: &str) -> Option<String> {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    intake::check(store, "smith", name, &p, text, &[]).refused
}

fn rate(hit: usize, n: usize) -> f64 {
    hit as f64 / n as f64
}

#[test]
fn copies_of_outputs_are_refused_and_genuine_documents_admitted() {
    let c = corpus(0x5eed_cafe);
    let (_d, store) = stored(&c);
    let files = tempfile::tempdir().unwrap();
    let mut r = Rng(0xfeed_beef);
    let n = c.outputs.len();
    let exact = c
        .outputs
        .iter()
        .filter(|o| refused(&store, files.path(), "copy.txt", o).is_some())
        .count();
    let mut edits = 0;
    let mut edit_total = 0;
    for o in &c.outputs {
        for share in [0.05, 0.10, 0.15, 0.20] {
            edit_total += 1;
            edits += refused(
                &store,
                files.path(),
                "edited.txt",
                &edited(&mut r, o, share),
            )
            .is_some() as usize;
        }
    }
    let disguised = c
        .outputs
        .iter()
        .filter(|o| {
            refused(
                &store,
                files.path(),
                "disguised.txt",
                &look_alike(&mut r, o),
            )
            .is_some()
        })
        .count();
    // Genuine documents: new prose that quotes the evidence heavily (half of each is
    // passages of it), and short letters.
    let mut genuine = 0;
    let mut genuine_refused = Vec::new();
    for i in 0..60 {
        let e = &c.evidence[i % c.evidence.len()];
        let doc = if i % 3 == 0 {
            text(&mut r, 3)
        } else {
            format!(
                "{} {} {} {}",
                text(&mut r, 5),
                quote(&mut r, e, 80),
                text(&mut r, 3),
                quote(&mut r, &c.evidence[(i + 7) % c.evidence.len()], 60)
            )
        };
        genuine += 1;
        if let Some(why) = refused(&store, files.path(), "genuine.txt", &doc) {
            genuine_refused.push(why);
        }
    }
    println!(
        "exact copies refused {:.1}% ({exact}/{n}); ≤ 20% edits {:.1}% ({edits}/{edit_total}); look-alike copies {:.1}% ({disguised}/{n}); genuine documents refused {}/{genuine}",
        rate(exact, n) * 100.0,
        rate(edits, edit_total) * 100.0,
        rate(disguised, n) * 100.0,
        genuine_refused.len()
    );
    assert_eq!(exact, n);
    assert!(rate(edits, edit_total) >= 0.99, "{edits}/{edit_total}");
    assert_eq!(disguised, n);
    assert!(genuine_refused.is_empty(), "{genuine_refused:?}");
}

#[test]
fn a_refusal_names_both_shares() {
    let c = corpus(7);
    let (_d, store) = stored(&c);
    let files = tempfile::tempdir().unwrap();
    let mut r = Rng(99);
    let why = refused(
        &store,
        files.path(),
        "e.txt",
        &edited(&mut r, &c.outputs[3], 0.1),
    )
    .expect("refused");
    assert!(
        why.contains("% of its text matches lexrun's text of stage `draft`")
            && why.contains("% of that text")
            && why.contains("shared fingerprints"),
        "{why}"
    );
}

#[test]
fn a_tiny_stage_text_cannot_refuse_a_genuine_letter() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let gate = r#"{"grounds": true, "reason": "the tenant gave written notice of the broken heating", "needs_figures": false}"#;
    let a = Artifact {
        hash: blake3::hash(gate.as_bytes()).to_hex().to_string(),
        text_hash: intake::text_hash(gate),
        run_id: "run-1".into(),
        matter: "smith".into(),
        stage: "gate".into(),
        round: 1,
        kind: "stage".into(),
        path: "out/gate/output.md".into(),
        model: "m".into(),
        inputs: serde_json::Value::Null,
        plan_hash: String::new(),
        node_hash: String::new(),
        created: 0,
    };
    store.add_artifact(&a, gate, &Default::default()).unwrap();
    let letter =
        "Dear Ms Smith, thank you for your letter. We confirm that the tenant gave written \
        notice of the broken heating on March 3, and that our engineer will attend on Friday \
        morning between nine and twelve. Please make sure someone is at home to let him in, and \
        keep the receipts for the electric heaters you bought; we will refund them with the next \
        statement. Yours sincerely, the managing agent.";
    let files = tempfile::tempdir().unwrap();
    assert_eq!(refused(&store, files.path(), "letter.txt", letter), None);
    // The gate's answer itself, retyped, is still refused: the file is mostly that answer.
    let retyped = "grounds true reason the tenant gave written notice of the broken heating needs figures false";
    assert!(refused(&store, files.path(), "retyped.txt", retyped).is_some());
}

/// A note carrying one claim a model invented, for each kind.
fn invented(kind: usize, i: usize) -> (String, String) {
    match kind {
        0 => {
            let c = format!(
                "Harbor Props. v. Lane{i}, {} F.3d {} (9th Cir. 2019)",
                900 + i,
                100 + i
            );
            (c.clone(), format!("Research note: see {c} on repairs."))
        }
        1 => {
            let d = format!("March {}, 2023", 1 + i % 28);
            (
                d.clone(),
                format!("Phone call with the agent on {d} about the boiler."),
            )
        }
        2 => {
            let a = format!("${},{:03}.{:02}", 3 + i % 7, 100 + i, i % 100);
            (a.clone(), format!("The engineer quoted {a} for the work."))
        }
        _ => {
            let q = format!(
                "the landlord shall restore heat within {} hours of notice",
                24 + i
            );
            (
                format!("\"{q}\""),
                format!("The lease says \"{q}\" in its repair clause."),
            )
        }
    }
}

#[test]
fn laundering_one_invented_claim_through_a_note_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let files = tempfile::tempdir().unwrap();
    let lease = "The lease of the flat at 12 Harbor Road began on June 1, 2022. Rent is $1,250.00 \
        a month. The landlord keeps the heating in repair.";
    let lease_path = files.path().join("lease.txt");
    fs::write(&lease_path, lease).unwrap();
    let kinds = ["citation", "date", "amount", "quotation"];
    let mut caught = [0usize; 4];
    let mut verified = [0usize; 4];
    let per = 25;
    for (k, name) in kinds.iter().enumerate() {
        for i in 0..per {
            let matter = format!("m-{k}-{i}");
            // The evidence is seen; then a model writes the claim, and verification flags it.
            let lease_v = intake::check(&store, &matter, "lease.txt", &lease_path, lease, &[]);
            std::thread::sleep(Duration::from_millis(2));
            let (claim, note) = invented(k, i);
            let research = format!("Research: {note}");
            let cs = verify::claims(&research, &[]);
            let bare = claim.trim_matches('"');
            let c = cs
                .iter()
                .find(|c| {
                    let t = c.text.trim_matches(|x| x == '"' || x == '“' || x == '”');
                    !t.is_empty() && (bare.contains(t) || t.contains(bare))
                })
                .unwrap_or_else(|| panic!("{name} `{claim}` is a claim: {cs:?}"));
            store
                .add_claims(&[ClaimRecord {
                    matter: matter.clone(),
                    kind: c.kind.as_str().into(),
                    ident: c.identity(),
                    key: serde_json::to_string(&c.key).unwrap(),
                    text: c.text.clone(),
                    run_id: "run-1".into(),
                    stage: "research".into(),
                    created: lexrun::store::now_ms(),
                    status: "unsupported".into(),
                }])
                .unwrap();
            std::thread::sleep(Duration::from_millis(2));
            // A person files a short note carrying the one claim.
            let note_path = files.path().join(format!("note-{k}-{i}.txt"));
            fs::write(&note_path, &note).unwrap();
            let note_v = intake::check(&store, &matter, "04-note.txt", &note_path, &note, &[]);
            assert!(note_v.refused.is_none(), "too short to be a copy: {note}");
            let mut vs = vec![lease_v, note_v];
            intake::check_taint(
                &store,
                &matter,
                &mut vs,
                &[vec![lease.to_string()], vec![note.clone()]],
                &[],
            );
            assert!(!vs[0].blocked(), "the lease predates the claim");
            if vs[1].blocked() && vs[1].carries.len() == 1 {
                caught[k] += 1;
            }
            // `lexrun verify` on a draft repeating the claim: the note's support is set aside.
            let draft = format!("The tenant relies on {claim}.");
            let mut ev = verify::Evidence::new(vec![]);
            ev.add_pages("lease.txt".into(), vec![lease.into()]);
            ev.add_pages("record/04-note.txt".into(), vec![note.clone()]);
            let taint = Taint {
                claims: intake::model_claims(&store, Some(&matter)),
                entered: [
                    ("lease.txt".to_string(), vs[0].first_seen),
                    ("record/04-note.txt".to_string(), vs[1].first_seen),
                ]
                .into_iter()
                .collect(),
            };
            let v = verify::verify_with(&draft, &ev, &taint);
            let plain = verify::verify(&draft, &ev);
            assert!(
                plain.outcomes.iter().any(|o| o.status == Status::Supported),
                "without taint the note supports {claim}"
            );
            if v.outcomes.iter().any(|o| {
                o.status == Status::Unsupported
                    && o.reason.as_deref().is_some_and(|r| {
                        r.contains("supported only by record/04-note.txt")
                            && r.contains("run run-1, stage research")
                    })
            }) {
                verified[k] += 1;
            }
        }
    }
    for (k, name) in kinds.iter().enumerate() {
        println!(
            "laundered {name}s caught at intake {}/{per}, set aside by verify {}/{per}",
            caught[k], verified[k]
        );
    }
    assert_eq!(caught, [per; 4]);
    assert_eq!(verified, [per; 4]);
}

const INVENTED: &str = "Harbor Props. v. Lane, 912 F.3d 118 (9th Cir. 2019)";

/// The whole path through the binary: a run whose drafter invents a citation (verification
/// blocks it), a note carrying it filed afterwards, `lexrun sources` refusing it, `lexrun
/// verify` setting its support aside, and an admission letting it in.
#[test]
fn a_laundering_note_stops_the_next_run_until_admitted() {
    let dir = tempfile::tempdir().unwrap();
    let matter = dir.path().join("matter");
    fs::create_dir_all(matter.join("intake")).unwrap();
    for f in ["01-letter.txt", "02-receipt.txt"] {
        fs::copy(
            Path::new("tests/runtime/matter/intake").join(f),
            matter.join("intake").join(f),
        )
        .unwrap();
    }
    let store = dir.path().join("store");
    let srv = Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("You are opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            format!("1. The landlord had to repair the heating. See {INVENTED}.")
        };
        Answer { text, fault: None }
    });
    let lexrun = |args: &[&str]| {
        Lexrun::new()
            .args(args)
            .arg("--matter")
            .arg(&matter)
            .arg("--store")
            .arg(&store)
            .output()
    };
    let run_args = |out: &str| {
        vec![
            "run".to_string(),
            "tests/runtime/pipeline.lex".into(),
            "--out".into(),
            dir.path().join(out).display().to_string(),
            "--endpoint".into(),
            format!("gpu_a={}", srv.url),
            "--endpoint".into(),
            format!("gpu_b={}", srv.url),
        ]
    };
    let args: Vec<String> = run_args("out");
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "blocked: {}", support::stderr(&o));
    // A person copies the one line into a short note in the matter's record.
    fs::write(
        matter.join("intake/04-note.txt"),
        format!("Note for file: the court held in {INVENTED} that heat is essential.\n"),
    )
    .unwrap();
    let o = lexrun(&["sources", "tests/runtime/pipeline.lex"]);
    let out = support::stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("04-note.txt  REFUSED") && out.contains("carries citation `912 F.3d 118"),
        "{out}"
    );
    assert!(out.contains("01-letter.txt  admitted"), "{out}");
    // `lexrun verify` on the draft: the note's support does not count.
    let draft = dir.path().join("draft.md");
    fs::write(
        &draft,
        format!("The heating had to be repaired. {INVENTED}.\n"),
    )
    .unwrap();
    let o = Lexrun::new()
        .env("LEXRUN_STORE", &store)
        .args(["verify", "--json", "--sources"])
        .arg(matter.join("intake"))
        .arg(&draft)
        .output();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["claims"][0];
    assert_eq!(c["status"], "unsupported", "{v}");
    let reason = c["reason"].as_str().unwrap_or_default();
    assert!(
        reason
            .contains("04-note.txt, which appeared after lexrun generated this claim in run run-")
            && reason.contains("stage draft"),
        "{reason}"
    );
    // The next run does not start; the model is not called.
    let calls = srv.calls.load(std::sync::atomic::Ordering::SeqCst);
    let args = run_args("again");
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        support::stderr(&o).contains("04-note.txt"),
        "{}",
        support::stderr(&o)
    );
    assert_eq!(srv.calls.load(std::sync::atomic::Ordering::SeqCst), calls);
    // Admitted on purpose: the guard lets it in.
    let lex = fs::read_to_string("tests/runtime/pipeline.lex").unwrap().replace(
        "  bates \"TEST\" start 1 width 6\n",
        "  bates \"TEST\" start 1 width 6\n  admit \"intake/04-note.txt\" because \"the partner checked the citation\"\n",
    );
    let admitted = dir.path().join("admitted.lex");
    fs::write(&admitted, lex).unwrap();
    let o = lexrun(&["sources", admitted.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stdout(&o));
}
