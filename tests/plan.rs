//! Plans of the example workflows, as snapshots a reviewer can read, and the properties every
//! plan must have: deterministic, hashed, in run order.

use std::fs;

use camino::{Utf8Path, Utf8PathBuf};
use lexrun::check::check_path;
use lexrun::plan::{lower, Plan};

use crate::support;
use support::lexrun;

const EXAMPLES: &[&str] = &["affidavit", "motion", "summary", "exhibits", "production"];

fn plan_of(path: &Utf8Path) -> Plan {
    let checked = check_path(path);
    let workflow = checked.workflow.unwrap_or_else(|| {
        panic!(
            "{path} has errors:\n{}",
            lexrun::diagnostic::render(&checked.diagnostics, &checked.sources, false)
        )
    });
    lower(&workflow)
}

fn example(name: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(format!("workflows/{name}.lex"))
}

#[test]
fn example_plans_as_text() {
    for name in EXAMPLES {
        let plan = plan_of(&example(name));
        insta::assert_snapshot!(format!("{name}.text"), plan.to_text());
    }
}

#[test]
fn example_plans_as_json() {
    for name in EXAMPLES {
        let plan = plan_of(&example(name));
        let value: serde_json::Value = serde_json::from_str(&plan.to_json()).unwrap();
        insta::assert_json_snapshot!(format!("{name}.json"), value);
    }
}

#[test]
fn affidavit_plan_as_dot() {
    insta::assert_snapshot!("affidavit.dot", plan_of(&example("affidavit")).to_dot());
}

/// Two processes (each with its own hash seeds and allocation order) give the plan this
/// process gives, byte for byte.
#[test]
fn plans_are_the_same_in_every_process() {
    for name in EXAMPLES {
        let here = plan_of(&example(name)).to_json() + "\n";
        for _ in 0..2 {
            let o = lexrun(&["plan", example(name).as_str(), "--format", "json"]);
            assert_eq!(o.status.code(), Some(0), "{name}");
            assert_eq!(String::from_utf8_lossy(&o.stdout), here, "{name}");
        }
    }
}

#[test]
fn every_step_runs_after_what_it_waits_for() {
    for name in EXAMPLES {
        let plan = plan_of(&example(name));
        let pos = |n: &str| plan.steps.iter().position(|s| s.name == n).unwrap();
        for (i, s) in plan.steps.iter().enumerate() {
            for a in &s.after {
                assert!(pos(a) < i, "{name}: {} runs before {a}", s.name);
            }
        }
    }
}

/// Copies an example into a temp dir with one edit, and plans the copy.
fn edited(name: &str, from: &str, to: &str) -> Plan {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    let src = fs::read_to_string(example(name)).unwrap();
    assert!(src.contains(from), "{from} not in {name}");
    fs::create_dir_all(root.join("lib")).unwrap();
    fs::copy("workflows/lib/cluster.lex", root.join("lib/cluster.lex")).unwrap();
    let path = root.join(format!("{name}.lex"));
    fs::write(&path, src.replacen(from, to, 1)).unwrap();
    plan_of(&path)
}

#[test]
fn a_prompt_change_changes_only_that_stage() {
    let base = plan_of(&example("motion"));
    let changed = edited("motion", "Do not add authority", "Never add authority");
    assert_ne!(base.hash, changed.hash);
    for (a, b) in base.steps.iter().zip(&changed.steps) {
        assert_eq!(a.hash == b.hash, a.name != "research", "stage {}", a.name);
    }
    assert_eq!(base.models[0].hash, changed.models[0].hash);
}

#[test]
fn a_model_change_reaches_its_stages() {
    let base = plan_of(&example("summary"));
    let changed = edited("summary", "ctx 16k", "ctx 8k");
    assert_ne!(base.models[0].hash, changed.models[0].hash);
    assert_ne!(base.steps[0].hash, changed.steps[0].hash);
    assert_eq!(base.pools[0].hash, changed.pools[0].hash);
}

#[test]
fn a_quoted_prompt_that_names_a_file_is_read_from_that_file() {
    // `prompt "prompts/demand.md"` is the file's text, not the 17 characters of its path; a
    // name with no extension that is a file beside the workflow is read as well.
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    fs::create_dir_all(root.join("prompts")).unwrap();
    let letter = "{{evidence}}\n\nWrite a demand letter for the unpaid invoices.\nCite the Bates number of every fact.\n";
    fs::write(root.join("prompts/demand.md"), letter).unwrap();
    fs::write(root.join("DEMAND"), letter).unwrap();
    let src = fs::read_to_string(example("summary")).unwrap();
    for (prompt, origin) in [
        ("\"prompts/demand.md\"", "prompts/demand.md"),
        ("\"DEMAND\"", "DEMAND"),
    ] {
        let path = root.join("summary.lex");
        fs::write(
            &path,
            src.replacen(
                "prompt  std.prompts.summary",
                &format!("prompt  {prompt}"),
                1,
            ),
        )
        .unwrap();
        let plan = plan_of(&path);
        let step = plan.steps.iter().find(|s| s.name == "summary").unwrap();
        let lexrun::plan::workflow::StepKind::Model(m) = &step.kind else {
            panic!("summary is a model stage")
        };
        assert_eq!(m.prompt.origin, origin);
        assert_eq!(m.prompt.text, letter);
        let text = plan.to_text();
        assert!(
            text.contains(&format!("prompt {origin}, 4 lines")),
            "{text}"
        );
    }
}
