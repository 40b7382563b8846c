//! `lexrun test`: snapshot-tested workflow libraries. A `*.test.lex` file declares tests —
//! which workflow, which sample matter, which cassette, and what must happen — and each test
//! runs its workflow replaying the cassette (no server, deterministic), checks the
//! expectations, and compares what the run produced with a stored snapshot in insta's `.snap`
//! format (`snapshots/` beside the test file). Run ids, times, durations and paths are
//! redacted; text, claims and decisions are kept.
//!
//! ```lex
//! test "smith: grounds, verified draft" {
//!   workflow "affidavit.lex"
//!   matter   "matters/smith-v-acme"
//!   cassette "cassettes/affidavit-smith.jsonl"
//!   expect exit 0
//!   expect gate.grounds == true
//!   expect figures runs
//!   expect verify reason passes
//!   expect reason rounds 1
//! }
//! ```

use std::path::{Path, PathBuf};

use camino::Utf8Path;
use serde_json::Value;

use crate::backend::cassette;
use crate::claim_kind::Decision;
use crate::diagnostic::Span;
use crate::run::{self, RunRecord, Status};
use crate::syntax::test_file::{ExpectDecl, Literal};

/// One declared test.
#[derive(Clone, Debug)]
pub struct Test {
    pub file: PathBuf,
    pub name: String,
    pub workflow: PathBuf,
    pub matter: Option<PathBuf>,
    pub cassette: Option<PathBuf>,
    pub expects: Vec<Expect>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Exit(u8),
    /// A step's final status: runs (done or stopped), skipped, failed, blocked, stopped.
    Step(String, String),
    Field(String, String, Value),
    /// A verification's last decision: passes, blocks, flags.
    Verify(String, String),
    Rounds(String, u32),
    /// A verification's count: (stage, `claims` or `unsupported`, at least?, n).
    Count(String, String, bool, u32),
    /// The stage's last text holds more than white space.
    Filled(String),
    /// The stage's last text holds this phrase.
    Says(String, String),
    /// The stage's last text holds at least this many words.
    Words(String, u32),
}

/// Parses a `.test.lex` file through the workflow grammar. Errors carry spans into `text`:
/// (message, span, help).
pub fn parse(file: &Path, text: &str) -> Result<Vec<Test>, Vec<(String, Span, String)>> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let (decls, errors) = crate::syntax::test_file::problems(text);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(decls
        .into_iter()
        .map(|d| Test {
            file: file.to_path_buf(),
            workflow: dir.join(d.workflow.as_deref().unwrap_or_default()),
            matter: d.matter.as_ref().map(|m| dir.join(m)),
            cassette: d.cassette.as_ref().map(|c| dir.join(c)),
            expects: d.expects.iter().map(expect).collect(),
            name: d.name,
        })
        .collect())
}

fn expect(e: &ExpectDecl) -> Expect {
    match e {
        ExpectDecl::Exit(code) => Expect::Exit(*code),
        ExpectDecl::Step { stage, state } => Expect::Step(stage.clone(), state.clone()),
        ExpectDecl::Field {
            stage,
            field,
            value,
        } => {
            let value = match value {
                Literal::Bool(b) => Value::Bool(*b),
                Literal::Number(n) => serde_json::json!(n),
                Literal::Text(t) | Literal::Date(t) => Value::String(t.clone()),
            };
            Expect::Field(stage.clone(), field.clone(), value)
        }
        ExpectDecl::Verify { stage, verdict } => Expect::Verify(stage.clone(), verdict.clone()),
        ExpectDecl::Rounds { stage, rounds } => Expect::Rounds(stage.clone(), *rounds),
        ExpectDecl::Count {
            stage,
            what,
            at_least,
            n,
        } => Expect::Count(stage.clone(), what.clone(), *at_least, *n),
        ExpectDecl::Filled { stage } => Expect::Filled(stage.clone()),
        ExpectDecl::Says { stage, phrase } => Expect::Says(stage.clone(), phrase.clone()),
        ExpectDecl::Words { stage, at_least } => Expect::Words(stage.clone(), *at_least),
    }
}

