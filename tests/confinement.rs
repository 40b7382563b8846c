//! Nothing leaves the matter: symbolic links out of a matter or a sources folder are refused by
//! name, links back into it (loops) are walked once, a draft or a template outside its folder
//! is refused, a link planted at an output's path is replaced rather than followed, and run
//! records, cassettes and caches are readable by their owner only.

use crate::support;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use support::servers::{Answer, Fake, Seen, Speaks};
use support::{stderr, stdout, Lexrun};

/// A CPU-only workflow: the matter's text files checked against a draft.
const CHECK: &str = r#"workflow drafts "Check a draft against the matter"

sources client {
  files "intake/**/*.txt"
}

tool check runs verify-draft {
  reads client
  draft "DRAFT"
}

output "check.md" from check
"#;

struct Case {
    dir: tempfile::TempDir,
    workflow: PathBuf,
    matter: PathBuf,
}

/// A workflow (its draft at `draft`) and a matter with one letter and the draft.
fn case(draft: &str) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let workflow = dir.path().join("check.lex");
    fs::write(&workflow, CHECK.replace("DRAFT", draft)).unwrap();
    let matter = dir.path().join("matter");
    fs::create_dir_all(matter.join("intake")).unwrap();
    fs::write(
        matter.join("intake/letter.txt"),
        "The rent of $1,250.00 was paid on April 1, 2024.",
    )
    .unwrap();
    fs::write(
        matter.join("draft.md"),
        "I paid $1,250.00 on April 1, 2024.\n",
    )
    .unwrap();
    Case {
        dir,
        workflow,
        matter,
    }
}

fn run(c: &Case, out: &str) -> std::process::Output {
    Lexrun::new()
        .arg("run")
        .arg(&c.workflow)
        .arg("--matter")
        .arg(&c.matter)
        .arg("--out")
        .arg(c.dir.path().join(out))
        .arg("--store")
        .arg(c.dir.path().join("store"))
        .output()
}

#[test]
fn a_link_out_of_the_matter_is_refused_by_name() {
    let c = case("draft.md");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("privileged.txt");
    fs::write(&secret, "Privileged: settle at $90,000.").unwrap();
    let link = c.matter.join("intake/notes.txt");
    symlink(&secret, &link).unwrap();
    for o in [
        run(&c, "out"),
        Lexrun::new()
            .arg("sources")
            .arg(&c.workflow)
            .arg("--matter")
            .arg(&c.matter)
            .arg("--store")
            .arg(c.dir.path().join("store"))
            .output(),
    ] {
        let e = stderr(&o);
        assert_ne!(o.status.code(), Some(0), "{e}");
        assert!(
            e.contains(&link.display().to_string()) && e.contains(&secret.display().to_string()),
            "the refusal names the link and its target: {e}"
        );
        assert!(e.contains("symbolic link"), "{e}");
    }
    assert!(
        !c.dir.path().join("out").exists()
            || fs::read_dir(c.dir.path().join("out"))
                .unwrap()
                .flatten()
                .all(|f| !fs::read_to_string(f.path().join("run.json"))
                    .unwrap_or_default()
                    .contains("90,000")),
        "nothing of the outside file was written"
    );
    // A folder linked from outside is refused the same way.
    fs::remove_file(&link).unwrap();
    symlink(outside.path(), c.matter.join("intake/more")).unwrap();
    let o = run(&c, "out2");
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("intake/more"), "{}", stderr(&o));
}

#[test]
fn links_inside_the_matter_and_loops_are_walked_once() {
    let c = case("draft.md");
    symlink(".", c.matter.join("intake/again")).unwrap();
    symlink("..", c.matter.join("intake/up")).unwrap();
    symlink("letter.txt", c.matter.join("intake/same.txt")).unwrap();
    let o = Lexrun::new()
        .arg("sources")
        .arg(&c.workflow)
        .arg("--matter")
        .arg(&c.matter)
        .arg("--store")
        .arg(c.dir.path().join("store"))
        .arg("--json")
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<String> = v
        .as_array()
        .or(v["sources"].as_array())
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files, ["intake/letter.txt"], "{}", stdout(&o));
    let o = run(&c, "out");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_draft_outside_the_matter_and_the_library_is_refused_with_the_rule() {
    // The case's folder holds no `lexrun.toml` or `.git`, so the library is the workflow's
    // own folder; a folder beside it is outside both.
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("elsewhere.md");
    fs::write(&elsewhere, "I paid $9,999.00.\n").unwrap();
    let abs = elsewhere.display().to_string();
    for (draft, plant) in [(abs.as_str(), false), ("linked.md", true)] {
        let c = case(draft);
        if plant {
            symlink(&elsewhere, c.matter.join("linked.md")).unwrap();
        }
        let o = run(&c, "out");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let (_, rec) = support::run_record(&c.dir.path().join("out"));
        let why = rec.matters[0].steps[0].why.clone().unwrap_or_default();
        assert!(
            why.contains("outside its matter")
                && why.contains("workflow library")
                && why.contains("elsewhere.md")
                && why.contains("lexrun.toml"),
            "{draft}: {why}"
        );
        assert!(!c.dir.path().join("out/check.md").exists());
    }
}

