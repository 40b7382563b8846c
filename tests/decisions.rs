//! Reviewers' decisions from the command line: `lexrun decide` confirms a flagged claim by a
//! page, strikes one, or waives one; `lexrun verify` applies them while the sentence and the
//! page are unchanged, and says when one lapsed; bad decisions are refused with nothing
//! written.

use crate::support;

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
            Ok(s) => s
                .decisions(&lexrun::verify::decisions::matter_key(
                    matter,
                    Some(&self.path(matter)),
                ))
                .unwrap(),
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
    // The page is recorded by its name in the matter, as a run's verify step names it.
    let page = d.decisions("smith")[0].page.clone().unwrap();
    assert_eq!(page.file, "intake/lease.txt");

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
fn a_repeated_claim_keeps_its_id_once_the_first_is_waived() {
    let d = Desk::new();
    fs::write(
        d.path("smith/draft.md"),
        "He paid $99.00 first and then $99.00 again.\n",
    )
    .unwrap();
    let (_, v) = d.verify("smith");
    let ids: Vec<String> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["text"].as_str().unwrap().contains("$99.00"))
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{v}");
    assert_eq!(ids[1], format!("{}.2", ids[0]));
    ok(&d.decide("smith", &[&ids[0], "--waive", "--reason", "a caption"]));
    ok(&d.decide("smith", &[&ids[1], "--strike"]));
    let (code, v) = d.verify("smith");
    assert_eq!(code, Some(1), "{v}");
    let decisions = v["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 2, "{v}");
    assert!(
        decisions.iter().all(|x| x["applies"] == true),
        "no decision lapses: {v}"
    );
    let struck = decisions
        .iter()
        .find(|x| x["decision"] == "struck")
        .unwrap();
    assert_eq!(struck["id"], ids[1].as_str());
}

#[test]
fn two_folders_of_one_name_share_no_decisions_unless_one_case_number_joins_them() {
    let d = Desk::new();
    fs::create_dir_all(d.path("elsewhere/smith/intake")).unwrap();
    fs::write(d.path("elsewhere/smith/intake/lease.txt"), PAGES).unwrap();
    fs::write(d.path("elsewhere/smith/draft.md"), DRAFT).unwrap();
    let (_, v) = d.verify("smith");
    let (date, _) = claim(&v, "March 3, 2023");
    ok(&d.decide("smith", &[date, "--confirm", "--page", "lease.txt:2"]));
    assert_eq!(claim(&d.verify("smith").1, "March 3, 2023").1, "supported");
    // Another folder named `smith`, verified with no --matter: not the same matter.
    let (_, v) = d.verify("elsewhere/smith");
    assert_eq!(claim(&v, "March 3, 2023").1, "unsupported", "{v}");
    // One case number in both folders' matter.json: one matter.
    for m in ["smith", "elsewhere/smith"] {
        fs::write(
            d.path(m).join("matter.json"),
            r#"{"case_number": "24-cv-0042"}"#,
        )
        .unwrap();
    }
    let (_, v) = d.verify("smith");
    let (date, _) = claim(&v, "March 3, 2023");
    ok(&d.decide("smith", &[date, "--confirm", "--page", "lease.txt:2"]));
    assert_eq!(
        claim(&d.verify("elsewhere/smith").1, "March 3, 2023").1,
        "supported"
    );
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
    // A waived claim is no claim, until the waiver is withdrawn.
    let (quote, _) = claim(&v, "Leased Unit Premises");
    ok(&d.decide("smith", &[quote, "--waive", "--reason", "a defined term"]));
    assert!(!d.verify("smith").1["claims"]
        .to_string()
        .contains("Leased Unit Premises"));
    ok(&d.decide("smith", &[quote, "--withdraw"]));
    assert_eq!(
        claim(&d.verify("smith").1, "Leased Unit Premises").1,
        "unsupported"
    );
    assert_eq!(d.decisions("smith").len(), 5);
}

