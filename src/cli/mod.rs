//! The `lexrun` command line: argument parsing, output and exit codes. Thin by design; the
//! work happens in the layers below.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use camino::Utf8PathBuf;
use clap::{Parser, Subcommand, ValueEnum};

use crate::check::{self, Checked};
use crate::diagnostic::{self, Code, Severity};
use crate::plan;

/// Exit codes shared by every command.
pub mod exit {
    pub const OK: u8 = 0;
    /// The input has errors (diagnostics were printed).
    pub const ERRORS: u8 = 1;
    /// Usage or I/O error: lexrun could not do what was asked.
    pub const USAGE: u8 = 2;
}

#[derive(Parser, Debug)]
#[command(
    name = "lexrun",
    version,
    about = "Declarative legal workflows on your own LLM servers"
)]
struct Cli {
    /// Colour in diagnostics: auto (when stderr is a terminal), always or never.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check .lex files and report every problem; exit 1 if any has errors.
    Check {
        #[arg(required = true)]
        files: Vec<Utf8PathBuf>,
    },
    /// Check a .lex file and print its execution plan.
    Plan {
        file: Utf8PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Explain a diagnostic code, e.g. `lexrun explain E051`.
    Explain { code: String },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Text,
    Json,
    Dot,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let code = match cli.command {
        Command::Check { files } => cmd_check(&files, color),
        Command::Plan { file, format } => cmd_plan(&file, format, color),
        Command::Explain { code } => cmd_explain(&code),
    };
    ExitCode::from(code)
}

/// Prints a check's diagnostics to stderr and returns the exit code it implies.
fn report(checked: &Checked, color: bool) -> u8 {
    let text = diagnostic::render(&checked.diagnostics, &checked.sources, color);
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

fn summary(checked: &Checked) -> String {
    let errors = checked
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Error)
        .count();
    let warnings = checked.diagnostics.len() - errors;
    let n = |k: usize, w: &str| format!("{k} {w}{}", if k == 1 { "" } else { "s" });
    format!("{}, {}", n(errors, "error"), n(warnings, "warning"))
}

fn cmd_check(files: &[Utf8PathBuf], color: bool) -> u8 {
    let mut worst = exit::OK;
    for f in files {
        let checked = check::check_path(f);
        let code = report(&checked, color);
        if code != exit::USAGE {
            let verdict = if code == exit::OK { "ok" } else { "failed" };
            eprintln!("{verdict}: {f} ({})", summary(&checked));
        }
        worst = worst.max(code);
    }
    worst
}

fn cmd_plan(file: &Utf8PathBuf, format: Format, color: bool) -> u8 {
    let checked = check::check_path(file);
    let code = report(&checked, color);
    let Some(workflow) = checked.workflow.as_ref().filter(|_| code == exit::OK) else {
        if code != exit::USAGE {
            eprintln!("no plan: {file} has errors ({})", summary(&checked));
        }
        return code;
    };
    let plan = plan::lower(workflow);
    let out = match format {
        Format::Text => plan.to_text(),
        Format::Json => plan.to_json() + "\n",
        Format::Dot => plan.to_dot(),
    };
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
        .is_err()
    {
        return exit::USAGE;
    }
    exit::OK
}

fn cmd_explain(code: &str) -> u8 {
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