#[test]
fn a_draft_inside_the_workflow_library_is_read_like_its_imports_and_templates() {
    // `workflows/`, `drafts/` and the matter side by side under a `lexrun.toml`: a draft
    // the workflow names by a path leading out of the matter but not out of the library is
    // checked, by `..` or through a link within the library alike.
    for (draft, plant) in [("../drafts/draft.md", false), ("linked.md", true)] {
        let c = case(draft);
        let root = c.dir.path();
        fs::write(root.join("lexrun.toml"), "").unwrap();
        fs::create_dir_all(root.join("drafts")).unwrap();
        fs::write(
            root.join("drafts/draft.md"),
            "I paid $1,250.00 on April 1, 2024.\n",
        )
        .unwrap();
        if plant {
            symlink(root.join("drafts/draft.md"), c.matter.join("linked.md")).unwrap();
        }
        let o = run(&c, "out");
        assert_eq!(o.status.code(), Some(0), "{draft}: {}", stderr(&o));
        let report = fs::read_to_string(root.join("out/check.md")).unwrap();
        assert!(report.contains("1,250.00"), "{draft}: {report}");
    }
}

#[test]
fn a_template_outside_the_workflow_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join("wf");
    fs::create_dir_all(wf.join("prompts")).unwrap();
    fs::write(dir.path().join("leak.hbs"), "{{evidence}}").unwrap();
    symlink(dir.path().join("leak.hbs"), wf.join("prompts/linked.hbs")).unwrap();
    let lex = fs::read_to_string("tests/diagnostics/template-outside.lex")
        .unwrap()
        .replace("../../../leak.hbs", "prompts/linked.hbs");
    fs::write(wf.join("w.lex"), lex).unwrap();
    let o = Lexrun::new().arg("check").arg(wf.join("w.lex")).output();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("E043") && e.contains("symbolic link"), "{e}");
}

/// A workflow of the diagnostics corpus, clean, with its template and one import as given.
fn library_workflow(import: &str, template: &str) -> String {
    let lex = fs::read_to_string("tests/diagnostics/template-outside.lex").unwrap();
    let lex = lex
        .replace("// expect: E043 at line 14\n", "")
        .replace("../../../leak.hbs", template);
    lex.replacen(
        "workflow w\n",
        &format!("workflow w\nuse \"{import}\"\n"),
        1,
    )
}

/// `workflows/`, `prompts/` and `lib/` side by side under `root`.
fn library(root: &Path, import: &str, template: &str) -> PathBuf {
    for d in ["workflows", "prompts", "lib"] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::write(root.join("prompts/demand.hbs"), "Write the demand letter.").unwrap();
    fs::write(
        root.join("lib/common.lex"),
        "template demand_note \"Note the demand.\"\n",
    )
    .unwrap();
    let w = root.join("workflows/demand.lex");
    fs::write(&w, library_workflow(import, template)).unwrap();
    w
}

#[test]
fn imports_and_templates_anywhere_in_the_library_are_read() {
    for marker in ["lexrun.toml", ".git"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("firm");
        let w = library(&root, "../lib/common.lex", "../prompts/demand.hbs");
        fs::create_dir_all(root.join(marker).parent().unwrap()).unwrap();
        if marker == ".git" {
            fs::create_dir(root.join(".git")).unwrap();
        } else {
            fs::write(root.join(marker), "").unwrap();
        }
        let o = Lexrun::new().arg("check").arg(&w).output();
        assert_eq!(o.status.code(), Some(0), "{marker}: {}", stderr(&o));
    }
}