/// The stage's first draft: a date no source states, an invented citation, a quoted defined
/// term; the second leaves the citation out.
const FIRST: &str = "I rented the flat at 4 Quay Street from Harbour Lets Ltd (BLK000001).\n\n\
I moved in on March 3, 2023, when the keys were handed over.\n\n\
A landlord must return a deposit promptly. Doe v. Roe, 999 F.3d 123 (9th Cir. 2021).\n\n\
The \"Quay Street Flat\" is the flat I rented.\n";

fn second() -> String {
    FIRST.replace(
        "A landlord must return a deposit promptly. Doe v. Roe, 999 F.3d 123 (9th Cir. 2021).\n\n",
        "",
    )
}

/// A served review: the process, its URL and port.
struct Served {
    child: std::process::Child,
    url: String,
    port: u16,
}

impl Served {
    fn start(store: &Path, target: &Path, reviewer: &str) -> Served {
        Served::start_with(store, target, reviewer, &[])
    }

    fn start_with(store: &Path, target: &Path, reviewer: &str, env: &[(&str, &str)]) -> Served {
        use std::io::BufRead;
        let mut lexrun = Lexrun::new();
        for (k, v) in env {
            lexrun = lexrun.env(k, v);
        }
        let mut child = lexrun
            .env("LEXRUN_STORE", store)
            .args(["review", "--reviewer", reviewer, "--idle-timeout", "120"])
            .arg(target)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let port = url["http://127.0.0.1:".len()..]
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        Served { child, url, port }
    }

    /// Sends a raw request; the status and the response.
    fn raw(&self, request: &str) -> (u16, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        let status = out
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        (status, out)
    }

    /// Ctrl-C: the server stops, and says so with exit 0.
    fn stop(mut self) {
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let status = self.child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
    }
}

/// The matter a run's verification keeps its decisions under, as its `review.json` says.
fn decision_key(dir: &Path) -> String {
    let v: Value = serde_json::from_slice(&fs::read(dir.join("review.json")).unwrap()).unwrap();
    v["decision_matter"].as_str().unwrap().to_string()
}

/// Runs the review workflow against a fake server answering `answer`; the exit code.
fn run_review_workflow(
    store: &Path,
    out: &Path,
    server: &support::servers::Fake,
    extra: &[&str],
) -> Option<i32> {
    run_review_workflow_with(store, out, server, extra, &[])
}

fn run_review_workflow_with(
    store: &Path,
    out: &Path,
    server: &support::servers::Fake,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Option<i32> {
    let mut lexrun = Lexrun::new();
    for (k, v) in env {
        lexrun = lexrun.env(k, v);
    }
    let o = lexrun
        .env("LEXRUN_STORE", store)
        .args(["run", "tests/decisions/review.lex", "--out"])
        .arg(out)
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .args(extra)
        .output();
    o.status.code()
}

/// The one run folder under `out` whose verification has a review context.
fn verify_dir(out: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("verify-draft"))
        .filter(|p| p.join("review.json").is_file())
        .collect();
    dirs.sort();
    dirs.pop().expect("a run's verify-draft folder")
}

fn report_claim(dir: &Path, words: &str) -> String {
    let v: Value = serde_json::from_slice(&fs::read(dir.join("report.json")).unwrap()).unwrap();
    claim(&v, words).0.to_string()
}