/// `*.test.lex` files under `paths`, sorted.
pub fn discover(paths: &[PathBuf]) -> Vec<PathBuf> {
    crate::check::discover(paths, ".test.lex", false)
}

/// What one test found.
#[derive(Debug)]
pub struct Outcome {
    pub test: Test,
    pub failures: Vec<String>,
    /// (snapshot file, stored text, new text) when they differ.
    pub snapshot: Option<(PathBuf, Option<String>, String)>,
    /// Steps that asked the cassette for what it does not hold: the test fails, and its
    /// snapshot is never stored (the cassette must be recorded again).
    pub misses: Vec<String>,
    /// Steps that failed otherwise: their snapshot is stored only with `--accept-failures`.
    pub failed_steps: Vec<String>,
    /// The stored snapshot is not one `lexrun test` wrote: what is wrong and how to fix it.
    pub unreadable: Option<String>,
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

pub fn snapshot_path(t: &Test) -> PathBuf {
    let dir = t.file.parent().unwrap_or(Path::new("."));
    let stem = t
        .file
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .trim_end_matches(".test.lex")
                .to_string()
        })
        .unwrap_or_default();
    dir.join("snapshots")
        .join(format!("{stem}__{}.snap", slug(&t.name)))
}

/// The stored snapshot's body (after insta's header): `None` when there is none yet, an
/// error saying what is wrong when the file is not a snapshot `lexrun test` wrote.
pub fn read_snapshot(path: &Path) -> Result<Option<String>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("it cannot be read: {e}")),
    };
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
    let text = text.replace("\r\n", "\n");
    let rest = text
        .strip_prefix("---\n")
        .ok_or("it does not start with the snapshot header `---`")?;
    let end = rest
        .find("\n---\n")
        .ok_or("its header is not closed by a `---` line")?;
    let body = &rest[end + 5..];
    let first = body.lines().next().unwrap_or_default();
    let exit_ok = first
        .strip_prefix("exit: ")
        .is_some_and(|n| n.trim().parse::<u8>().is_ok());
    if !exit_ok
        || !body
            .lines()
            .any(|l| l == "steps:" || l.starts_with("stopped: "))
    {
        return Err(
            "its body is not a run's snapshot (it should start with `exit: N` and list the `steps:`)"
                .into(),
        );
    }
    Ok(Some(body.to_string()))
}

pub fn write_snapshot(path: &Path, t: &Test, body: &str) -> std::io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let source = t
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = format!(
        "---\nsource: {source}\nexpression: \"{}\"\n---\n{body}",
        t.name.replace('"', "'")
    );
    crate::atomic::write(path, text.as_bytes())
}

