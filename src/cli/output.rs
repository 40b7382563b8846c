//! What every command shares: exit codes, the async runtime, writing results to stdout and
//! printing a check's diagnostics.

use std::io::Write;

use crate::check::Checked;
use crate::diagnostic::{self, Severity};

/// Exit codes shared by every command.
pub mod exit {
    pub const OK: u8 = 0;
    /// The input has errors (diagnostics were printed).
    pub const ERRORS: u8 = 1;
    /// Usage or I/O error: lexrun could not do what was asked.
    pub const USAGE: u8 = 2;
}

/// The async runtime for a command: `workers` threads (default: one per core).
pub(super) fn runtime(workers: Option<usize>) -> Result<tokio::runtime::Runtime, u8> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = workers {
        b.worker_threads(n);
    }
    b.enable_all().build().map_err(|e| {
        eprintln!("error: cannot start the runtime: {e}");
        exit::USAGE
    })
}

/// Writes a command's result to stdout; a closed or failing stdout is an I/O error (exit 2).
pub(super) fn print_out(out: &str) -> u8 {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Ok(()) => exit::OK,
        Err(_) => exit::USAGE,
    }
}

/// How a table's column aligns its cells.
#[derive(Clone, Copy)]
pub(super) enum Align {
    Left,
    Right,
}

/// A column of a plain-text table: its heading, its width and how it aligns.
pub(super) struct Column(pub &'static str, pub usize, pub Align);

/// A plain-text table, headings first: each cell padded to its column's width, one space
/// between columns and two before the last, which is not padded.
pub(super) fn table(columns: &[Column], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut out = String::new();
    let mut line = |cells: &[&str]| {
        for (i, (Column(_, width, align), cell)) in columns.iter().zip(cells).enumerate() {
            if i + 1 == columns.len() {
                out.push(' ');
                out.push_str(cell);
            } else {
                match align {
                    Align::Left => out.push_str(&format!("{cell:<width$} ")),
                    Align::Right => out.push_str(&format!("{cell:>width$} ")),
                }
            }
        }
        out.push('\n');
    };
    line(&columns.iter().map(|c| c.0).collect::<Vec<_>>());
    for row in rows {
        line(&row.iter().map(String::as_str).collect::<Vec<_>>());
    }
    out
}

/// Whether a command shows a check's warnings or only counts them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Warnings {
    Shown,
    Counted,
}

/// Prints a check's diagnostics to stderr and returns the exit code it implies.
pub(super) fn report(checked: &Checked, color: bool, warnings: Warnings) -> u8 {
    let shown: Vec<diagnostic::Diagnostic> = match warnings {
        Warnings::Shown => checked.diagnostics.clone(),
        Warnings::Counted => checked
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect(),
    };
    let mut text = diagnostic::render(&shown, &checked.sources, color);
    let hidden = checked.diagnostics.len() - shown.len();
    if hidden > 0 {
        let file = checked
            .sources
            .is_empty()
            .then(String::new)
            .unwrap_or_else(|| checked.sources.get(0).name.clone());
        text.push_str(&format!(
            "{hidden} warning{} (see `lexrun check {file}`)\n",
            if hidden == 1 { "" } else { "s" }
        ));
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    if checked.unreadable {
        exit::USAGE
    } else if checked.has_errors() {
        exit::ERRORS
    } else {
        exit::OK
    }
}

pub(super) fn summary(checked: &Checked) -> String {
    let errors = checked
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Error)
        .count();
    let warnings = checked.diagnostics.len() - errors;
    let n = |k: usize, w: &str| format!("{k} {w}{}", if k == 1 { "" } else { "s" });
    format!("{}, {}", n(errors, "error"), n(warnings, "warning"))
}

#[cfg(test)]
mod tests {
    use super::{table, Align, Column};

    #[test]
    fn a_table_pads_each_column_and_leaves_the_last_free() {
        let columns = [
            Column("pool", 6, Align::Left),
            Column("ctx", 5, Align::Right),
            Column("detail", 0, Align::Left),
        ];
        let rows = vec![vec!["gpu0".into(), "8192".into(), "http://h:1".into()]];
        let want = format!(
            "{:<6} {:>5}  {}\n{:<6} {:>5}  {}\n",
            "pool", "ctx", "detail", "gpu0", 8192, "http://h:1"
        );
        assert_eq!(table(&columns, rows), want);
    }
}
