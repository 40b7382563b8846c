//! Bounds and shared folders: an answer ends at the stage's token limit however long the
//! server streams, a huge answer is refused, runs sharing a store and an output folder never
//! fail, mix or overwrite each other's outputs, and a disk that fills leaves no output at its
//! final path that the run calls "not written".

use crate::support;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use support::raw::{two_pool_workflow, Raw, Reply};
use support::servers::{Answer, Fake, Seen, Speaks};
use support::{stderr, Lexrun};

/// Runs the two-pool workflow with the drafter's server answering `reply`; gives up (and
/// fails) after `limit`.
fn run_against(reply: Reply, max_tokens: u32, limit: Duration) -> (tempfile::TempDir, i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let firm = Raw::start(&["drafter"], reply);
    let other = Raw::start(&["gatekeeper"], Reply::Text("Fine. ".into()));
    fs::write(
        dir.path().join("w.lex"),
        two_pool_workflow(&firm.url, &other.url, "LEXRUN_TEST_KEY_LIMITS", max_tokens),
    )
    .unwrap();
    fs::write(dir.path().join("a.txt"), "A letter.").unwrap();
    let mut child = Lexrun::new()
        .arg("run")
        .arg(dir.path().join("w.lex"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(["--backoff-ms", "5"])
        .env("LEXRUN_TEST_KEY_LIMITS", "k")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (dir, status.code().unwrap_or(-1), err);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("the run was still reading after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_endless_stream_ends_at_the_stages_token_limit() {
    let (dir, code, err) = run_against(Reply::Endless, 64, Duration::from_secs(60));
    // Cut at the limit, the answer is incomplete: exit 4, and the draft is written only as a
    // marked draft, its banner first, then the 64 words read.
    assert_eq!(code, 4, "{err}");
    assert!(
        !dir.path().join("out/draft.md").exists(),
        "a final draft.md was written"
    );
    let draft = fs::read_to_string(dir.path().join("out/draft.incomplete-draft.md")).unwrap();
    let (banner, body) = draft.split_once("\n\n").unwrap();
    assert!(banner.contains("token limit"), "{banner}");
    // The text read, before the "not verified" note and the provenance line.
    let text = body.split("\n---\n").next().unwrap();
    let words = text.split_whitespace().count();
    assert_eq!(words, 64, "{draft}");
    let (_, rec) = support::run_record(&dir.path().join("out"));
    assert!(
        rec.matters[0].steps[0]
            .warnings
            .iter()
            .any(|w| w.contains("token limit")),
        "{:?}",
        rec.matters[0].steps[0].warnings
    );
}

#[test]
fn a_huge_answer_is_refused_not_held() {
    // The bound only tells a hang from a slow read: a debug build takes over a minute to
    // read 64 MiB of stream on a busy two-core machine.
    let (dir, code, err) = run_against(Reply::Huge(100), 8_000, Duration::from_secs(400));
    assert_eq!(code, 1, "{err}");
    let (_, rec) = support::run_record(&dir.path().join("out"));
    let why = rec.matters[0].steps[0].why.clone().unwrap_or_default();
    assert!(why.contains("64 MiB"), "{why}");
    assert!(rec.matters[0].steps[0].retries.len() <= 1, "not retried");
}

fn server() -> Fake {
    Fake::start(Speaks::Llama, Duration::from_millis(2), |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            let who = if p.contains("SECOND MATTER") {
                "second"
            } else {
                "first"
            };
            format!("1. For the {who} matter I paid $1,250.00 for April 2024 (TEST000002).\n")
        };
        Answer { text, fault: None }
    })
}

fn spawn(matter: &Path, out: &Path, store: &Path, url: &str) -> std::process::Child {
    Lexrun::new()
        .args(["run", "tests/runtime/pipeline.lex", "--matter"])
        .arg(matter)
        .arg("--out")
        .arg(out)
        .arg("--store")
        .arg(store)
        .args(["--endpoint", &format!("gpu_a={url}")])
        .args(["--endpoint", &format!("gpu_b={url}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
}

/// The output's text, its marker's run, and its manifest's run and hash agree.
fn coherent(out: &Path) {
    let bytes = fs::read(out.join("draft.md")).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("draft.md.provenance.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["blake3"].as_str().unwrap(),
        blake3::hash(&bytes).to_hex().as_str()
    );
    let run = manifest["lexrun.run"].as_str().unwrap();
    assert!(text.contains(&format!("run={run}")), "{text}");
    let matter = manifest["lexrun.matter"].as_str().unwrap();
    assert!(text.contains(&format!("matter={matter}")), "{text}");
    let who = if matter == "second" {
        "second"
    } else {
        "first"
    };
    assert!(
        text.contains(&format!("For the {who} matter")),
        "{matter}: {text}"
    );
}

#[test]
fn four_runs_sharing_a_store_and_an_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let matter = dir.path().join("first");
    support::copy_dir(Path::new("tests/runtime/matter"), &matter);
    let (store, out) = (dir.path().join("store"), dir.path().join("out"));
    let srv = server();
    let kids: Vec<_> = (0..4)
        .map(|_| spawn(&matter, &out, &store, &srv.url))
        .collect();
    for k in kids {
        let o = k.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    coherent(&out);
}

#[test]
fn two_matters_never_mix_in_one_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    let second = dir.path().join("second");
    support::copy_dir(Path::new("tests/runtime/matter"), &first);
    support::copy_dir(Path::new("tests/runtime/matter"), &second);
    let letter = second.join("intake/01-letter.txt");
    let t = fs::read_to_string(&letter).unwrap();
    fs::write(&letter, format!("SECOND MATTER\n{t}")).unwrap();
    let (store, out) = (dir.path().join("store"), dir.path().join("out"));
    let srv = server();
    for _ in 0..3 {
        let kids = [
            spawn(&first, &out, &store, &srv.url),
            spawn(&second, &out, &store, &srv.url),
        ];
        for k in kids {
            let o = k.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        }
        // The folder belongs to whichever matter wrote there first; the other's outputs
        // are in a folder of its own inside it. Each whole, neither overwritten.
        coherent(&out);
        let owner: serde_json::Value =
            serde_json::from_slice(&fs::read(out.join("draft.md.provenance.json")).unwrap())
                .unwrap();
        let other = if owner["lexrun.matter"] == "first" {
            "second"
        } else {
            "first"
        };
        coherent(&out.join(other));
    }
}

/// A tmpfs of one page mounted at `at`, where the system allows it.
fn tiny_fs(at: &Path) -> bool {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    fs::create_dir_all(at).unwrap();
    let target = CString::new(at.as_os_str().as_bytes()).unwrap();
    let (src, kind, opts) = (c"tmpfs", c"tmpfs", c"size=4k");
    // SAFETY: every pointer is a NUL-terminated string alive for the call.
    unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            kind.as_ptr(),
            0,
            opts.as_ptr().cast(),
        ) == 0
    }
}

#[test]
fn a_full_disk_leaves_no_output_that_is_called_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let matter = dir.path().join("first");
    support::copy_dir(Path::new("tests/runtime/matter"), &matter);
    let lex = fs::read_to_string("tests/runtime/pipeline.lex")
        .unwrap()
        .replace("output \"draft.md\"", "output \"full/draft.md\"")
        .replace("matter \"matter\"", "");
    let wf = dir.path().join("pipeline.lex");
    fs::write(&wf, lex).unwrap();
    let out = dir.path().join("out");
    let full = out.join("full");
    let mounted = tiny_fs(&full);
    if !mounted {
        // No mounts here: a folder that refuses new files fails every write the same way.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&full, fs::Permissions::from_mode(0o555)).unwrap();
    }
    let long = "1. I paid $1,250.00 for April 2024 (TEST000002). ".repeat(120);
    let srv = Fake::start(Speaks::Llama, Duration::ZERO, move |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            long.clone()
        };
        Answer { text, fault: None }
    });
    let store = dir.path().join("store");
    let o = Lexrun::new()
        .arg("run")
        .arg(&wf)
        .arg("--matter")
        .arg(&matter)
        .arg("--out")
        .arg(&out)
        .arg("--store")
        .arg(&store)
        .args(["--endpoint", &format!("gpu_a={}", srv.url)])
        .args(["--endpoint", &format!("gpu_b={}", srv.url)])
        .output();
    let leftover: Vec<String> = fs::read_dir(&full)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if mounted {
        let target = std::ffi::CString::new(full.as_os_str().to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path alive for the call.
        unsafe { libc::umount(target.as_ptr()) };
    }
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (_, rec) = support::run_record(&out);
    let draft = rec.matters[0]
        .outputs
        .iter()
        .find(|x| x.path.ends_with("draft.md"))
        .unwrap();
    assert!(draft.status.starts_with("not written"), "{}", draft.status);
    assert!(draft.missing);
    assert!(
        leftover.is_empty(),
        "called not written, yet there: {leftover:?}"
    );
    // The stage's text is known to the intake guard all the same.
    let o = Lexrun::new()
        .arg("audit")
        .arg(&wf)
        .arg("--json")
        .arg("--store")
        .arg(&store)
        .output();
    let audit: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(audit["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["kind"] == "stage" && a["stage"] == "draft"));
}
