//! `check`, `plan` and `explain`: the compile-time commands.

use super::*;

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

pub(super) fn cmd_plan(file: &Utf8PathBuf, format: Format, color: bool) -> u8 {
    let plan = match plan_with(file, color, "no plan", Warnings::Shown) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let out = match format {
        Format::Text => plan.to_text(),
        Format::Json => plan.to_json() + "\n",
        Format::Dot => plan.to_dot(),
    };
    print_out(&out)
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
