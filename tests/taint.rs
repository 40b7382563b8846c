//! The intake guard on a generated corpus, and claim taint: copies of outputs (exact, edited,
//! disguised with look-alike letters and invisible characters) refused; genuine documents
//! that quote the evidence heavily admitted; a note that launders one invented citation,
//! date, amount or quotation caught at intake and by `lexrun verify`.
//! `cargo test --test tests taint:: -- --nocapture` prints the rates.
//! (Longer than most test files: the corpus generator and the cases measured on it belong
//! together.)

use crate::support;

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
                claims: verify::taint::model_claims(
                    &lexrun::run::LedgerFacts(&store),
                    Some(&matter),
                ),
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

/// A model text as the labelled set builds it: its words, and which of them it quoted from
/// the evidence (the guard leaves those out of what it remembers).
struct Drafted {
    words: Vec<String>,
    quoted: Vec<bool>,
}

impl Drafted {
    fn text(&self) -> String {
        self.words.join(" ")
    }
}

/// A model text of `own` words of its own around a passage of `quoted` words from `doc`.
fn drafted(r: &mut Rng, doc: &str, own: usize, quoted: usize) -> Drafted {
    let mut words = Vec::new();
    let mut flags = Vec::new();
    let before = own / 2;
    let mine = |r: &mut Rng, n: usize| -> Vec<String> {
        let mut w: Vec<String> = Vec::new();
        while w.len() < n {
            let k = 8 + r.below(10);
            w.extend(sentence(r, k).split(' ').map(str::to_string));
        }
        w.truncate(n);
        w
    };
    for w in mine(r, before) {
        words.push(w);
        flags.push(false);
    }
    for w in quote(r, doc, quoted).split(' ') {
        words.push(w.to_string());
        flags.push(true);
    }
    for w in mine(r, own - before) {
        words.push(w);
        flags.push(false);
    }
    Drafted {
        words,
        quoted: flags,
    }
}

/// `d` with exactly `share` of its words edited: a third replaced, a third deleted, a third
/// with a word inserted after them.
fn word_edited(r: &mut Rng, d: &Drafted, share: f64) -> String {
    let n = d.words.len();
    let k = (n as f64 * share).round() as usize;
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, r.below(i + 1));
    }
    let mut how = vec![0u8; n];
    for (j, &i) in order[..k].iter().enumerate() {
        how[i] = 1 + (j % 3) as u8;
    }
    let mut out: Vec<String> = Vec::new();
    for (w, h) in d.words.iter().zip(how) {
        match h {
            1 => out.push(r.pick(WORDS).to_string()),
            2 => {}
            3 => {
                out.push(w.clone());
                out.push(r.pick(WORDS).to_string());
            }
            _ => out.push(w.clone()),
        }
    }
    out.join(" ")
}

/// `d` laid out again: wrapped at 50 columns, each sentence a list item, case changed.
fn reformatted(d: &Drafted) -> String {
    let text = d.text().to_uppercase().replace(". ", ".\n- ");
    let mut out = String::from("- ");
    let mut col = 0;
    for w in text.split(' ') {
        if col + w.len() > 50 {
            out.push('\n');
            col = 0;
        } else if col > 0 {
            out.push(' ');
        }
        out.push_str(w);
        col += w.len() + 1;
    }
    out
}

/// A new memo holding a contiguous passage of `d` with `share` of its own words, between
/// new prose as long as the passage.
fn excerpted(r: &mut Rng, d: &Drafted, share: f64) -> String {
    let own_total = d.quoted.iter().filter(|q| !**q).count();
    let want = (own_total as f64 * share).ceil() as usize;
    let n = d.words.len();
    // Every start whose passage holds enough of the model's own words; one at random.
    let mut starts = Vec::new();
    for s in 0..n {
        let (mut own, mut e) = (0, s);
        while e < n && own < want {
            own += !d.quoted[e] as usize;
            e += 1;
        }
        if own >= want {
            starts.push((s, e));
        }
    }
    let (s, e) = starts[r.below(starts.len())];
    let passage = d.words[s..e].join(" ");
    let around = (e - s) / 12 + 1;
    format!(
        "Memo to file. {} {passage} {}",
        text(r, around),
        text(r, around)
    )
}

struct Tally {
    rows: Vec<(String, usize, usize)>,
}

impl Tally {
    fn add(&mut self, class: &str, refused: bool) {
        match self.rows.iter_mut().find(|(c, _, _)| c == class) {
            Some(row) => {
                row.1 += refused as usize;
                row.2 += 1;
            }
            None => self.rows.push((class.to_string(), refused as usize, 1)),
        }
    }
    fn rate(&self, class: &str) -> f64 {
        let (_, hit, n) = self.rows.iter().find(|(c, _, _)| c == class).unwrap();
        *hit as f64 / *n as f64
    }
}