/// Runs one test in replay mode; returns what failed and the snapshot comparison.
pub async fn run_test(t: Test) -> Outcome {
    let mut o = Outcome {
        test: t.clone(),
        failures: Vec::new(),
        snapshot: None,
        misses: Vec::new(),
        failed_steps: Vec::new(),
        unreadable: None,
    };
    let Some(wf) = Utf8Path::from_path(&t.workflow) else {
        o.failures
            .push(format!("`{}` is not a UTF-8 path", t.workflow.display()));
        return o;
    };
    let checked = crate::check::check_path(wf);
    let Some(w) = checked
        .workflow
        .as_ref()
        .filter(|_| !checked.diagnostics.iter().any(|d| d.is_error()))
    else {
        o.failures.push(format!(
            "the workflow does not check:\n{}",
            crate::diagnostic::render(&checked.diagnostics, &checked.sources, false)
        ));
        return o;
    };
    let plan = crate::plan::lower(w);
    let out = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            o.failures
                .push(format!("cannot make a temporary folder: {e}"));
            return o;
        }
    };
    let wdir = t
        .workflow
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let opts = run::Options {
        matters: t.matter.iter().cloned().collect(),
        out: out.path().to_path_buf(),
        endpoints: Default::default(),
        limits: crate::backend::Limits {
            retries: 0,
            ..Default::default()
        },
        events: run::events::Mode::Quiet,
        cassette: t.cassette.clone().map(|c| (c, cassette::Mode::Replay)),
        // Replayed runs neither read nor fill a cache, and leave no ledger behind.
        store: None,
        ledger: None,
        cache: false,
        refresh: Vec::new(),
        offline: false,
        workflow_file: String::new(),
        watch: None,
    };
    let rec = match run::run(&plan, &wdir, &opts).await {
        Ok(r) => r,
        Err(e) => {
            o.failures.push(e.to_string());
            return o;
        }
    };
    check_expectations(&t, &rec, &mut o.failures);
    for m in &rec.matters {
        for st in m.steps.iter().filter(|s| s.status == Some(Status::Failed)) {
            let why = st.why.as_deref().unwrap_or("no reason recorded");
            let first = why.lines().next().unwrap_or_default();
            let step = format!("`{}` round {}", st.name, st.round);
            if why.contains(cassette::MISS) {
                o.misses.push(format!("{step} ({first})"));
            } else {
                o.failed_steps.push(format!("{step} failed ({first})"));
            }
        }
    }
    if !o.misses.is_empty() {
        let cassette = t
            .cassette
            .as_ref()
            .map_or("CASSETTE".into(), |c| c.display().to_string());
        let matter = t
            .matter
            .as_ref()
            .map(|m| format!(" --matter {}", m.display()))
            .unwrap_or_default();
        o.failures.push(format!(
            "the cassette does not hold what the workflow asks now: {}\nrecord it again against live servers: `lexrun run {}{matter} --record {cassette}` (or `--replay-or-record {cassette}` to add only what is missing); a snapshot of this run is not stored",
            o.misses.join("; "),
            t.workflow.display()
        ));
    }
    let matter_dir = rec
        .matters
        .first()
        .map(|m| m.dir.clone())
        .unwrap_or_default();
    let body = snapshot_body(&rec, out.path(), &matter_dir);
    let path = snapshot_path(&t);
    let stored = match read_snapshot(&path) {
        Ok(s) => s,
        Err(why) => {
            o.unreadable = Some(format!(
                "the snapshot `{}` is not one lexrun test wrote: {why}; restore it from version control (`git checkout -- {}`), or delete it and store this run's with `lexrun test --accept`",
                path.display(),
                path.display()
            ));
            None
        }
    };
    if stored.as_deref() != Some(body.as_str()) {
        o.snapshot = Some((path, stored, body));
    }
    o
}

