//! The `lexrun` command line: argument parsing, output and exit codes. Thin by design; the
//! work happens in the layers below.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use camino::{Utf8Path, Utf8PathBuf};
use clap::{Parser, Subcommand, ValueEnum};

use crate::check::{self, Checked};
use crate::diagnostic::{self, Code, Severity};
use crate::plan;
use crate::verify;

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
    /// Log what lexrun does on stderr: -v requests and retries, -vv everything. `RUST_LOG`
    /// (e.g. `RUST_LOG=lexrun=debug`) takes precedence.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
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
    /// Run a workflow over one or more matters against its model servers (also
    /// `lexrun FILE.lex`). Exit 0: every output produced; 1: a step failed or was blocked;
    /// 3: a gate stopped the workflow by design; 2: usage or I/O error; 130: interrupted.
    Run(RunArgs),
    /// Run the `*.test.lex` tests under PATHs (default: the current folder) by replaying their
    /// cassettes, and compare what each run produced with its stored snapshot.
    Test {
        paths: Vec<std::path::PathBuf>,
        /// Store the new snapshots of every test that differs.
        #[arg(long)]
        accept: bool,
        /// Show each difference and ask whether to accept it (on a terminal).
        #[arg(long)]
        review: bool,
    },
    /// Explain why a stage's last run missed the cache: which parts of its key changed since
    /// the run before, old against new.
    Why {
        file: Utf8PathBuf,
        stage: String,
        #[arg(long, value_name = "DIR")]
        store: Option<std::path::PathBuf>,
    },
    /// The chain of custody of a run (default: the last): its sources, and for every output
    /// and stage text the model, inputs, plan and time.
    Audit {
        file: Utf8PathBuf,
        run: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "DIR")]
        store: Option<std::path::PathBuf>,
    },
    /// List each source file as admitted or refused by the intake guard; exit 1 if any is
    /// refused.
    Sources {
        file: Utf8PathBuf,
        #[arg(long, value_name = "DIR")]
        matter: Vec<std::path::PathBuf>,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "DIR")]
        store: Option<std::path::PathBuf>,
    },
    /// The cache: `ls` its entries, `verify` every object's hash, `gc` what recent runs do not
    /// need.
    Cache {
        #[arg(value_enum)]
        action: CacheAction,
        file: Utf8PathBuf,
        /// `gc` keeps what this many most recent runs used.
        #[arg(long, default_value_t = 20)]
        keep: usize,
        #[arg(long, value_name = "DIR")]
        store: Option<std::path::PathBuf>,
    },
    /// Start a llama-server per model on the workflow's llama_cpp pools (pinned to the pool's
    /// GPUs, with its context and cache settings) and preload models on Ollama pools; waits
    /// until each is ready.
    Up {
        file: Utf8PathBuf,
        /// Only this model; repeat for more.
        #[arg(long, value_name = "MODEL")]
        only: Vec<String>,
        /// Print each server's environment and command line; start nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        servers: ServerArgs,
        /// Seconds to wait for a model to load.
        #[arg(long, default_value_t = 1800)]
        timeout: u64,
    },
    /// Stop the servers `lexrun up` started for this workflow (recorded PIDs only).
    Down {
        file: Utf8PathBuf,
        #[command(flatten)]
        servers: ServerArgs,
        /// Seconds between SIGTERM and SIGKILL.
        #[arg(long, default_value_t = 10)]
        grace: u64,
    },
    /// Show every pool and model: up, loading, down or wrong model; context, slots busy, last
    /// measured decode speed.
    Status {
        file: Utf8PathBuf,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        servers: ServerArgs,
    },
    /// Measure each model's prompt and decode speed (median of N runs) against `min_decode`.
    Bench {
        file: Utf8PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Exit 1 if any model decodes under its `min_decode`.
        #[arg(long)]
        enforce: bool,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        servers: ServerArgs,
    },
    #[command(external_subcommand)]
    External(Vec<String>),
    /// Print the text of each page of PDFs and images, with its Bates stamp: the text layer,
    /// and OCR (pdftoppm + tesseract) where a page has none. Cached by the file's hash.
    Text {
        /// One JSON array of pages instead of plain text.
        #[arg(long)]
        json: bool,
        /// Tesseract's language.
        #[arg(long, default_value = "eng")]
        lang: String,
        /// Resolution for OCR rendering.
        #[arg(long, default_value_t = 300)]
        dpi: u32,
        /// Neither read nor write the text cache.
        #[arg(long)]
        no_cache: bool,
        #[arg(required = true, value_name = "FILE")]
        files: Vec<std::path::PathBuf>,
    },
    /// Bind exhibits into one PDF in order, with a bookmark per exhibit, optional slip sheets
    /// and index page; writes the exhibit index as Markdown beside the binder.
    Merge {
        /// The binder to write.
        #[arg(short = 'o', long = "out", value_name = "BINDER.pdf")]
        out: std::path::PathBuf,
        /// A page reading "Exhibit A" (B, C, …) before each exhibit.
        #[arg(long)]
        slip_sheets: bool,
        /// Leave out the bookmarks.
        #[arg(long)]
        no_bookmarks: bool,
        /// Put the exhibit index as the binder's first page.
        #[arg(long)]
        index: bool,
        /// The index's title.
        #[arg(long, default_value = "Exhibit index")]
        title: String,
        /// The exhibits, in order (A, B, C, …).
        #[arg(required = true, value_name = "EXHIBIT.pdf")]
        exhibits: Vec<std::path::PathBuf>,
    },
    /// Stamp Bates numbers on PDFs, numbering continuously across the files in order. Inputs
    /// are never modified; stamped copies and a page map (bates-map.json) go to OUT_DIR.
    Bates {
        /// The Bates prefix, e.g. SMITH.
        #[arg(long)]
        prefix: String,
        /// The first number.
        #[arg(long, default_value_t = 1)]
        start: u64,
        /// Digits in each number, zero-padded.
        #[arg(long, default_value_t = 6)]
        width: u32,
        /// Text after the number, e.g. -CONFIDENTIAL.
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        suffix: String,
        /// bottom-right, bottom-center, bottom-left, top-right, top-center or top-left.
        #[arg(long, default_value = "bottom-right")]
        position: String,
        /// Font size in points.
        #[arg(long = "font-size", default_value_t = 9.0)]
        font_size: f64,
        /// The folder for the stamped copies.
        #[arg(short = 'o', long = "out", value_name = "OUT_DIR")]
        out: std::path::PathBuf,
        /// The PDFs, in the order they are numbered.
        #[arg(required = true, value_name = "IN.pdf")]
        inputs: Vec<std::path::PathBuf>,
    },
    /// Check every citation, date, Bates number, quotation and amount in a draft against the
    /// sources; exit 1 if anything is unsupported.
    Verify {
        /// A source file or folder (text, Markdown, PDF); repeat for more.
        #[arg(long = "sources", required = true, value_name = "PATH")]
        sources: Vec<std::path::PathBuf>,
        /// A Bates prefix of the sources, e.g. SMITH; repeat for more. Without it, the
        /// prefixes stamped on the source pages are used.
        #[arg(long = "bates-prefix", value_name = "PREFIX")]
        bates_prefix: Vec<String>,
        /// Print one JSON object instead of the Markdown report.
        #[arg(long, conflicts_with = "html")]
        json: bool,
        /// Print the review page instead: the draft with every claim marked, the evidence
        /// beside it, one self-contained HTML file.
        #[arg(long)]
        html: bool,
        /// The draft to check (Markdown or plain text).
        draft: std::path::PathBuf,
    },
}