#[test]
fn the_served_page_refuses_what_is_not_its_own_and_records_what_is() {
    use support::servers::{Answer, Fake, Speaks};
    let server = Fake::start(Speaks::Llama, std::time::Duration::ZERO, |_| Answer {
        text: FIRST.into(),
        fault: None,
    });
    let tmp = tempfile::tempdir().unwrap();
    let (store, out) = (tmp.path().join("store"), tmp.path().join("out"));
    assert_eq!(run_review_workflow(&store, &out, &server, &[]), Some(1));
    let dir = verify_dir(&out);
    let date = report_claim(&dir, "March 3, 2023");
    let served = Served::start(&store, dir.parent().unwrap(), "Ann Counsel");
    let host = format!("127.0.0.1:{}", served.port);
    let token = served.url.split("t=").nth(1).unwrap().to_string();
    let get = |path: &str, extra: &str| {
        served.raw(&format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"
        ))
    };
    // No token, another token, another host: refused.
    assert_eq!(get("/", "").0, 403);
    assert_eq!(get("/?t=0123456789abcdef0123456789abcdef", "").0, 403);
    assert_eq!(
        served
            .raw(&format!(
                "GET /?t={token} HTTP/1.1\r\nHost: evil.example:{}\r\n\r\n",
                served.port
            ))
            .0,
        403
    );
    assert_eq!(get("/state", "").0, 403, "no session, no data");
    // The token, once: a session cookie.
    let (status, resp) = get(&format!("/?t={token}"), "");
    assert_eq!(status, 303, "{resp}");
    let cookie = resp
        .lines()
        .find_map(|l| l.strip_prefix("Set-Cookie: "))
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert!(resp.contains("HttpOnly") && resp.contains("SameSite=Strict"));
    assert_eq!(
        get(&format!("/?t={token}"), "").0,
        403,
        "the token is used up"
    );
    let with = format!("Cookie: {cookie}\r\n");
    let (status, page) = get("/", &with);
    assert_eq!(status, 200);
    assert!(page.contains("default-src 'none'") && page.contains("id=\"decide-data\""));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    // Paths outside the run, and pages of files that are not the matter's sources: 404.
    assert_eq!(get("/../../etc/passwd", &with).0, 404);
    assert_eq!(get("/page?f=%2Fetc%2Fpasswd&p=1", &with).0, 404);
    assert_eq!(get("/page?f=intake%2F02-handover.txt&p=1", &with).0, 200);
    // A decision from another origin, or without the page's header: refused.
    let body = format!(
        "{{\"claim\":\"{date}\",\"decision\":\"confirmed\",\"page\":\"intake/02-handover.txt:1\"}}"
    );
    let post = |origin: &str, header: &str| {
        served.raw(&format!(
            "POST /decide HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n{with}{header}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ))
    };
    assert_eq!(post("http://evil.example", "X-Lexrun-Review: 1\r\n").0, 403);
    assert_eq!(post(&format!("http://{host}"), "").0, 403);
    let decided = || {
        lexrun::store::Store::open(&store)
            .unwrap()
            .decisions(&decision_key(&dir))
            .unwrap()
    };
    assert!(decided().is_empty(), "refusals write nothing");
    let (status, resp) = post(&format!("http://{host}"), "X-Lexrun-Review: 1\r\n");
    assert_eq!(status, 200, "{resp}");
    let all = decided();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].reviewer, "Ann Counsel");
    assert!(!all[0].run_id.is_empty());
    // The audit lists it, and exports it as CSV and JSON.
    let audit = |extra: &[&str]| {
        let o = Lexrun::new()
            .env("LEXRUN_STORE", &store)
            .args(["audit", "tests/decisions/review.lex"])
            .args(extra)
            .output();
        ok(&o)
    };
    let text = audit(&[]);
    assert!(
        text.contains("Reviewers' decisions")
            && text.contains(&date)
            && text.contains("Ann Counsel"),
        "{text}"
    );
    let csv = audit(&["--decisions", "csv"]);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("seq,matter,claim_id,kind,claim"));
    let row = lines.next().unwrap();
    assert!(
        row.contains(&date)
            && row.contains("confirmed")
            && row.contains("Ann Counsel")
            && row.contains("02-handover.txt"),
        "{row}"
    );
    let json: Value = serde_json::from_str(&audit(&["--decisions", "json"])).unwrap();
    assert_eq!(json[0]["claim_id"], date.as_str());
    assert_eq!(json[0]["decision"], "confirmed");
    let port = served.port;
    served.stop();
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing answers once it stopped"
    );
}