/// The labelled set: model texts from 30 to 700 words of their own, each quoting the
/// evidence; exact, reformatted, 5/10/20%- and 30%-edited copies (words replaced, deleted and
/// inserted), excerpts holding 30, 40 and 60% of a text's own words pasted into a new memo,
/// and genuine documents (short letters, prose quoting the evidence heavily, the very
/// passages the model texts quote, the evidence retold with a fifth of its words changed).
/// Every copy up to 20% edited and every excerpt refused, at least 90% of the 30% edits,
/// no genuine document.
#[test]
fn a_labelled_set_of_copies_excerpts_and_genuine_documents() {
    let mut r = Rng(0x1abe_11ed);
    let evidence: Vec<String> = (0..20).map(|_| text(&mut r, 25)).collect();
    // Model texts from short to long, each quoting a passage of the evidence.
    let drafts: Vec<Drafted> = (0..42)
        .map(|i| {
            let own = [30, 50, 90, 150, 250, 400, 700][i % 7];
            let quoted = 20 + r.below(120);
            drafted(&mut r, &evidence[i % evidence.len()], own, quoted)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let evidence_fps: std::collections::HashSet<u64> = evidence
        .iter()
        .flat_map(|e| lexrun::store::shingles::fingerprints(e))
        .collect();
    for (i, d) in drafts.iter().enumerate() {
        let t = d.text();
        let a = Artifact {
            hash: blake3::hash(t.as_bytes()).to_hex().to_string(),
            text_hash: intake::text_hash(&t),
            run_id: format!("run-{i}"),
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
        store.add_artifact(&a, &t, &evidence_fps).unwrap();
    }
    let files = tempfile::tempdir().unwrap();
    let mut tally = Tally { rows: Vec::new() };
    let mut wrongly: Vec<String> = Vec::new();
    let mut check = |class: &str, text: &str, copy: bool, tally: &mut Tally| {
        let got = refused(&store, files.path(), "f.txt", text);
        tally.add(class, got.is_some());
        if !copy {
            if let Some(why) = got {
                wrongly.push(format!("{class}: {why}"));
            }
        }
    };
    for d in &drafts {
        check("exact", &d.text(), true, &mut tally);
        check("reformatted", &reformatted(d), true, &mut tally);
        for share in [0.05, 0.10, 0.20] {
            for _ in 0..3 {
                let e = word_edited(&mut r, d, share);
                check("edited ≤ 20%", &e, true, &mut tally);
            }
        }
        for _ in 0..4 {
            let e = word_edited(&mut r, d, 0.30);
            check("edited 30%", &e, true, &mut tally);
        }
        for share in [0.30, 0.40, 0.60] {
            let e = excerpted(&mut r, d, share);
            check("excerpt ≥ 30%", &e, true, &mut tally);
        }
    }
    // Genuine documents: new prose quoting the evidence heavily, some quoting the very
    // passages the model texts quote, and short letters.
    for i in 0..75 {
        let e = &evidence[i % evidence.len()];
        let doc = match i % 5 {
            0 => text(&mut r, 3),
            1 => format!(
                "{} {} {} {}",
                text(&mut r, 5),
                quote(&mut r, e, 80),
                text(&mut r, 3),
                quote(&mut r, &evidence[(i + 7) % evidence.len()], 60)
            ),
            2 => {
                // The passage a model text quoted, quoted again.
                let d = &drafts[i % drafts.len()];
                let q: Vec<&str> = d
                    .words
                    .iter()
                    .zip(&d.quoted)
                    .filter(|(_, q)| **q)
                    .map(|(w, _)| w.as_str())
                    .collect();
                format!("{} {} {}", text(&mut r, 4), q.join(" "), text(&mut r, 4))
            }
            3 => format!("{} {}", e, text(&mut r, 6)),
            // The evidence retold with a fifth of its words changed, as a person restates
            // what a letter said.
            _ => {
                let d = Drafted {
                    words: e.split(' ').map(str::to_string).collect(),
                    quoted: vec![true; e.split(' ').count()],
                };
                format!("{} {}", text(&mut r, 3), word_edited(&mut r, &d, 0.2))
            }
        };
        check("genuine", &doc, false, &mut tally);
    }
    for (class, hit, n) in &tally.rows {
        println!(
            "{class:<14} refused {:>5.1}% ({hit}/{n})",
            *hit as f64 / *n as f64 * 100.0
        );
    }
    assert_eq!(tally.rate("exact"), 1.0);
    assert_eq!(tally.rate("reformatted"), 1.0);
    assert_eq!(tally.rate("edited ≤ 20%"), 1.0);
    assert_eq!(tally.rate("excerpt ≥ 30%"), 1.0);
    assert!(tally.rate("edited 30%") >= 0.9);
    assert!(
        wrongly.is_empty(),
        "genuine documents refused: {wrongly:#?}"
    );
    assert_eq!(tally.rate("genuine"), 0.0);
}
