//! `runs`: the runs the ledger holds, newest first.

use super::compile::checked_plan;
use super::failure::fail;
use super::open::{ledger_url, open_at};
use super::output::{exit, print_out, table, Align, Column};

/// `lexrun runs [WORKFLOW]`: every run (of one workflow, named or given as its .lex file).
pub(super) fn cmd_runs(
    workflow: Option<&str>,
    json: bool,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (name, dir, url) = match workflow {
        Some(w) if w.ends_with(".lex") => {
            let file = camino::Utf8Path::new(w);
            let plan = match checked_plan(file, color, "no runs listed") {
                Ok(p) => p,
                Err(code) => return code,
            };
            let dir = file
                .parent()
                .map(|d| d.as_std_path().to_path_buf())
                .unwrap_or_default();
            let url = ledger_url(Some(&plan));
            (Some(plan.workflow.name.clone()), dir, url)
        }
        Some(w) => (Some(w.to_string()), ".".into(), ledger_url(None)),
        None => (None, ".".into(), ledger_url(None)),
    };
    let st = match open_at(store, &dir, url) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let runs = match st.runs(name.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if json {
        return print_out(&(serde_json::to_string_pretty(&runs).unwrap_or_default() + "\n"));
    }
    if runs.is_empty() {
        eprintln!(
            "the ledger holds no runs{}",
            name.map(|n| format!(" of `{n}`")).unwrap_or_default()
        );
        return exit::OK;
    }
    let rows = runs.iter().map(|r| {
        vec![
            utc(r.started),
            r.workflow.clone(),
            if r.matters.is_empty() {
                "-".into()
            } else {
                r.matters.join(", ")
            },
            r.status.clone().unwrap_or_else(|| "unfinished".into()),
            r.unsupported.to_string(),
            r.failed.to_string(),
            r.run_id.clone(),
        ]
    });
    let width = |f: &dyn Fn(&crate::store::RunRow) -> usize, min: usize| {
        runs.iter().map(f).max().unwrap_or(0).max(min)
    };
    let columns = [
        Column("started (UTC)", 19, Align::Left),
        Column("workflow", width(&|r| r.workflow.len(), 8), Align::Left),
        Column(
            "matter",
            width(&|r| r.matters.join(", ").len(), 6),
            Align::Left,
        ),
        Column("status", 10, Align::Left),
        Column("unsupported", 11, Align::Right),
        Column("failed", 6, Align::Right),
        Column("run", 0, Align::Left),
    ];
    print_out(&table(&columns, rows))
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM:SS` (UTC).
fn utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = crate::calendar::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_are_utc_calendar_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(super::utc(1_796_402_078), "2026-12-04 16:34:38");
    }
}
