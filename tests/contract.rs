//! The verification contract: what a rule requires is what the run checks. `quotes must
//! match` allows typographic differences and ellipses; `quotes must match exactly`
//! holds a quotation to its page character for character (only spacing may differ).

use crate::support;
use support::{lexrun, stderr};

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use support::servers::{Answer, Fake, Seen, Speaks};

/// Three quotations of the lease: one as the page reads (across its line break), one with a
/// straight apostrophe for the page's curly one, one shortened with an ellipsis.
const DRAFT: &str =
    "The lease says the Landlord \"shall make repairs within thirty days of written notice\".\n\n\
It also says \"The Tenant's rent of $1,250.00 is due\" monthly.\n\n\
Repairs are due \"within thirty days … from the Tenant\".\n";

/// The status of each quotation in the verification report, in draft order.
fn quote_statuses(rule: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let lex = fs::read_to_string("tests/contract/quotes.lex")
        .unwrap()
        .replace("quotes RULE", &format!("quotes {rule}"));
    let wf = dir.path().join("quotes.lex");
    fs::write(&wf, lex).unwrap();
    let f = Fake::start(Speaks::Llama, Duration::ZERO, |_: &Seen| Answer {
        text: DRAFT.to_string(),
        fault: None,
    });
    let (out, store) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = lexrun(&[
        "run",
        &wf.display().to_string(),
        "--matter",
        "tests/contract/matter",
        "--out",
        &out.path().display().to_string(),
        "--store",
        &store.path().display().to_string(),
        "--endpoint",
        &format!("gpu={}", f.url),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .unwrap();
    let report: Value =
        serde_json::from_slice(&fs::read(run.join("verify-draft/report.json")).unwrap()).unwrap();
    let claims = report["claims"].as_array().expect("claims");
    claims
        .iter()
        .filter(|c| c["kind"] == "quote")
        .map(|c| c["status"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn must_match_allows_typography_and_ellipses() {
    assert_eq!(
        quote_statuses("must match"),
        ["supported", "supported", "supported"]
    );
}

#[test]
fn must_match_exactly_holds_quotations_to_the_page() {
    assert_eq!(
        quote_statuses("must match exactly"),
        ["supported", "unsupported", "unsupported"]
    );
}

#[test]
fn the_plan_states_each_rule_as_written() {
    let o = lexrun(&["plan", "tests/contract/quotes.lex"]);
    // The placeholder is no rule: the checker says what a quotation rule may require.
    let err = stderr(&o);
    assert!(err.contains("quotes must match exactly"), "{err}");
    assert!(Path::new("tests/contract/quotes.lex").is_file());
}