#[derive(clap::Args, Debug)]
struct ServerArgs {
    /// Use another URL for a pool, e.g. `--endpoint board_a=http://127.0.0.1:9001`.
    #[arg(long, value_name = "POOL=URL")]
    endpoint: Vec<String>,
    /// The store (default: `.lexrun` beside the workflow).
    #[arg(long, value_name = "DIR")]
    store: Option<std::path::PathBuf>,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    file: Utf8PathBuf,
    /// A matter folder; repeat to run several matters through the pipeline together
    /// (default: the workflow's `matter`, else its own folder).
    #[arg(long, value_name = "DIR")]
    matter: Vec<std::path::PathBuf>,
    /// Where runs and outputs go (default: `out` beside the workflow).
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
    /// Send a pool's calls to another server, e.g. `--endpoint board_a=http://10.0.0.5:8081`.
    #[arg(long, value_name = "POOL=URL")]
    endpoint: Vec<String>,
    /// One JSON event per line on stdout (stage started/finished, notes, timings).
    #[arg(long)]
    json: bool,
    /// Retries per call on refused connections, resets, 429/5xx and cut streams.
    #[arg(long, default_value_t = 4)]
    retries: u32,
    /// Seconds without a byte from a server before the call counts as hung.
    #[arg(long, default_value_t = 300)]
    idle_timeout: u64,
    /// Seconds to wait for a server that is still loading its model.
    #[arg(long, default_value_t = 1800)]
    load_timeout: u64,
    /// Milliseconds before the first retry; doubles each time.
    #[arg(long, default_value_t = 500)]
    backoff_ms: u64,
    /// Save every model exchange of the run in this cassette (JSON lines).
    #[arg(long, value_name = "CASSETTE", conflicts_with_all = ["replay", "replay_or_record"])]
    record: Option<std::path::PathBuf>,
    /// Serve every model call from this cassette; no server is needed.
    #[arg(long, value_name = "CASSETTE", conflicts_with = "replay_or_record")]
    replay: Option<std::path::PathBuf>,
    /// Serve what the cassette holds and record the rest from live servers.
    #[arg(long, value_name = "CASSETTE")]
    replay_or_record: Option<std::path::PathBuf>,
    /// The store: cache and provenance ledger (default: `LEXRUN_STORE`, else `.lexrun`
    /// beside the workflow).
    #[arg(long, value_name = "DIR")]
    store: Option<std::path::PathBuf>,
    /// Call every model stage, whatever the cache holds (answers are still stored).
    #[arg(long)]
    no_cache: bool,
    /// Call this stage's model again, whatever the cache holds; repeat for more.
    #[arg(long, value_name = "STAGE")]
    refresh: Vec<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CacheAction {
    Ls,
    Verify,
    Gc,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Text,
    Json,
    Dot,
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
        Command::Plan { file, format } => cmd_plan(&file, format, color),
        Command::Explain { code } => cmd_explain(&code),
        Command::Run(args) => cmd_run(&args, color),
        Command::Why { file, stage, store } => cmd_why(&file, &stage, store.as_deref(), color),
        Command::Audit {
            file,
            run,
            json,
            store,
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
        } => {
            let opts = crate::exhibits::merge::Options {
                slip_sheets,
                bookmarks: !no_bookmarks,
                index_page: index,
                title,
            };
            match crate::exhibits::merge::merge(&exhibits, &out, &opts) {
                Ok(entries) => {
                    eprintln!(
                        "bound {} exhibits into {}; index: {}",
                        entries.len(),
                        out.display(),
                        out.with_file_name(format!(
                            "{}-index.md",
                            out.file_stem()
                                .map(|s| s.to_string_lossy())
                                .unwrap_or_default()
                        ))
                        .display()
                    );
                    exit::OK
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    exit::USAGE
                }
            }
        }
        Command::Bates {
            prefix,
            start,
            width,
            suffix,
            position,
            font_size,
            out,
            inputs,
        } => cmd_bates(
            prefix, start, width, suffix, &position, font_size, &out, &inputs,
        ),
        Command::Verify {
            sources,
            bates_prefix,
            json,
            html,
            draft,
        } => cmd_verify(&sources, bates_prefix, json, html, &draft),
    };
    ExitCode::from(code)
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

/// Checks a file and lowers it; on errors, reports them (with `refusal` saying what did not
/// happen) and gives the exit code.
fn checked_plan(file: &Utf8Path, color: bool, refusal: &str) -> Result<plan::Plan, u8> {
    let checked = check::check_path(file);
    let code = report(&checked, color);
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

fn cmd_plan(file: &Utf8PathBuf, format: Format, color: bool) -> u8 {
    let plan = match checked_plan(file, color, "no plan") {
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

/// The largest draft `verify` reads: far beyond any filing, small enough to hold in memory.
const MAX_DRAFT: u64 = 256 << 20;

fn read_draft(path: &std::path::Path) -> Result<String, String> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read the draft `{shown}`: {e}"))?;
    if meta.is_dir() {
        return Err(format!("`{shown}` is a folder; give the draft file"));
    }
    if meta.len() > MAX_DRAFT {
        return Err(format!(
            "the draft `{shown}` is {} MiB; lexrun checks drafts up to 256 MiB",
            meta.len() >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read the draft `{shown}`: {e}"))?;
    if bytes.contains(&0) {
        return Err(format!(
            "the draft `{shown}` is a binary file; export it as text or Markdown first"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "the draft `{shown}` is not UTF-8 text (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        )
    })?;
    if text.trim().is_empty() {
        return Err(format!(
            "the draft `{shown}` is empty: there is nothing to verify"
        ));
    }
    Ok(text)
}

fn cmd_verify(
    sources: &[std::path::PathBuf],
    prefixes: Vec<String>,
    json: bool,
    html: bool,
    draft_path: &std::path::Path,
) -> u8 {
    // The evidence pass allocates and frees a file's pages at a time; transparent huge pages
    // would keep each thread's freed memory resident in 2 MiB blocks.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_THP_DISABLE only changes this process's page policy.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let draft = match read_draft(draft_path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let evidence = match verify::evidence::load(sources, prefixes) {
        Ok(ev) => ev,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    if evidence.sources.is_empty() {
        eprintln!("error: the sources hold no files; check the paths given to --sources");
        return exit::USAGE;
    }
    let v = verify::verify(&draft, &evidence);
    if v.files.iter().all(|f| f.problem.is_some()) {
        eprintln!("error: none of the sources could be read:");
        for f in &v.files {
            eprintln!("  {}: {}", f.path, f.problem.as_deref().unwrap_or(""));
        }
        return exit::USAGE;
    }
    let name = draft_path.display().to_string();
    let out = if json {
        verify::report::json(&v.outcomes, &v.files) + "\n"
    } else if html {
        crate::review::page(&crate::review::Review {
            title: &name,
            draft: &draft,
            outcomes: &v.outcomes,
            files: &v.files,
            evidence: &evidence,
            provenance: vec![
                ("command".into(), "lexrun verify".into()),
                ("draft".into(), name.clone()),
                (
                    "draft blake3".into(),
                    blake3::hash(draft.as_bytes()).to_hex().to_string(),
                ),
                (
                    "sources".into(),
                    sources
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            ],
            images: true,
        })
    } else {
        verify::report::markdown(&name, &draft, &v.outcomes, &v.files)
    };
    if print_out(&out) != exit::OK {
        return exit::USAGE;
    }
    let all_read = v.files.iter().all(|f| f.problem.is_none());
    if all_read
        && v.outcomes
            .iter()
            .all(|o| o.status == verify::Status::Supported)
    {
        exit::OK
    } else {
        exit::ERRORS
    }
}

#[allow(clippy::too_many_arguments)]
fn cmd_bates(
    prefix: String,
    start: u64,
    width: u32,
    suffix: String,
    position: &str,
    font_size: f64,
    out: &std::path::Path,
    inputs: &[std::path::PathBuf],
) -> u8 {
    use crate::exhibits::bates;
    let Some(position) = bates::Position::parse(position) else {
        eprintln!("error: `{position}` is not a position; use bottom-right, bottom-center, bottom-left, top-right, top-center or top-left");
        return exit::USAGE;
    };
    if prefix.is_empty()
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        eprintln!("error: `{prefix}` is not a usable Bates prefix; use letters, digits, `_` or `-`, e.g. SMITH");
        return exit::USAGE;
    }
    if !(1..=12).contains(&width) || !(4.0..=36.0).contains(&font_size) {
        eprintln!("error: --width takes 1 to 12 digits and --font-size 4 to 36 points");
        return exit::USAGE;
    }
    let opts = bates::Options {
        prefix,
        start,
        width,
        suffix,
        position,
        font_size,
    };
    match bates::stamp_files(inputs, out, &opts) {
        Ok(map) => {
            let first = map.first().map_or("", |s| s.bates.as_str());
            let last = map.last().map_or("", |s| s.bates.as_str());
            eprintln!(
                "stamped {} pages in {} files: {first}–{last}; page map: {}",
                map.len(),
                inputs.len(),
                out.join("bates-map.json").display()
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

fn cmd_text(
    files: &[std::path::PathBuf],
    json: bool,
    lang: String,
    dpi: u32,
    no_cache: bool,
) -> u8 {
    use crate::exhibits::text;
    let opts = text::Options {
        lang,
        dpi,
        cache: if no_cache {
            None
        } else {
            text::default_cache()
        },
        ocr_optional: false,
    };
    #[derive(serde::Serialize)]
    struct Page<'a> {
        file: String,
        page: u32,
        bates: Option<String>,
        from: &'a str,
        text: &'a str,
    }
    let mut all = Vec::new();
    for f in files {
        match text::pages(f, &opts) {
            Ok(pages) => all.push((f.display().to_string(), pages)),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        }
    }
    let mut out = String::new();
    let mut rows = Vec::new();
    for (file, pages) in &all {
        for p in pages {
            let bates = verify::evidence::stamp_of(&p.text);
            if json {
                rows.push(Page {
                    file: file.clone(),
                    page: p.page,
                    bates,
                    from: &p.from,
                    text: &p.text,
                });
            } else {
                out.push_str(&format!(
                    "== {file} page {}{} ({})\n{}\n",
                    p.page,
                    bates.map_or(String::new(), |b| format!(", {b}")),
                    p.from,
                    p.text.trim_end()
                ));
            }
        }
    }
    if json {
        out = serde_json::to_string(&rows).unwrap_or_default() + "\n";
    }
    print_out(&out)
}

fn cmd_run(args: &RunArgs, color: bool) -> u8 {
    use crate::run::{backend::Limits, events::Mode, Options};
    let plan = match checked_plan(&args.file, color, "not run") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let dir = args
        .file
        .parent()
        .map(|d| d.as_std_path().to_path_buf())
        .unwrap_or_default();
    let Some(endpoints) = parse_endpoints(&args.endpoint) else {
        return exit::USAGE;
    };
    let events = if args.json {
        Mode::Json
    } else if std::io::stderr().is_terminal() {
        Mode::Live
    } else {
        Mode::Plain
    };
    let opts = Options {
        matters: args.matter.clone(),
        out: args.out.clone().unwrap_or_else(|| dir.join("out")),
        endpoints,
        limits: Limits {
            retries: args.retries,
            idle: std::time::Duration::from_secs(args.idle_timeout.max(1)),
            load: std::time::Duration::from_secs(args.load_timeout),
            backoff: std::time::Duration::from_millis(args.backoff_ms),
            ..Limits::default()
        },
        events,
        cassette: args
            .record
            .clone()
            .map(|p| (p, crate::run::cassette::Mode::Record))
            .or_else(|| {
                args.replay
                    .clone()
                    .map(|p| (p, crate::run::cassette::Mode::Replay))
            })
            .or_else(|| {
                args.replay_or_record
                    .clone()
                    .map(|p| (p, crate::run::cassette::Mode::ReplayOrRecord))
            }),
        store: Some(store_dir(args.store.as_deref(), &dir)),
        cache: !args.no_cache,
        refresh: args.refresh.clone(),
    };
    for r in &opts.refresh {
        if !plan.steps.iter().any(|s| &s.name == r) {
            eprintln!("error: --refresh {r}: the workflow has no stage `{r}`");
            return exit::USAGE;
        }
    }
    // One worker is plenty for a handful of streams; CPU work runs on blocking threads.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return exit::USAGE;
        }
    };
    match rt.block_on(crate::run::run(&plan, &dir, &opts)) {
        Ok(rec) => {
            let code = rec.exit_code();
            if !args.json {
                for m in &rec.matters {
                    if let Some(by) = &m.stopped_by {
                        eprintln!("stopped: {by}");
                    }
                    for o in m.outputs.iter().filter(|o| o.missing) {
                        eprintln!("error: output `{}` {}", o.path, o.status);
                    }
                    for s in m.steps.iter().filter(|s| {
                        s.why.is_some() && s.status != Some(crate::run::Status::Skipped)
                    }) {
                        eprintln!(
                            "error: step `{}` {}: {}",
                            s.name,
                            match s.status {
                                Some(crate::run::Status::Blocked) => "blocked",
                                _ => "failed",
                            },
                            s.why.as_deref().unwrap_or("")
                        );
                    }
                }
                eprintln!(
                    "run {} of {}: {}; record in {}",
                    rec.run_id,
                    rec.workflow,
                    match code {
                        0 => "every output written",
                        3 => "stopped by a gate",
                        130 => "interrupted; finished steps kept",
                        _ => "not every step succeeded",
                    },
                    opts.out.join(&rec.run_id).join("run.json").display()
                );
            }
            code
        }
        Err(e @ crate::run::RunError::Refused(_)) => {
            eprintln!("error: {e}");
            exit::ERRORS
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

fn cmd_test(paths: &[std::path::PathBuf], accept: bool, review: bool) -> u8 {
    use crate::testing;
    let roots = if paths.is_empty() {
        vec![std::path::PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    for p in &roots {
        if !p.exists() {
            eprintln!("error: `{}` does not exist", p.display());
            return exit::USAGE;
        }
    }
    let files = testing::discover(&roots);
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut tests = Vec::new();
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", f.display());
                failed += 1;
                continue;
            }
        };
        match testing::parse(f, &text) {
            Ok(t) => tests.extend(t),
            Err(errors) => {
                eprint!("{}", testing::render_errors(f, &text, &errors));
                failed += 1;
            }
        }
    }
    if tests.is_empty() && failed == 0 {
        eprintln!(
            "no tests: no `*.test.lex` files under {}",
            roots
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return exit::USAGE;
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return exit::USAGE;
        }
    };
    let outcomes = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (i, t) in tests.into_iter().enumerate() {
            set.spawn(async move { (i, testing::run_test(t).await) });
        }
        let mut all = Vec::new();
        while let Some(r) = set.join_next().await {
            if let Ok(x) = r {
                all.push(x);
            }
        }
        all.sort_by_key(|x| x.0);
        all.into_iter().map(|x| x.1).collect::<Vec<_>>()
    });
    let tty = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    for o in outcomes {
        let label = format!("{} :: {}", o.test.file.display(), o.test.name);
        let mut ok = o.failures.is_empty();
        for f in &o.failures {
            eprintln!("FAIL {label}: {f}");
        }
        if let Some((path, stored, new)) = &o.snapshot {
            let shown = match stored {
                Some(old) => testing::diff(old, new),
                None => format!("new snapshot:\n{new}"),
            };
            let take = if accept {
                true
            } else if review && tty {
                eprintln!("---- {label}: snapshot {}\n{shown}", path.display());
                eprint!("accept this snapshot? [y/N] ");
                let mut answer = String::new();
                let _ = std::io::stdin().read_line(&mut answer);
                answer.trim().eq_ignore_ascii_case("y")
            } else {
                false
            };
            if take {
                if let Err(e) = testing::write_snapshot(path, &o.test, new) {
                    eprintln!("FAIL {label}: cannot write `{}`: {e}", path.display());
                    ok = false;
                } else {
                    eprintln!("     {label}: snapshot stored in {}", path.display());
                }
            } else {
                let pending = path.with_extension("snap.new");
                let _ = testing::write_snapshot(&pending, &o.test, new);
                eprintln!(
                    "FAIL {label}: the run differs from its snapshot {} (new one in {}; `lexrun test --accept` stores it)\n{shown}",
                    path.display(),
                    pending.display()
                );
                ok = false;
            }
        }
        if ok {
            // A pending snapshot from an earlier failing run is stale now.
            let _ =
                std::fs::remove_file(testing::snapshot_path(&o.test).with_extension("snap.new"));
            eprintln!("ok   {label}");
            passed += 1;
        } else {
            failed += 1;
        }
    }
    eprintln!("{passed} passed, {failed} failed");
    if failed > 0 {
        exit::ERRORS
    } else {
        exit::OK
    }
}

fn open_store(
    file: &Utf8Path,
    store: Option<&std::path::Path>,
    color: bool,
    refusal: &str,
) -> Result<(plan::Plan, std::path::PathBuf, crate::store::Store), u8> {
    let plan = checked_plan(file, color, refusal)?;
    let dir = file
        .parent()
        .map(|d| d.as_std_path().to_path_buf())
        .unwrap_or_default();
    let sdir = store_dir(store, &dir);
    match crate::store::Store::open(&sdir) {
        Ok(s) => Ok((plan, dir, s)),
        Err(e) => {
            eprintln!("error: {e}");
            Err(exit::USAGE)
        }
    }
}

fn cmd_why(file: &Utf8Path, stage: &str, store: Option<&std::path::Path>, color: bool) -> u8 {
    let (plan, _, st) = match open_store(file, store, color, "nothing to explain") {
        Ok(x) => x,
        Err(c) => return c,
    };
    if !plan.steps.iter().any(|s| s.name == stage) {
        eprintln!("error: the workflow has no stage `{stage}`");
        return exit::USAGE;
    }
    let keys = st.recent_keys(&plan.workflow.name, stage, 200);
    let Some((run, matter, round, key, new, hit)) = keys.first().cloned() else {
        println!("`{stage}` has not run with this store yet: its first run will call the model");
        return exit::OK;
    };
    let mut out = format!(
        "`{stage}` in run {run} (matter {matter}, round {round}): {} (key {})\n",
        if hit {
            "answered from the cache"
        } else {
            "called the model"
        },
        &key[..12.min(key.len())]
    );
    let previous = keys
        .iter()
        .skip(1)
        .find(|k| k.0 != run && k.1 == matter && k.2 == round);
    match previous {
        None => out.push_str("no earlier run of this stage for this matter to compare with\n"),
        Some((prun, _, _, pkey, old, _)) if pkey == &key => {
            out.push_str(&format!(
                "the key is the same as in run {prun}: nothing changed\n"
            ));
            let _ = old;
        }
        Some((prun, _, _, _, old, _)) => {
            out.push_str(&format!("changed since run {prun}:\n"));
            let fields = [
                "node",
                "model_identity",
                "sampling",
                "schema",
                "prompt",
                "inputs",
                "round",
                "format",
            ];
            for f in fields {
                if old[f] == new[f] {
                    continue;
                }
                match f {
                    "prompt" => {
                        out.push_str("  prompt: the rendered prompt differs\n");
                        let text = |v: &serde_json::Value| {
                            v.as_str()
                                .and_then(|h| st.get(h))
                                .map(|b| String::from_utf8_lossy(&b).into_owned())
                        };
                        if let (Some(a), Some(b)) = (text(&old[f]), text(&new[f])) {
                            let d = similar::TextDiff::from_lines(&a, &b)
                                .unified_diff()
                                .context_radius(1)
                                .header("before", "now")
                                .to_string();
                            for l in d.lines().take(40) {
                                out.push_str(&format!("    {l}\n"));
                            }
                        }
                    }
                    "node" => out.push_str(&format!(
                        "  plan node: the stage's declaration, model or pool changed ({} → {})\n",
                        short(&old[f]),
                        short(&new[f])
                    )),
                    "inputs" => {
                        for (k, v) in new[f].as_object().into_iter().flatten() {
                            if old[f][k] != *v {
                                out.push_str(&format!(
                                    "  input `{k}`: its text changed ({} → {})\n",
                                    short(&old[f][k]),
                                    short(v)
                                ));
                            }
                        }
                    }
                    _ => out.push_str(&format!("  {f}: {} → {}\n", old[f], new[f])),
                }
            }
        }
    }
    print_out(&out)
}

fn short(v: &serde_json::Value) -> String {
    v.as_str()
        .map(|s| s.chars().take(12).collect())
        .unwrap_or_else(|| v.to_string())
}

fn cmd_audit(
    file: &Utf8Path,
    run: Option<&str>,
    json: bool,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (_, _, st) = match open_store(file, store, color, "no audit") {
        Ok(x) => x,
        Err(c) => return c,
    };
    let Some(run) = run.map(str::to_string).or_else(|| st.last_run()) else {
        eprintln!("error: the store has no runs yet");
        return exit::USAGE;
    };
    let Some(mut info) = st.run_info(&run) else {
        eprintln!("error: the store has no run `{run}`");
        return exit::USAGE;
    };
    let arts = st.artifacts_of_run(&run);
    info["artifacts"] = serde_json::to_value(&arts).unwrap_or_default();
    if json {
        return print_out(&(serde_json::to_string_pretty(&info).unwrap_or_default() + "\n"));
    }
    let mut out = format!(
        "Chain of custody — run {run} of `{}` (plan {}), status {}\n\nSources:\n",
        info["workflow"].as_str().unwrap_or(""),
        short(&info["plan_hash"]),
        info["status"].as_str().unwrap_or("unfinished")
    );
    for s in info["sources"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "  {}  blake3 {}{}\n",
            s["path"].as_str().unwrap_or(""),
            short(&s["raw_hash"]),
            s["admitted"]
                .as_str()
                .map(|r| format!("  (admitted: {r})"))
                .unwrap_or_default()
        ));
    }
    out.push_str("\nWritten:\n");
    for a in &arts {
        out.push_str(&format!(
            "  {:<6} {}  ← stage `{}` round {} of matter {}, model {}, node {}, blake3 {}\n",
            a.kind,
            a.path,
            a.stage,
            a.round,
            a.matter,
            if a.model.is_empty() { "-" } else { &a.model },
            &a.node_hash[..12.min(a.node_hash.len())],
            &a.hash[..12.min(a.hash.len())]
        ));
    }
    print_out(&out)
}

fn cmd_sources(
    file: &Utf8Path,
    matters: &[std::path::PathBuf],
    json: bool,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (plan, dir, st) = match open_store(file, store, color, "no sources checked") {
        Ok(x) => x,
        Err(c) => return c,
    };
    let verdicts = match crate::run::check_sources(&plan, &dir, matters, &st) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let refused = verdicts.iter().any(|v| v.blocked());
    if json {
        let _ = print_out(&(serde_json::to_string_pretty(&verdicts).unwrap_or_default() + "\n"));
    } else {
        let mut out = String::new();
        for v in &verdicts {
            let word = match (&v.refused, &v.admitted) {
                (None, _) => "admitted".to_string(),
                (Some(_), Some(r)) => format!("admitted by the workflow ({r})"),
                (Some(_), None) => "REFUSED".to_string(),
            };
            out.push_str(&format!("{:<10} {}  {word}", v.matter, v.file));
            if let Some(why) = &v.refused {
                out.push_str(&format!(": {why}"));
            }
            out.push('\n');
        }
        let _ = print_out(&out);
    }
    if refused {
        exit::ERRORS
    } else {
        exit::OK
    }
}

fn cmd_cache(
    action: CacheAction,
    file: &Utf8Path,
    keep: usize,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (_, _, st) = match open_store(file, store, color, "no cache") {
        Ok(x) => x,
        Err(c) => return c,
    };
    match action {
        CacheAction::Ls => {
            let mut out = String::new();
            for e in st.cache_entries() {
                let size = std::fs::metadata(st.object_path(&e.text_hash))
                    .map(|m| m.len())
                    .unwrap_or(0);
                out.push_str(&format!(
                    "{}  {:<12} {:>8} B  {}\n",
                    &e.key[..16],
                    e.stage,
                    size,
                    e.identity
                ));
            }
            print_out(&out)
        }
        CacheAction::Verify => {
            let objects = st.objects();
            let mut bad = 0;
            for (hash, path) in &objects {
                let ok = std::fs::read(path)
                    .map(|b| blake3::hash(&b).to_hex().as_str() == hash)
                    .unwrap_or(false);
                if !ok {
                    bad += 1;
                    println!("damaged: {}", path.display());
                }
            }
            println!("{} objects, {} damaged", objects.len(), bad);
            if bad > 0 {
                exit::ERRORS
            } else {
                exit::OK
            }
        }
        CacheAction::Gc => match st.gc(keep) {
            Ok((entries, objects)) => {
                println!("removed {entries} cache entries and {objects} objects not used by the last {keep} runs");
                exit::OK
            }
            Err(e) => {
                eprintln!("error: {e}");
                exit::ERRORS
            }
        },
    }
}

/// The store: `--store`, else `LEXRUN_STORE`, else `.lexrun` beside the workflow.
fn store_dir(
    given: Option<&std::path::Path>,
    workflow_dir: &std::path::Path,
) -> std::path::PathBuf {
    given
        .map(std::path::Path::to_path_buf)
        .or_else(|| std::env::var_os("LEXRUN_STORE").map(std::path::PathBuf::from))
        .unwrap_or_else(|| workflow_dir.join(".lexrun"))
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

fn parse_endpoints(list: &[String]) -> Option<std::collections::BTreeMap<String, String>> {
    let mut endpoints = std::collections::BTreeMap::new();
    for e in list {
        match e.split_once('=') {
            Some((pool, url)) if !pool.is_empty() && !url.is_empty() => {
                endpoints.insert(pool.to_string(), url.to_string());
            }
            _ => {
                eprintln!("error: --endpoint `{e}` should be POOL=URL, e.g. board_a=http://127.0.0.1:8081");
                return None;
            }
        }
    }
    Some(endpoints)
}

/// The plan, the workflow's folder, the store, the endpoints and a runtime for the server
/// commands.
struct ServerCx {
    plan: plan::Plan,
    dir: std::path::PathBuf,
    store: std::path::PathBuf,
    endpoints: std::collections::BTreeMap<String, String>,
    rt: tokio::runtime::Runtime,
}

fn server_cx(file: &Utf8Path, a: &ServerArgs, color: bool, refusal: &str) -> Result<ServerCx, u8> {
    let plan = checked_plan(file, color, refusal)?;
    let dir = file
        .parent()
        .map(|d| d.as_std_path().to_path_buf())
        .unwrap_or_default();
    let store = a.store.clone().unwrap_or_else(|| dir.join(".lexrun"));
    let endpoints = parse_endpoints(&a.endpoint).ok_or(exit::USAGE)?;
    for pool in endpoints.keys() {
        if !plan.pools.iter().any(|p| &p.name == pool) {
            eprintln!("error: --endpoint {pool}: the workflow has no pool `{pool}`");
            return Err(exit::USAGE);
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the runtime: {e}");
            exit::USAGE
        })?;
    Ok(ServerCx {
        plan,
        dir,
        store,
        endpoints,
        rt,
    })
}

fn cmd_up(
    file: &Utf8Path,
    only: &[String],
    dry_run: bool,
    a: &ServerArgs,
    timeout: u64,
    color: bool,
) -> u8 {
    use crate::serve;
    let cx = match server_cx(file, a, color, "nothing started") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    if dry_run {
        let launches = match serve::launches(&cx.plan, &cx.dir, only, &cx.endpoints) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        };
        let mut out = String::new();
        for l in &launches {
            out.push_str(&format!(
                "# {} on pool {} at {}\n{}\n\n",
                l.model,
                l.pool,
                l.url,
                l.shell()
            ));
        }
        for m in cx
            .plan
            .models
            .iter()
            .filter(|m| only.is_empty() || only.contains(&m.name))
        {
            let Some(p) = cx.plan.pools.iter().find(|p| p.name == m.pool) else {
                continue;
            };
            if p.server == crate::check::model::ServerKind::Ollama {
                let url = cx.endpoints.get(&p.name).unwrap_or(&p.endpoint);
                let tag = match &m.weights {
                    crate::check::model::Weights::Tag { tag } => tag.clone(),
                    crate::check::model::Weights::Gguf { path, .. } => path.clone(),
                };
                out.push_str(&format!(
                    "# {} on pool {} at {url} (Ollama)\nPOST {url}/api/generate {{\"model\": \"{tag}\", \"keep_alive\": -1, \"options\": {{\"num_ctx\": {}}}}}\n\n",
                    m.name, p.name, m.ctx
                ));
            }
        }
        return print_out(&out);
    }
    let limits = crate::run::backend::Limits {
        load: std::time::Duration::from_secs(timeout),
        ..Default::default()
    };
    match cx.rt.block_on(serve::up(
        &cx.plan,
        &cx.dir,
        &cx.store,
        only,
        &cx.endpoints,
        &limits,
    )) {
        Ok(started) => {
            eprintln!(
                "{} server{} up; `lexrun down {file}` stops {}",
                started.len(),
                if started.len() == 1 { "" } else { "s" },
                if started.len() == 1 { "it" } else { "them" }
            );
            exit::OK
        }
        Err(serve::ServeError::Input(e)) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
        Err(serve::ServeError::Failed(e)) => {
            eprintln!("error: {e}");
            exit::ERRORS
        }
    }
}

fn cmd_down(file: &Utf8Path, a: &ServerArgs, grace: u64, color: bool) -> u8 {
    let cx = match server_cx(file, a, color, "nothing stopped") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    match crate::serve::down(&cx.store, std::time::Duration::from_secs(grace)) {
        Ok(lines) if lines.is_empty() => {
            eprintln!(
                "no servers recorded in {}; nothing to stop",
                crate::serve::servers_dir(&cx.store).display()
            );
            exit::OK
        }
        Ok(lines) => {
            for l in lines {
                eprintln!("{l}");
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::ERRORS
        }
    }
}

fn cmd_status(file: &Utf8Path, json: bool, a: &ServerArgs, color: bool) -> u8 {
    let cx = match server_cx(file, a, color, "no status") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    let limits = crate::run::backend::Limits {
        connect: std::time::Duration::from_secs(2),
        ..Default::default()
    };
    let rows = cx.rt.block_on(crate::serve::status(
        &cx.plan,
        &cx.store,
        &cx.endpoints,
        &limits,
    ));
    if json {
        return print_out(&(serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"));
    }
    let mut out = format!(
        "{:<10} {:<12} {:<10} {:<11} {:>8} {:>6} {:>10}  {}\n",
        "pool", "model", "server", "state", "ctx", "busy", "decode", "detail"
    );
    for r in &rows {
        out.push_str(&format!(
            "{:<10} {:<12} {:<10} {:<11} {:>8} {:>6} {:>10}  {}\n",
            r.pool,
            r.model,
            r.server,
            r.state,
            r.ctx.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            match (r.slots_busy, r.slots) {
                (Some(b), Some(n)) => format!("{b}/{n}"),
                _ => "-".into(),
            },
            r.last_decode
                .map(|d| format!("{d:.1} t/s"))
                .unwrap_or_else(|| "-".into()),
            if r.detail.is_empty() {
                r.url.clone()
            } else {
                format!("{} ({})", r.url, r.detail)
            },
        ));
    }
    print_out(&out)
}

fn cmd_bench(
    file: &Utf8Path,
    runs: usize,
    enforce: bool,
    json: bool,
    a: &ServerArgs,
    color: bool,
) -> u8 {
    let cx = match server_cx(file, a, color, "no benchmark") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    let limits = crate::run::backend::Limits {
        retries: 1,
        ..Default::default()
    };
    let rows = cx.rt.block_on(crate::serve::bench(
        &cx.plan,
        &cx.store,
        &cx.endpoints,
        runs,
        &limits,
    ));
    let code = if enforce && rows.iter().any(|r| !r.ok) {
        exit::ERRORS
    } else {
        exit::OK
    };
    if json {
        let _ = print_out(&(serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"));
        return code;
    }
    let mut out = format!(
        "{:<12} {:<10} {:>8} {:>14} {:>14} {:>11}  {}\n",
        "model", "pool", "prompt", "prompt t/s", "decode t/s", "min_decode", "verdict"
    );
    for r in &rows {
        out.push_str(&format!(
            "{:<12} {:<10} {:>8} {:>14.1} {:>14.1} {:>11}  {}\n",
            r.model,
            r.pool,
            r.prompt_tokens,
            r.prompt_per_second,
            r.decode_per_second,
            r.min_decode
                .map(|m| format!("{m}"))
                .unwrap_or_else(|| "-".into()),
            match (&r.error, r.ok) {
                (Some(e), _) => format!("error: {e}"),
                (None, true) => "ok".into(),
                (None, false) => "UNDER min_decode".into(),
            }
        ));
    }
    out.push_str(&format!(
        "median of {runs} run{} per model\n",
        if runs == 1 { "" } else { "s" }
    ));
    let _ = print_out(&out);
    code
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
