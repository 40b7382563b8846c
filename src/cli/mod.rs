//! The `lexrun` command line: argument parsing, output and exit codes. Thin by design; the
//! work happens in the layers below.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

mod args;
mod compile;
mod decide;
mod decisions;
mod draft;
mod exhibits;
mod failure;
mod init;
mod mcp;
mod open;
mod output;
mod review;
mod run;
mod runs;
mod servers;
mod shell;
mod store;
mod test;
mod verify;

use args::{Cli, Color, Command};
use compile::{cmd_check, cmd_explain, cmd_plan};
use exhibits::{cmd_bates, cmd_merge, cmd_text};
use run::cmd_run;
use servers::{cmd_bench, cmd_down, cmd_status, cmd_up};
use store::{cmd_audit, cmd_audit_productions, cmd_cache, cmd_sources, cmd_why};
use test::cmd_test;
use verify::cmd_verify;

pub use output::exit;

pub fn main() -> ExitCode {
    let cli = Cli::parse_from(help_help(std::env::args_os().collect()));
    init_logging(cli.verbose);
    let color = use_color(cli.color);
    ExitCode::from(dispatch(cli.command, color))
}

/// `lexrun help --help` (or `-h`) is `lexrun help help`: the help of `help` itself.
fn help_help(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if args.len() == 3 && args[1] == "help" && (args[2] == "--help" || args[2] == "-h") {
        args[2] = "help".into();
    }
    args
}

/// Whether diagnostics are coloured: as asked, or when stderr is a terminal and `NO_COLOR`
/// is unset.
fn use_color(color: Color) -> bool {
    match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    }
}

/// Runs one command and returns its exit code.
fn dispatch(command: Command, color: bool) -> u8 {
    match command {
        Command::Check { files } => cmd_check(&files, color),
        Command::Plan {
            file,
            format,
            store,
        } => cmd_plan(&file, format, store.as_deref(), color),
        Command::Explain { code } => cmd_explain(&code),
        Command::Fmt { files, check } => crate::editor::fmt_files::run(&files, check, color),
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
            decisions,
            store,
            ..
        } => cmd_audit(
            &file,
            run.as_deref(),
            json,
            decisions.as_deref(),
            store.as_deref(),
            color,
        ),
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
            accept_failures,
            review,
        } => cmd_test(&paths, accept, accept_failures, review),
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
        Command::Mcp => mcp::cmd_mcp(),
        Command::Completions { shell } => shell::cmd_completions(shell),
        Command::Man => shell::cmd_man(),
        Command::Init { dir } => init::cmd_init(&dir),
        Command::Runs {
            workflow,
            json,
            store,
        } => runs::cmd_runs(workflow.as_deref(), json, store.as_deref(), color),
        Command::External(args) => cmd_external(&args, color),
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
            ignore_prefix,
            json,
            html,
            matter,
            draft,
        } => cmd_verify(
            &sources,
            (bates_prefix, ignore_prefix),
            &allow_reporter,
            json,
            html,
            matter.as_deref(),
            &draft,
        ),
        Command::Review {
            target,
            reviewer,
            idle_timeout,
            store,
        } => review::cmd_review(review::ReviewArgs {
            target: &target,
            reviewer: reviewer.unwrap_or_else(decide::os_user),
            idle: std::time::Duration::from_secs(idle_timeout),
            store: store.as_deref(),
        }),
        Command::Decide(a) => decide::cmd_decide(decide::DecideArgs {
            ask: decide::Ask {
                claim: a.claim,
                verdict: match (a.confirm, a.strike, a.waive) {
                    (true, _, _) => crate::store::Verdict::Confirmed,
                    (_, true, _) => crate::store::Verdict::Struck,
                    (_, _, true) => crate::store::Verdict::Waived,
                    _ => crate::store::Verdict::Withdrawn,
                },
                page: a.page,
                note: a.note,
                reason: a.reason,
                reviewer: a.reviewer.unwrap_or_else(decide::os_user),
            },
            report: a.report.as_deref(),
            draft: a.draft.as_deref(),
            sources: &a.sources,
            prefixes: a.bates_prefix,
            allow_reporters: &a.allow_reporter,
            matter: a.matter.as_deref(),
            store: a.store.as_deref(),
        }),
    }
}

/// A command lexrun does not know: a `.lex` file first runs it (`lexrun FILE ...` is
/// `lexrun run FILE ...`); anything else is a usage error.
fn cmd_external(args: &[String], color: bool) -> u8 {
    match args.first() {
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
    }
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