#[test]
fn a_reviewer_decides_in_the_browser_and_the_document_lists_the_confirmed_claim() {
    use support::browser::{self, Browser};
    use support::servers::{Answer, Fake, Speaks};
    if let Err(why) = browser::chromium() {
        eprintln!("skipped: {why}");
        return;
    }
    let second_answer = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flip = second_answer.clone();
    let server = Fake::start(Speaks::Llama, std::time::Duration::ZERO, move |_| Answer {
        text: if flip.load(std::sync::atomic::Ordering::SeqCst) {
            second()
        } else {
            FIRST.into()
        },
        fault: None,
    });
    let tmp = tempfile::tempdir().unwrap();
    let (store, out) = (tmp.path().join("store"), tmp.path().join("out"));
    assert_eq!(run_review_workflow(&store, &out, &server, &[]), Some(1));
    let dir = verify_dir(&out);
    let (date, cite, quote) = (
        report_claim(&dir, "March 3, 2023"),
        report_claim(&dir, "999 F.3d 123"),
        report_claim(&dir, "Quay Street Flat"),
    );
    let served = Served::start(&store, &dir, "Ann Counsel");
    let mut b = Browser::launch(1280, 900).expect("chromium starts");
    let ready = "document.body && document.body.getAttribute('data-decide-ready') === '1'";
    b.navigate(&served.url, ready);
    let decisions = |b: &mut Browser| {
        b.eval("(() => { const d = document.getElementById('decide-data'); return d ? JSON.parse(d.textContent).decisions.length : -1; })()")
            .as_i64()
            .unwrap_or(-1)
    };
    let index_of = |b: &mut Browser, id: &str| {
        b.eval(&format!(
            "JSON.parse(document.getElementById('decide-data').textContent).claims.findIndex(c => c.id === '{id}')"
        ))
        .as_i64()
        .unwrap()
    };
    // The decision panel shows claim `id`.
    let panel_of = |id: &str| {
        format!(
            "[...document.querySelectorAll('h3')].some(h => h.textContent.startsWith('{id} · '))"
        )
    };
    // Confirm the date against the handover note's page, shown first.
    let i = index_of(&mut b, &date);
    b.click(&format!("#draft mark.c[data-i=\"{i}\"]"));
    b.wait_for(&panel_of(&date));
    b.wait_for("!!document.getElementById('pick-page')");
    b.eval("(() => { const f = document.getElementById('pick-file'); f.value = [...f.options].find(o => o.value.endsWith('02-handover.txt')).value; document.getElementById('pick-page').value = '1'; document.getElementById('decide-note').value = 'keys handed over in early March'; })()");
    b.click("#pick-show");
    b.wait_for("document.getElementById('pick-text').textContent.includes('handed to the tenant')");
    b.click("#do-confirm");
    b.wait_for(&format!("{ready} && (() => {{ const d = document.getElementById('decide-data'); return !!d && JSON.parse(d.textContent).decisions.length === 1; }})()"));
    // Strike the invented citation from the keyboard.
    let i = index_of(&mut b, &cite);
    b.click(&format!("#draft mark.c[data-i=\"{i}\"]"));
    b.wait_for(&panel_of(&cite));
    b.wait_for("!!document.getElementById('do-strike')");
    b.key("s");
    b.wait_for(&format!("{ready} && (() => {{ const d = document.getElementById('decide-data'); return !!d && JSON.parse(d.textContent).decisions.length === 2; }})()"));
    // Waive the defined term, with its reason.
    let i = index_of(&mut b, &quote);
    b.click(&format!("#draft mark.c[data-i=\"{i}\"]"));
    // The panel shows this claim, not the one decided before it (under load the click may
    // land before the panel is drawn again).
    b.wait_for(&panel_of(&quote));
    b.wait_for("!!document.getElementById('decide-reason')");
    b.eval("document.getElementById('decide-reason').value = 'a defined term of the affidavit'");
    b.click("#do-waive");
    b.wait_for(&format!("{ready} && (() => {{ const d = document.getElementById('decide-data'); return !!d && JSON.parse(d.textContent).decisions.length === 3; }})()"));
    // Reload: the decisions persist.
    b.call("Page.reload", serde_json::json!({})).unwrap();
    b.wait_for(ready);
    assert_eq!(decisions(&mut b), 3);
    let shown = b.eval("document.getElementById('decide-body').textContent");
    assert!(shown.as_str().unwrap().contains("Ann Counsel"), "{shown}");
    // Nothing was loaded from anywhere but the server.
    let foreign = b.eval(&format!(
        "performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('http://127.0.0.1:{}/'))",
        served.port
    ));
    assert_eq!(foreign, serde_json::json!([]));
    drop(b);
    served.stop();

    // The same workflow again: no model is asked; the struck citation still blocks.
    let calls = server.calls.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(run_review_workflow(&store, &out, &server, &[]), Some(1));
    assert_eq!(
        server.calls.load(std::sync::atomic::Ordering::SeqCst),
        calls
    );
    let v: Value =
        serde_json::from_slice(&fs::read(verify_dir(&out).join("report.json")).unwrap()).unwrap();
    assert_eq!(claim(&v, "March 3, 2023").1, "supported");
    assert_eq!(claim(&v, "999 F.3d 123").1, "unsupported");

    // A draft without the struck citation passes, and its appendix lists the claim confirmed
    // by hand with the reviewer's name, apart from those the verifier proved.
    second_answer.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        run_review_workflow(&store, &out, &server, &["--refresh", "draft"]),
        Some(0)
    );
    let d = support::read_docx(&out.join("affidavit.docx"));
    let tables = d["tables"].as_array().unwrap();
    let by_hand = tables
        .iter()
        .find(|t| t[0].to_string().contains("confirmed by"))
        .unwrap_or_else(|| panic!("no table of claims confirmed by hand: {d}"));
    let row = by_hand[1].to_string();
    assert!(
        row.contains("March 3, 2023")
            && row.contains("Ann Counsel")
            && row.contains("02-handover.txt"),
        "{row}"
    );
    assert!(!tables[0].to_string().contains("March 3, 2023"), "{d}");
}

