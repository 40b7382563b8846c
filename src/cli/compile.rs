//! `check`, `plan` and `explain`: the compile-time commands.

use camino::{Utf8Path, Utf8PathBuf};

use super::args::Format;
use super::open::store_dir;
use super::output::{exit, print_out, report, summary, Warnings};
use crate::diagnostic::{Code, Severity};
use crate::{check, plan};

pub(super) fn cmd_check(files: &[Utf8PathBuf], color: bool) -> u8 {
    let mut worst = exit::OK;
    for f in files {
        let checked = if f.as_str().ends_with(".test.lex") {
            check::check_test_path(f)
        } else {
            check::check_path(f)
        };
        let code = report(&checked, color, Warnings::Shown);
        if code != exit::USAGE {
            let verdict = if code == exit::OK { "ok" } else { "failed" };
            eprintln!("{verdict}: {f} ({})", summary(&checked));
        }
        worst = worst.max(code);
    }
    worst
}

/// Checks a file and lowers it; on errors, reports them (with `refusal` saying what did not
/// happen) and gives the exit code. Warnings are `check`'s and `plan`'s business: other
/// commands mention only how many there are.
pub(super) fn checked_plan(file: &Utf8Path, color: bool, refusal: &str) -> Result<plan::Plan, u8> {
    plan_with(file, color, refusal, Warnings::Counted)
}

fn plan_with(
    file: &Utf8Path,
    color: bool,
    refusal: &str,
    warnings: Warnings,
) -> Result<plan::Plan, u8> {
    let checked = check::check_path(file);
    let code = report(&checked, color, warnings);
    match checked.workflow.as_ref().filter(|_| code == exit::OK) {
        Some(w) => Ok(plan::lower(w)),
        None => {
            if code != exit::USAGE {
                eprintln!("{refusal}: {file} has errors ({})", summary(&checked));
            }
            Err(code)
        }
    }
}

pub(super) fn cmd_plan(
    file: &Utf8PathBuf,
    format: Format,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let plan = match plan_with(file, color, "no plan", Warnings::Shown) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let out = match format {
        Format::Text => {
            let dir = file
                .parent()
                .map(|d| d.as_std_path())
                .unwrap_or(std::path::Path::new(""));
            let speeds = crate::serve::speeds(&plan, &store_dir(store, dir));
            plan.to_text() + &speed_table(&speeds)
        }
        Format::Json => plan.to_json() + "\n",
        Format::Dot => plan.to_dot(),
    };
    print_out(&out)
}

/// Predicted against measured decode speed, for the models with either.
fn speed_table(rows: &[crate::serve::Speed]) -> String {
    let rows: Vec<_> = rows
        .iter()
        .filter(|r| r.predicted.is_some() || r.measured.is_some())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let f = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |v| format!("{v:.0} t/s"));
    let mut s = format!(
        "\ndecode speed\n  {:<12} {:<10} {:>10} {:>11} {:>10} {:>11}  {}\n",
        "model", "pool", "predicted", "calibrated", "measured", "min_decode", "server build"
    );
    for r in &rows {
        s.push_str(&format!(
            "  {:<12} {:<10} {:>10} {:>11} {:>10} {:>11}  {}\n",
            r.model,
            r.pool,
            f(r.predicted),
            f(r.calibrated),
            f(r.measured),
            f(r.min_decode),
            r.build.as_deref().unwrap_or("-")
        ));
    }
    if rows.iter().all(|r| r.measured.is_none()) {
        s.push_str("  (no measurements yet: `lexrun bench FILE` measures each model and calibrates the predictions per pool)\n");
    }
    s
}

pub(super) fn cmd_explain(code: &str) -> u8 {
    let want = code.trim().trim_start_matches("lex::").to_ascii_uppercase();
    match Code::ALL.iter().find(|c| c.id() == want) {
        Some(c) => {
            let kind = match c.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            println!("{c} ({kind}): {}", c.summary());
            exit::OK
        }
        None => {
            eprintln!("lexrun has no diagnostic `{code}`; codes look like E051 (see README.md, Diagnostics)");
            exit::USAGE
        }
    }
}