fn check_expectations(t: &Test, rec: &RunRecord, failures: &mut Vec<String>) {
    let Some(m) = rec.matters.first() else { return };
    let last = |stage: &str| m.steps.iter().rev().find(|s| s.name == stage);
    for e in &t.expects {
        match e {
            Expect::Exit(n) => {
                let got = rec.exit_code();
                if got != *n {
                    failures.push(format!("expected exit {n}, the run exited {got}"));
                }
            }
            Expect::Step(stage, want) => {
                let got = last(stage).and_then(|s| s.status);
                let ok = match (want.as_str(), got) {
                    ("runs", Some(Status::Done | Status::Stopped)) => true,
                    ("skipped", Some(Status::Skipped)) => true,
                    ("failed", Some(Status::Failed)) => true,
                    ("stopped", Some(Status::Stopped)) => true,
                    ("blocked", _) => m
                        .verifications
                        .iter()
                        .any(|v| &v.stage == stage && v.decision == Decision::Blocked),
                    _ => false,
                };
                if !ok {
                    failures.push(format!(
                        "expected `{stage}` {want}, it {}",
                        match got {
                            Some(s) => format!("{s:?}").to_lowercase(),
                            None => "did not appear in the run".into(),
                        }
                    ));
                }
            }
            Expect::Field(stage, field, want) => {
                let got = m
                    .steps
                    .iter()
                    .rev()
                    .find(|s| &s.name == stage)
                    .and_then(|s| s.outputs.iter().find(|f| f.ends_with("answer.json")))
                    .and_then(|f| std::fs::read(f).ok())
                    .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                    .map(|a| a[field].clone());
                let same = match (&got, want) {
                    (Some(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
                    (Some(a), b) => a == b,
                    _ => false,
                };
                if !same {
                    failures.push(format!(
                        "expected {stage}.{field} == {want}, found {}",
                        got.map_or("no answer".into(), |g| g.to_string())
                    ));
                }
            }
            Expect::Verify(stage, want) => {
                let got = m
                    .verifications
                    .iter()
                    .rev()
                    .find(|v| &v.stage == stage)
                    .map(|v| v.decision);
                let want_word = match want.as_str() {
                    "passes" => Decision::Passed,
                    "blocks" => Decision::Blocked,
                    _ => Decision::Flagged,
                };
                if got != Some(want_word) {
                    failures.push(format!(
                        "expected verify {stage} {want}, it {}",
                        got.map_or("did not run".into(), |d| d.to_string())
                    ));
                }
            }
            Expect::Count(stage, what, at_least, n) => {
                let got = m
                    .verifications
                    .iter()
                    .rev()
                    .find(|v| &v.stage == stage)
                    .map(|v| {
                        if what == "claims" {
                            v.claims
                        } else {
                            v.unsupported
                        }
                    });
                let ok = got.is_some_and(|g| {
                    if *at_least {
                        g >= *n as usize
                    } else {
                        g == *n as usize
                    }
                });
                if !ok {
                    failures.push(format!(
                        "expected verify {stage} {what} {}{n}, {}",
                        if *at_least { "at least " } else { "" },
                        got.map_or("the verification did not run".into(), |g| format!(
                            "it found {g}"
                        ))
                    ));
                }
            }
            Expect::Filled(stage) | Expect::Says(stage, _) | Expect::Words(stage, _) => {
                let Some(text) = stage_text(m, stage) else {
                    failures.push(format!("expected `{stage}` to write text, it wrote none (it did not run, or failed)"));
                    continue;
                };
                let words = text.split_whitespace().count();
                let shown = || {
                    let t: String = text.trim().chars().take(120).collect();
                    if t.is_empty() {
                        "an empty text".to_string()
                    } else {
                        format!("\"{t}\"")
                    }
                };
                match e {
                    Expect::Filled(_) if text.trim().is_empty() => failures.push(format!(
                        "expected `{stage}` not empty, it wrote an empty text (record the cassette again against a server that answers)"
                    )),
                    Expect::Says(_, phrase) if !text.contains(phrase.as_str()) => failures.push(format!(
                        "expected `{stage}` to contain \"{phrase}\", it wrote {}",
                        shown()
                    )),
                    Expect::Words(_, n) if words < *n as usize => failures.push(format!(
                        "expected `{stage}` to write at least {n} words, it wrote {words}: {}",
                        shown()
                    )),
                    _ => {}
                }
            }
            Expect::Rounds(stage, n) => {
                let got = m
                    .steps
                    .iter()
                    .filter(|s| &s.name == stage)
                    .map(|s| s.round)
                    .max()
                    .unwrap_or(0);
                if got != *n {
                    failures.push(format!("expected {n} rounds of `{stage}`, it ran {got}"));
                }
            }
        }
    }
}

/// The text a stage's last round wrote (`output.md`, or a tool's Markdown), if it wrote one.
fn stage_text(m: &run::MatterRecord, stage: &str) -> Option<String> {
    let step = m.steps.iter().rev().find(|s| s.name == stage)?;
    let file = step.outputs.iter().rev().find(|f| {
        let name = Path::new(f.as_str())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        name == "output.md" || (step.kind == "tool" && name.ends_with(".md"))
    })?;
    std::fs::read_to_string(file).ok()
}

static MARKER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"<!-- lexrun:provenance [^>]*-->").expect("the marker pattern compiles")
});
static RUN_ID: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"run-\d+(-[0-9a-f]+)?").expect("the run id pattern compiles")
});

