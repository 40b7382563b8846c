//! The `lexrun` binary as a user runs it: output streams and exit codes.

use crate::support;
use support::{lexrun, stderr, stdout};

#[test]
fn check_passes_on_every_example() {
    let o = lexrun(&[
        "check",
        "workflows/affidavit.lex",
        "workflows/motion.lex",
        "workflows/summary.lex",
        "workflows/exhibits.lex",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("ok: workflows/summary.lex (0 errors, 0 warnings)"));
    // Warnings are shown but do not fail the check.
    assert!(stderr(&o).contains("lex::E054"));
}

#[test]
fn check_exits_1_on_errors_and_2_on_a_missing_file() {
    let o = lexrun(&["check", "tests/diagnostics/unknown-model.lex"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("lex::E010"));
    assert!(
        stderr(&o).contains("failed: tests/diagnostics/unknown-model.lex (1 error, 0 warnings)")
    );

    let o = lexrun(&["check", "no/such/workflow.lex"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("lex::E016"), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot read `no/such/workflow.lex`"));
}

#[test]
fn the_worst_file_decides_the_exit_code() {
    let o = lexrun(&[
        "check",
        "workflows/summary.lex",
        "tests/diagnostics/stage-cycle.lex",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = lexrun(&["check", "tests/diagnostics/stage-cycle.lex", "missing.lex"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_directory_is_an_io_error_not_a_panic() {
    let o = lexrun(&["check", "workflows"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn plan_prints_each_format_on_stdout() {
    let o = lexrun(&["plan", "workflows/summary.lex"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("Workflow summary"));

    let o = lexrun(&["plan", "--format", "json", "workflows/summary.lex"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("plan JSON parses");
    assert_eq!(v["workflow"]["name"], "summary");
    assert_eq!(v["steps"][0]["kind"], "model");

    let o = lexrun(&["plan", "--format", "dot", "workflows/exhibits.lex"]);
    assert!(stdout(&o).starts_with("digraph \"exhibits\""));
}

#[test]
fn plan_refuses_a_file_with_errors() {
    let o = lexrun(&["plan", "tests/diagnostics/vram-exceeded.lex"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("no plan"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(lexrun(&["plan"]).status.code(), Some(2));
    assert_eq!(lexrun(&["check"]).status.code(), Some(2));
    assert_eq!(
        lexrun(&["plan", "--format", "yaml", "x.lex"]).status.code(),
        Some(2)
    );
    assert_eq!(lexrun(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn explain_names_the_code() {
    let o = lexrun(&["explain", "E052"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("quantized V cache"));
    let o = lexrun(&["explain", "lex::e054"]);
    assert!(stdout(&o).contains("warning"));
    assert_eq!(lexrun(&["explain", "E999"]).status.code(), Some(2));
}