/// Copies the review workflow and its matter into `dir`, so that a test can add files.
fn copy_workflow(dir: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for e in fs::read_dir(from).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                copy(&p, &to.join(e.file_name()));
            } else {
                fs::copy(&p, to.join(e.file_name())).unwrap();
            }
        }
    }
    let to = dir.join("wf");
    copy(Path::new("tests/decisions"), &to);
    to
}

#[test]
fn a_page_written_by_lexrun_or_come_after_the_claim_cannot_confirm_it() {
    use support::servers::{Answer, Fake, Speaks};
    let server = Fake::start(Speaks::Llama, std::time::Duration::ZERO, |_| Answer {
        text: FIRST.into(),
        fault: None,
    });
    let tmp = tempfile::tempdir().unwrap();
    let wf = copy_workflow(tmp.path());
    let (store, out) = (tmp.path().join("store"), tmp.path().join("out"));
    let o = Lexrun::new()
        .env("LEXRUN_STORE", &store)
        .args(["run"])
        .arg(wf.join("review.lex"))
        .arg("--out")
        .arg(&out)
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .output();
    assert_eq!(o.status.code(), Some(1));
    let dir = verify_dir(&out);
    let date = report_claim(&dir, "March 3, 2023");
    let intake = wf.join("matter/intake");
    // A note that came into the matter after the model wrote the date, stating it.
    fs::write(
        intake.join("03-later.txt"),
        "Memo: keys given over 3 March 2023, per a call with the agent.\n",
    )
    .unwrap();
    // The model's own draft, copied into the matter.
    let draft_out = fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path().join("output.md"))
        .find(|p| p.is_file())
        .expect("the stage's output.md");
    fs::copy(&draft_out, intake.join("04-copy.md")).unwrap();
    let decide = |page: &str| {
        Lexrun::new()
            .env("LEXRUN_STORE", &store)
            .args(["decide", &date, "--confirm", "--page", page, "--draft"])
            .arg(&draft_out)
            .arg("--sources")
            .arg(&intake)
            .args(["--matter", "matter"])
            .output()
    };
    refused(
        &decide("03-later.txt:1"),
        "after lexrun generated this claim",
    );
    refused(&decide("04-copy.md:1"), "lexrun");
    let st = lexrun::store::Store::open(&store).unwrap();
    assert!(st.decisions(&decision_key(&dir)).unwrap().is_empty());
    // A page of the client's own evidence does.
    ok(&decide("02-handover.txt:1"));
}

