//! The `lexrun` command line: argument parsing, output and exit codes. Thin by design; the
//! work happens in the layers below.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use crate::check::Checked;
use crate::diagnostic::{self, Severity};

mod args;
mod compile;
mod exhibits;
mod failure;
mod run;
mod servers;
mod store;
mod test;
mod verify;

use args::*;
use compile::*;
use exhibits::*;
use run::*;
use servers::*;
use store::*;
use test::*;
use verify::*;

/// Exit codes shared by every command.
pub mod exit {
    pub const OK: u8 = 0;
    /// The input has errors (diagnostics were printed).
    pub const ERRORS: u8 = 1;
    /// Usage or I/O error: lexrun could not do what was asked.
    pub const USAGE: u8 = 2;
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let code = match cli.command {
        Command::Check { files } => cmd_check(&files, color),
        Command::Plan {
            file,
            format,
            store,
        } => cmd_plan(&file, format, store.as_deref(), color),
        Command::Explain { code } => cmd_explain(&code),
        Command::Fmt { files, check } => crate::editor::fmt::run(&files, check, color),
        Command::Lsp {
            stdio: _,
            pipe,
            socket,
            node_ipc,
            client_process_id,
        } => cmd_lsp(pipe, socket, node_ipc, client_process_id),
        Command::Run(args) => cmd_run(&args, color),
        Command::Why { file, stage, store } => cmd_why(&file, &stage, store.as_deref(), color),
        Command::Audit {
            file,
            json,
            productions,
            store,
            ..
        } if productions => cmd_audit_productions(&file, json, store.as_deref(), color),
        Command::Audit {
            file,
            run,
            json,
            store,
            ..
        } => cmd_audit(&file, run.as_deref(), json, store.as_deref(), color),
        Command::Sources {
            file,
            matter,
            json,
            store,
        } => cmd_sources(&file, &matter, json, store.as_deref(), color),
        Command::Cache {
            action,
            file,
            keep,
            store,
        } => cmd_cache(action, &file, keep, store.as_deref(), color),
        Command::Test {
            paths,
            accept,
            review,
        } => cmd_test(&paths, accept, review),
        Command::Up {
            file,
            only,
            dry_run,
            servers,
            timeout,
        } => cmd_up(&file, &only, dry_run, &servers, timeout, color),
        Command::Down {
            file,
            servers,
            grace,
        } => cmd_down(&file, &servers, grace, color),
        Command::Status {
            file,
            json,
            servers,
        } => cmd_status(&file, json, &servers, color),
        Command::Bench {
            file,
            runs,
            enforce,
            json,
            servers,
        } => cmd_bench(&file, runs, enforce, json, &servers, color),
        Command::External(args) => match args.first() {
            Some(file) if file.ends_with(".lex") => {
                let argv = ["lexrun", "run"]
                    .into_iter()
                    .map(String::from)
                    .chain(args.iter().cloned());
                match Cli::try_parse_from(argv) {
                    Ok(Cli {
                        command: Command::Run(a),
                        ..
                    }) => cmd_run(&a, color),
                    Ok(_) => exit::USAGE,
                    Err(e) => {
                        let _ = e.print();
                        exit::USAGE
                    }
                }
            }
            _ => {
                eprintln!(
                    "error: unknown command `{}`; see `lexrun --help`",
                    args.join(" ")
                );
                exit::USAGE
            }
        },
        Command::Text {
            json,
            lang,
            dpi,
            no_cache,
            files,
        } => cmd_text(&files, json, lang, dpi, no_cache),
        Command::Merge {
            out,
            slip_sheets,
            no_bookmarks,
            index,
            title,
            exhibits,
        } => cmd_merge(&exhibits, &out, slip_sheets, !no_bookmarks, index, title),
        Command::Bates(args) => cmd_bates(args),
        Command::Verify {
            sources,
            bates_prefix,
            allow_reporter,
            json,
            html,
            draft,
        } => cmd_verify(&sources, bates_prefix, &allow_reporter, json, html, &draft),
    };
    ExitCode::from(code)
}

/// The async runtime for a command: `workers` threads (default: one per core).
fn runtime(workers: Option<usize>) -> Result<tokio::runtime::Runtime, u8> {
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
fn print_out(out: &str) -> u8 {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Ok(()) => exit::OK,
        Err(_) => exit::USAGE,
    }
}

/// Whether a command shows a check's warnings or only counts them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Warnings {
    Shown,
    Counted,
}

/// Prints a check's diagnostics to stderr and returns the exit code it implies.
fn report(checked: &Checked, color: bool, warnings: Warnings) -> u8 {
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

/// Tracing to stderr: off unless `-v` or `RUST_LOG` asks for it.
fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("RUST_LOG") {
        Ok(v) if !v.is_empty() => EnvFilter::new(v),
        _ => EnvFilter::new(match verbose {
            0 => "off",
            1 => "lexrun=debug",
            _ => "lexrun=trace,info",
        }),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}

fn cmd_lsp(pipe: Option<String>, socket: Option<u16>, node_ipc: bool, pid: Option<u32>) -> u8 {
    use crate::editor::lsp::Transport;
    if node_ipc {
        eprintln!("error: lexrun lsp cannot speak Node.js IPC (`--node-ipc`)\n  help: start it with `--stdio` (in vscode-languageclient: `transport: TransportKind.stdio`), `--pipe PATH` or `--socket PORT`");
        return 2;
    }
    let transport = match (pipe, socket) {
        (Some(p), _) => Transport::Pipe(p),
        (None, Some(port)) => Transport::Socket(port),
        (None, None) => Transport::Stdio,
    };
    crate::editor::lsp::run(transport, pid)
}