#[test]
fn without_a_marker_the_library_is_the_workflows_folder_and_the_rule_is_stated() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("firm");
    // Both lead out of `workflows/`, the library when no folder is marked.
    for (import, template, code) in [
        ("../lib/common.lex", "demand.hbs", "E018"),
        ("common.lex", "../prompts/demand.hbs", "E043"),
    ] {
        let w = library(&root, import, template);
        fs::copy(
            root.join("lib/common.lex"),
            root.join("workflows/common.lex"),
        )
        .unwrap();
        fs::copy(
            root.join("prompts/demand.hbs"),
            root.join("workflows/demand.hbs"),
        )
        .unwrap();
        let o = Lexrun::new().arg("check").arg(&w).output();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains(code), "{code}: {e}");
        assert!(
            e.contains("the workflow library")
                && e.contains("lexrun.toml")
                && e.contains("else its own folder"),
            "the message states the rule: {e}"
        );
    }
}

#[test]
fn a_link_out_of_the_library_is_refused_for_imports_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("firm");
    fs::write(dir.path().join("outside.lex"), "template x \"x\"\n").unwrap();
    let w = library(&root, "../lib/linked.lex", "../prompts/demand.hbs");
    fs::write(root.join("lexrun.toml"), "").unwrap();
    symlink(dir.path().join("outside.lex"), root.join("lib/linked.lex")).unwrap();
    let o = Lexrun::new().arg("check").arg(&w).output();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("E018") && e.contains("symbolic link"), "{e}");
}

/// A llama.cpp-protocol server for `tests/runtime/pipeline.lex` (gate, draft, review).
fn server() -> Fake {
    Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            "1. I paid $1,250.00 for April 2024 (TEST000002).\n".into()
        };
        Answer { text, fault: None }
    })
}

/// A private copy of the runtime test matter.
fn pipeline_matter(dir: &Path) -> PathBuf {
    let matter = dir.join("matter");
    support::copy_dir(Path::new("tests/runtime/matter"), &matter);
    matter
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_link_at_an_output_path_is_replaced_not_followed_and_records_are_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let matter = pipeline_matter(dir.path());
    let out = dir.path().join("out");
    fs::create_dir_all(&out).unwrap();
    let victim = dir.path().join("victim.txt");
    fs::write(&victim, "keep me").unwrap();
    symlink(&victim, out.join("draft.md.provenance.json")).unwrap();
    symlink(&victim, out.join("draft.md")).unwrap();
    let srv = server();
    let cassette = dir.path().join("tape/run.jsonl");
    let store = dir.path().join("store");
    let cache = dir.path().join("cache");
    let o = Lexrun::new()
        .args(["run", "tests/runtime/pipeline.lex", "--matter"])
        .arg(&matter)
        .arg("--out")
        .arg(&out)
        .arg("--store")
        .arg(&store)
        .arg("--record")
        .arg(&cassette)
        .args(["--endpoint", &format!("gpu_a={}", srv.url)])
        .args(["--endpoint", &format!("gpu_b={}", srv.url)])
        .env("LEXRUN_CACHE", &cache)
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
    for f in ["draft.md", "draft.md.provenance.json"] {
        let m = fs::symlink_metadata(out.join(f)).unwrap();
        assert!(m.file_type().is_file(), "{f} is lexrun's own file now");
    }
    let (run, _) = support::run_record(&out);
    assert_eq!(mode(&run), 0o700, "the run folder");
    for f in [
        "run.json",
        "report.md",
        "draft/prompt.md",
        "draft/output.md",
    ] {
        assert_eq!(mode(&run.join(f)), 0o600, "{f}");
    }
    assert_eq!(mode(&run.join("draft")), 0o700);
    assert_eq!(mode(&cassette), 0o600, "the cassette");
    assert_eq!(mode(&store), 0o700, "the store");
    assert_eq!(mode(&store.join("ledger.sqlite")), 0o600, "the ledger");
    // The text cache, filled by reading a PDF.
    let pdfs = dir.path().join("pdfs");
    fs::create_dir_all(&pdfs).unwrap();
    support::pdf::text_pdf(&pdfs.join("invoice.pdf"), &["Invoice total $3,875.00"]);
    fs::write(dir.path().join("d.md"), "The invoice was for $3,875.00.\n").unwrap();
    let o = Lexrun::new()
        .arg("verify")
        .arg("--sources")
        .arg(&pdfs)
        .arg(dir.path().join("d.md"))
        .env("LEXRUN_CACHE", &cache)
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = cache.join("text");
    assert_eq!(mode(&text), 0o700, "the text cache");
    for e in fs::read_dir(&text).unwrap().flatten() {
        assert_eq!(mode(&e.path()), 0o600, "{}", e.path().display());
    }
}