/// Signs in with the token: the session cookie's header line.
fn sign_in(served: &Served) -> String {
    let token = served.url.split("t=").nth(1).unwrap();
    let (status, resp) = served.raw(&format!(
        "GET /?t={token} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
        served.port
    ));
    assert_eq!(status, 303, "{resp}");
    let cookie = resp
        .lines()
        .find_map(|l| l.strip_prefix("Set-Cookie: "))
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    format!("Cookie: {cookie}\r\n")
}

#[test]
fn a_shared_ledger_that_is_down_while_the_page_is_open_loses_no_decision() {
    use support::postgres::Postgres;
    use support::servers::{Answer, Fake, Speaks};
    let pg = Postgres::start();
    pg.create_db("review");
    let url = pg.url("review");
    let server = Fake::start(Speaks::Llama, std::time::Duration::ZERO, |_| Answer {
        text: FIRST.into(),
        fault: None,
    });
    let tmp = tempfile::tempdir().unwrap();
    let (store, out) = (tmp.path().join("store"), tmp.path().join("out"));
    let env = [
        ("LEXRUN_LEDGER", url.as_str()),
        ("LEXRUN_LEDGER_RETRY_S", "1"),
    ];
    assert_eq!(
        run_review_workflow_with(&store, &out, &server, &[], &env),
        Some(1)
    );
    let dir = verify_dir(&out);
    let date = report_claim(&dir, "March 3, 2023");
    let served = Served::start_with(&store, &dir, "Ann Counsel", &env);
    let with = sign_in(&served);
    let host = format!("127.0.0.1:{}", served.port);
    let body = format!(
        "{{\"claim\":\"{date}\",\"decision\":\"confirmed\",\"page\":\"02-handover.txt:1\"}}"
    );
    let post = || {
        served.raw(&format!(
            "POST /decide HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n{with}X-Lexrun-Review: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ))
    };
    pg.stop();
    let (status, resp) = post();
    assert_eq!(status, 503, "{resp}");
    assert!(resp.contains("ledger"), "{resp}");
    pg.start_again();
    let count = || pg.query("review", "SELECT count(*) FROM decisions")[0].clone();
    assert_eq!(count(), "0", "nothing half-written");
    // The ledger back, the same decision is recorded once.
    let (status, resp) = post();
    assert_eq!(status, 200, "{resp}");
    assert_eq!(count(), "1");
    served.stop();
}

#[test]
fn the_served_page_stops_by_itself_when_idle() {
    use support::servers::{Answer, Fake, Speaks};
    let server = Fake::start(Speaks::Llama, std::time::Duration::ZERO, |_| Answer {
        text: FIRST.into(),
        fault: None,
    });
    let tmp = tempfile::tempdir().unwrap();
    let (store, out) = (tmp.path().join("store"), tmp.path().join("out"));
    assert_eq!(run_review_workflow(&store, &out, &server, &[]), Some(1));
    let dir = verify_dir(&out);
    let mut child = Lexrun::new()
        .env("LEXRUN_STORE", &store)
        .args(["review", "--idle-timeout", "1"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "still serving"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(0));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("no request for 1 s"), "{err}");
}

#[test]
fn requests_without_the_session_keep_no_review_open_and_the_session_is_the_ports_own() {
    use support::servers::{Answer, Fake, Speaks};
    let server = Fake::start(Speaks::Llama, std::time::Duration::ZERO, |_| Answer {
        text: FIRST.into(),
        fault: None,
    });
    let tmp = tempfile::tempdir().unwrap();
    let (store, out) = (tmp.path().join("store"), tmp.path().join("out"));
    assert_eq!(run_review_workflow(&store, &out, &server, &[]), Some(1));
    let dir = verify_dir(&out);
    let mut child = Lexrun::new()
        .env("LEXRUN_STORE", &store)
        .args(["review", "--idle-timeout", "2"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = line.trim().to_string();
    let port: u16 = url["http://127.0.0.1:".len()..]
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let served = Served { child, url, port };
    let cookie = sign_in(&served);
    assert!(
        cookie.starts_with(&format!("Cookie: lexrun_review_{port}=")),
        "{cookie}"
    );
    // A stranger knocking without the session does not keep the server up.
    let started = std::time::Instant::now();
    let mut served = served;
    let status = loop {
        if let Some(s) = served.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(15),
            "still serving to requests without the session"
        );
        let _ = std::net::TcpStream::connect(("127.0.0.1", port)).map(|mut s| {
            use std::io::{Read, Write};
            let _ = s.write_all(
                format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            );
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_sentence_the_judge_found_wanting_is_decided_on_without_asking_the_judge_again() {
    let tmp = tempfile::tempdir().unwrap();
    let matter = tmp.path().join("m");
    fs::create_dir_all(matter.join("intake")).unwrap();
    let page = matter.join("intake/a.txt");
    fs::write(
        &page,
        "The heating was repaired by the landlord's engineer.\n\nTEST000001\n",
    )
    .unwrap();
    let sentence = "The landlord repaired the heating (TEST000001).";
    let run = tmp.path().join("out/run-1/verify-draft");
    fs::create_dir_all(&run).unwrap();
    let ctx = serde_json::json!({
        "matter": "m", "matter_dir": matter.canonicalize().unwrap(), "run_id": "run-1",
        "stage": "draft", "draft": sentence,
        "sources": [["intake/a.txt", page.canonicalize().unwrap()]],
        "prefixes": ["TEST"], "allow_reporters": [], "exactly": false,
        "judged": [{"text": sentence, "start": 0, "end": sentence.len(), "status": "unsupported",
                    "reason": "the cited page contradicts it", "source": null}]
    });
    fs::write(run.join("review.json"), ctx.to_string()).unwrap();
    let store = tmp.path().join("store");
    let decide = |args: &[&str]| {
        Lexrun::new()
            .env("LEXRUN_STORE", &store)
            .arg("decide")
            .args(args)
            .arg("--report")
            .arg(tmp.path().join("out/run-1"))
            .output()
    };
    let o = decide(&["nothing-here", "--strike"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    let id = err
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(')
        .find(|w| w.starts_with("proposition-"))
        .unwrap_or_else(|| panic!("the flagged ids are listed: {err}"))
        .to_string();
    let said = ok(&decide(&[
        &id,
        "--confirm",
        "--page",
        "a.txt:1",
        "--reviewer",
        "Ann",
    ]));
    assert!(
        said.contains("confirmed by intake/a.txt p. 1 (TEST000001)"),
        "{said}"
    );
    let all = lexrun::store::Store::open(&store)
        .unwrap()
        .decisions("m")
        .unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].kind, "proposition");
    assert_eq!(all[0].run_id, "run-1");
}

#[test]
fn a_record_cite_not_checked_is_decided_on_too() {
    let d = Desk::new();
    fs::write(
        d.path("smith/draft.md"),
        "The rent was $2,150.00 a month. Compl. ¶ 12.\n\nThe tenant complained twice. Tr. 45:12.\n",
    )
    .unwrap();
    let (code, v) = d.verify("smith");
    assert_eq!(code, Some(0), "record cites not checked do not block: {v}");
    let unchecked = v["unchecked_record_cites"].as_array().unwrap();
    assert_eq!(unchecked.len(), 2, "{v}");
    let (compl, tr) = (
        unchecked[0]["id"].as_str().unwrap().to_string(),
        unchecked[1]["id"].as_str().unwrap().to_string(),
    );
    ok(&d.decide(
        "smith",
        &[
            &compl,
            "--confirm",
            "--page",
            "lease.txt:1",
            "--reviewer",
            "Ann",
        ],
    ));
    ok(&d.decide("smith", &[&tr, "--strike"]));
    let (code, v) = d.verify("smith");
    assert_eq!(code, Some(1), "a struck cite blocks: {v}");
    assert_eq!(claim(&v, "Compl.").1, "supported");
    assert_eq!(claim(&v, "Tr. 45:12").1, "unsupported");
    assert!(v["unchecked_record_cites"].is_null(), "{v}");
}