/// What a snapshot keeps: decisions, texts, claims. What it drops: run ids, times, paths.
pub fn snapshot_body(rec: &RunRecord, out: &Path, matter: &str) -> String {
    let redact = |s: &str| -> String {
        let mut t = s.replace(&out.display().to_string(), "[out]");
        if !matter.is_empty() {
            t = t.replace(matter, "[matter]");
        }
        let t = MARKER.replace_all(&t, "<!-- lexrun:provenance [redacted] -->");
        RUN_ID.replace_all(&t, "[run]").into_owned()
    };
    let mut s = format!("exit: {}\n", rec.exit_code());
    for m in &rec.matters {
        if let Some(by) = &m.stopped_by {
            s.push_str(&format!("stopped: {}\n", redact(by)));
        }
        s.push_str("steps:\n");
        for st in &m.steps {
            s.push_str(&format!(
                "  {} round {}: {}{}\n",
                st.name,
                st.round,
                st.status
                    .map(|x| format!("{x:?}").to_lowercase())
                    .unwrap_or_default(),
                st.why
                    .as_ref()
                    .map(|w| format!(" ({})", redact(w)))
                    .unwrap_or_default()
            ));
        }
        if !m.verifications.is_empty() {
            s.push_str("verification:\n");
            for v in &m.verifications {
                s.push_str(&format!(
                    "  {} round {}: {} claims, {} unsupported: {}\n",
                    v.stage, v.round, v.claims, v.unsupported, v.decision
                ));
            }
        }
        s.push_str("outputs:\n");
        for o in &m.outputs {
            s.push_str(&format!("  {}: {}\n", redact(&o.path), redact(&o.status)));
        }
        for o in &m.outputs {
            let p = Path::new(&o.path);
            let text_like = p
                .extension()
                .is_some_and(|e| matches!(e.to_str(), Some("md" | "txt" | "json")));
            if o.status == "written" && text_like {
                if let Ok(t) = std::fs::read_to_string(p) {
                    s.push_str(&format!(
                        "\n=== {} ===\n{}\n",
                        redact(&o.path),
                        redact(t.trim_end())
                    ));
                }
            }
        }
        for v in &m.verifications {
            if let Ok(t) = std::fs::read_to_string(&v.report) {
                s.push_str(&format!(
                    "\n=== verification of {} (round {}) ===\n{}\n",
                    v.stage,
                    v.round,
                    redact(t.trim_end())
                ));
            }
        }
    }
    s
}

/// A readable diff of two snapshot bodies.
pub fn diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("stored", "this run")
        .to_string()
}

/// Parse errors of a test file, rendered as diagnostics.
pub fn render_errors(file: &Path, text: &str, errors: &[(String, Span, String)]) -> String {
    crate::syntax::test_file::render_problems(file, text, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_file_parses() {
        let text = "// tests\ntest \"smith: ok\" {\n  workflow \"a.lex\"\n  matter \"m\"\n  cassette \"c.jsonl\"\n  expect exit 0\n  expect gate.grounds == true\n  expect figures skipped\n  expect verify reason passes\n  expect reason rounds 2\n}\n";
        let t = parse(Path::new("w/x.test.lex"), text).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].workflow, Path::new("w/a.lex"));
        assert_eq!(
            t[0].expects,
            vec![
                Expect::Exit(0),
                Expect::Field("gate".into(), "grounds".into(), Value::Bool(true)),
                Expect::Step("figures".into(), "skipped".into()),
                Expect::Verify("reason".into(), "passes".into()),
                Expect::Rounds("reason".into(), 2),
            ]
        );
        assert_eq!(
            snapshot_path(&t[0]),
            Path::new("w/snapshots/x__smith-ok.snap")
        );
    }

    #[test]
    fn errors_point_at_the_line() {
        let text = "test \"a\" {\n  workflow \"a.lex\"\n  expect gate maybe\n  colour blue\n";
        let e = parse(Path::new("x.test.lex"), text).unwrap_err();
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!(&text[e[0].1.start..e[0].1.end], "expect gate maybe");
        assert!(e[2].0.contains("not closed"));
    }
}
