//! The command line as clap reads it: every command, its arguments and their help.

use camino::Utf8PathBuf;
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "lexrun",
    version,
    about = "Declarative legal workflows on your own LLM servers"
)]
pub(super) struct Cli {
    /// Colour in diagnostics: auto (when stderr is a terminal), always or never.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    pub(super) color: Color,
    /// Log what lexrun does on stderr: -v requests and retries, -vv everything. `RUST_LOG`
    /// (e.g. `RUST_LOG=lexrun=debug`) takes precedence.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(super) verbose: u8,
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum Color {
    Auto,
    Always,
    Never,
}

/// Where the store is, said one way by every command that takes `--store`.
const STORE_HELP: &str = "The store: cache, provenance ledger, bench measurements and server records (default: `LEXRUN_STORE`, else `lexrun/` in the user's data folder, e.g. ~/.local/share/lexrun; `LEXRUN_LEDGER=postgres://…` for a shared ledger)";

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// Check .lex files and report every problem; exit 1 if any has errors.
    Check {
        /// The .lex workflows and .test.lex tests to check.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<Utf8PathBuf>,
    },
    /// Check a .lex file and print its execution plan, with each model's predicted decode
    /// speed beside the last one `lexrun bench` measured.
    Plan {
        /// The .lex workflow.
        file: Utf8PathBuf,
        /// text: for people; json: for programs; dot: a Graphviz graph of the steps.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        #[arg(long, value_name = "DIR", help = STORE_HELP)]
        store: Option<std::path::PathBuf>,
    },
    /// Explain a diagnostic code, e.g. `lexrun explain E051`.
    Explain {
        /// A diagnostic code as `check` prints it, e.g. E051 or lex::E051.
        code: String,
    },
    /// Rewrite .lex and .test.lex files (default: every one under the current folder) in
    /// their canonical layout; `-` formats standard input to standard output.
    Fmt {
        /// Files or folders to format (default: the current folder); `-` for standard input.
        #[arg(value_name = "PATH")]
        files: Vec<std::path::PathBuf>,
        /// Change nothing: print a diff for each file that is not formatted and exit 1.
        #[arg(long)]
        check: bool,
    },
    /// A language server for .lex files on standard input and output (for editors).
    Lsp {
        /// Speak over standard input and output (the default; editors' clients pass it).
        #[arg(long, conflicts_with_all = ["pipe", "socket"])]
        stdio: bool,
        /// Connect to the Unix socket the editor listens on, instead of standard input/output.
        #[arg(long, value_name = "PATH")]
        pipe: Option<String>,
        /// Connect to the TCP port on this machine the editor listens on.
        #[arg(long, value_name = "PORT", conflicts_with = "pipe")]
        socket: Option<u16>,
        /// Node.js IPC, which only Node.js servers can speak: refused with a hint.
        #[arg(long = "node-ipc", hide = true)]
        node_ipc: bool,
        /// The editor's process: the server ends when it is gone.
        #[arg(long = "clientProcessId", value_name = "PID")]
        client_process_id: Option<u32>,
    },
    /// Run a workflow over one or more matters against its model servers (also
    /// `lexrun FILE.lex`). Exit 0: every output produced; 1: a step failed or was blocked;
    /// 4: an answer was incomplete (cut, or with blanks to fill) and what was made of it was
    /// written only as marked drafts; 3: a gate stopped the workflow by design; 2: usage or
    /// I/O error; 130: interrupted.
    Run(RunArgs),
    /// Run the `*.test.lex` tests under PATHs (default: the current folder) by replaying their
    /// cassettes, and compare what each run produced with its stored snapshot.
    Test {
        /// Folders or `.test.lex` files (default: the current folder).
        #[arg(value_name = "PATH")]
        paths: Vec<std::path::PathBuf>,
        /// Store the new snapshots of every test that differs (never of a run in which a
        /// step failed or missed its cassette).
        #[arg(long)]
        accept: bool,
        /// As --accept, and also store a run in which a step failed: for a test of that
        /// failure. A run that missed its cassette is still refused.
        #[arg(long)]
        accept_failures: bool,
        /// Show each difference and ask whether to accept it (on a terminal).
        #[arg(long)]
        review: bool,
    },
    /// Explain why a stage's last run missed the cache: which parts of its key changed since
    /// the run before, old against new.
    Why {
        /// The .lex workflow.
        file: Utf8PathBuf,
        /// The stage, or "judge STAGE" for its judge's calls.
        stage: String,
        #[arg(long, value_name = "DIR", help = STORE_HELP)]
        store: Option<std::path::PathBuf>,
    },
    /// The chain of custody of a run (default: the last): its sources, and for every output
    /// and stage text the model, inputs, plan and time, and the production volumes it wrote.
    Audit {
        /// The .lex workflow.
        file: Utf8PathBuf,
        /// The run id, e.g. run-1796402078-de809f (default: the last run).
        run: Option<String>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Every production volume the ledger holds instead: each volume's Bates range,
        /// folder and run, and every document with its numbers (withheld ones with the
        /// privilege asserted).
        #[arg(long, conflicts_with = "run")]
        productions: bool,
        /// Only the reviewers' decisions on the run's matters, as `json` or `csv` (one row a
        /// decision, superseded ones included), for the firm's records.
        #[arg(long, value_name = "FORMAT", value_parser = ["json", "csv"], conflicts_with = "productions")]
        decisions: Option<String>,
        #[arg(long, value_name = "DIR", help = STORE_HELP)]
        store: Option<std::path::PathBuf>,
    },
    /// List each source file as admitted or refused by the intake guard; exit 1 if any is
    /// refused.
    Sources {
        /// The .lex workflow.
        file: Utf8PathBuf,
        /// A matter folder; repeat for more (default: the workflow's `matter`, else its own
        /// folder).
        #[arg(long, value_name = "DIR")]
        matter: Vec<std::path::PathBuf>,
        /// One JSON array of verdicts instead of text.
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "DIR", help = STORE_HELP)]
        store: Option<std::path::PathBuf>,
    },
    /// The cache: `ls` its entries, `verify` every object's hash, `gc` what recent runs do not
    /// need.
    Cache {
        /// ls, verify or gc.
        #[arg(value_enum)]
        action: CacheAction,
        /// The .lex workflow.
        file: Utf8PathBuf,
        /// `gc` keeps what this many most recent runs used.
        #[arg(long, default_value_t = 20)]
        keep: usize,
        #[arg(long, value_name = "DIR", help = STORE_HELP)]
        store: Option<std::path::PathBuf>,
    },
    /// Start a llama-server per model on the workflow's llama_cpp pools (pinned to the pool's
    /// GPUs, with its context and cache settings) and preload models on Ollama pools; waits
    /// until each is ready.
    Up {
        /// The .lex workflow.
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
        /// The .lex workflow.
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
        /// The .lex workflow.
        file: Utf8PathBuf,
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        servers: ServerArgs,
    },
    /// Measure each model's prompt and decode speed (median of N runs) against `min_decode`.
    Bench {
        /// The .lex workflow.
        file: Utf8PathBuf,
        /// Measurements per model; the median is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Exit 1 if any model decodes under its `min_decode`.
        #[arg(long)]
        enforce: bool,
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        servers: ServerArgs,
    },
    /// A Model Context Protocol server on standard input and output, for agent orchestrators:
    /// check, plan, run, verify, sources, text, bates and audit as tools, what runs wrote as
    /// resources. Paths are confined to the client's roots, else the folder it is started in.
    Mcp,
    /// Print the completion script for a shell: `source <(lexrun completions bash)`, or save
    /// it where the shell loads completions from (README: Shell completions and man page).
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `lexrun man | man -l -`, or save it as `lexrun.1` in a
    /// `man1` folder on `MANPATH`.
    Man,
    /// Write a starter workflow library into DIR: lexrun.toml, a workflow with one pool, one
    /// model, a gate, a draft and strict verification, a sample matter, a test with its
    /// cassette and snapshot, and a .gitignore. It passes `lexrun check` and `lexrun test`.
    Init {
        /// The folder (created if needed; default: the current folder). Nothing in it is
        /// overwritten.
        #[arg(default_value = ".")]
        dir: std::path::PathBuf,
    },
    /// List the runs the ledger holds, newest first: when each started, its workflow,
    /// matters, status, how many claims verification found no support for, how many steps
    /// failed or were blocked, and its id.
    Runs {
        /// A workflow, by name or as its .lex file (default: every workflow).
        workflow: Option<String>,
        /// One JSON array instead of the table.
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "DIR", help = STORE_HELP)]
        store: Option<std::path::PathBuf>,
    },
    #[command(external_subcommand)]
    External(Vec<String>),
    /// Print the text of each page of any source (PDF, scan, photo, Word, email, spreadsheet,
    /// web page, text), with its Bates stamp; an email's attachments follow it as sources of
    /// their own. OCR (pdftoppm + tesseract) where a page has no text. Cached by the file's hash.
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
        /// The sources to read.
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
        #[arg(required = true, value_name = "EXHIBIT")]
        exhibits: Vec<std::path::PathBuf>,
    },
    /// Stamp Bates numbers on PDFs, numbering continuously across the files in order. Inputs
    /// are never modified; stamped copies and a page map (bates-map.json) go to OUT_DIR.
    Bates(BatesArgs),
    /// Record a reviewer's decision on a claim the verifier flagged: --confirm with the page
    /// that supports it, --strike, or --waive with a reason (--withdraw undoes the last).
    Decide(DecideArgs),
    /// Serve a run's review page on 127.0.0.1 (a random port, a one-time token in the URL
    /// printed) where a reviewer confirms, strikes or waives each flagged claim.
    Review {
        /// The run's folder (`out/RUN`, when it verified one stage) or its verification's
        /// (`out/RUN/verify-STAGE`, or a report in it).
        #[arg(value_name = "RUN|REPORT")]
        target: std::path::PathBuf,
        /// Who decides (default: the user logged in).
        #[arg(long, value_name = "NAME")]
        reviewer: Option<String>,
        /// Stop after this many seconds without a request.
        #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
        idle_timeout: u64,
        #[arg(long, value_name = "DIR", help = STORE_HELP)]
        store: Option<std::path::PathBuf>,
    },
    /// Check every citation, date, Bates number, quotation and amount in a draft against the
    /// sources; exit 1 if anything is unsupported.
    Verify {
        /// A source file or folder (PDF, scan, photo, Word, email, spreadsheet, web page,
        /// text); repeat for more.
        #[arg(long = "sources", required = true, value_name = "PATH")]
        sources: Vec<std::path::PathBuf>,
        /// A Bates prefix of the sources, e.g. SMITH; repeat for more. Without it, the
        /// prefixes stamped on the source pages are used.
        #[arg(long = "bates-prefix", value_name = "PREFIX")]
        bates_prefix: Vec<String>,
        /// Accept a reporter abbreviation the citation catalogue does not list, e.g.
        /// "Betts' Dec."; repeat for more.
        #[arg(long = "allow-reporter", value_name = "ABBREVIATION")]
        allow_reporter: Vec<String>,
        /// Numbers with this prefix are not Bates numbers (invoice, order, account numbers),
        /// e.g. BD for BD-1073; repeat for more.
        #[arg(long = "ignore-prefix", value_name = "PREFIX")]
        ignore_prefix: Vec<String>,
        /// Print one JSON object instead of the Markdown report.
        #[arg(long, conflicts_with = "html")]
        json: bool,
        /// Print the review page instead: the draft with every claim marked, the evidence
        /// beside it, one self-contained HTML file.
        #[arg(long)]
        html: bool,
        /// The matter whose reviewers' decisions apply (default: the folder the sources are
        /// in, `matters/NAME/intake` being matter NAME).
        #[arg(long, value_name = "NAME")]
        matter: Option<String>,
        /// The draft to check (Markdown or plain text).
        draft: std::path::PathBuf,
    },
}

#[derive(clap::Args, Debug)]
pub(super) struct ServerArgs {
    /// Use another URL for a pool, e.g. `--endpoint board_a=http://127.0.0.1:9001`, or
    /// another kind of server: `--endpoint rtx=llama_cpp:http://127.0.0.1:9001`; `'*=URL'`
    /// for every pool not named.
    #[arg(long, value_name = "POOL=[KIND:]URL")]
    pub(super) endpoint: Vec<String>,
    /// The store of the servers' records, logs and bench measurements (default: `.lexrun`
    /// beside the workflow, unlike the other commands' store).
    #[arg(long, value_name = "DIR")]
    pub(super) store: Option<std::path::PathBuf>,
}

#[derive(clap::Args, Debug)]
pub(super) struct RunArgs {
    /// The .lex workflow.
    pub(super) file: Utf8PathBuf,
    /// A matter folder; repeat to run several matters through the pipeline together
    /// (default: the workflow's `matter`, else its own folder).
    #[arg(long, value_name = "DIR")]
    pub(super) matter: Vec<std::path::PathBuf>,
    /// Where runs and outputs go (default: `out` beside the workflow).
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<std::path::PathBuf>,
    /// Send a pool's calls to another server, e.g. `--endpoint board_a=http://10.0.0.5:8081`;
    /// name its protocol to stand in for another kind: `--endpoint rtx=llama_cpp:http://…`;
    /// `--endpoint '*=URL'` sends every pool not named to one server.
    #[arg(long, value_name = "POOL=[KIND:]URL")]
    pub(super) endpoint: Vec<String>,
    /// One JSON event per line on stdout (stage started/finished, notes, timings).
    #[arg(long)]
    pub(super) json: bool,
    /// Retries per call on refused connections, resets, 429/5xx and cut streams.
    #[arg(long, default_value_t = 4)]
    pub(super) retries: u32,
    /// Seconds without a byte from a server before the call counts as hung.
    #[arg(long, default_value_t = 300)]
    pub(super) idle_timeout: u64,
    /// Seconds to wait for a server that is still loading its model.
    #[arg(long, default_value_t = 1800)]
    pub(super) load_timeout: u64,
    /// Milliseconds before the first retry; doubles each time.
    #[arg(long, default_value_t = 500)]
    pub(super) backoff_ms: u64,
    /// Save every model exchange of the run in this cassette (JSON lines).
    #[arg(long, value_name = "CASSETTE", conflicts_with_all = ["replay", "replay_or_record"])]
    pub(super) record: Option<std::path::PathBuf>,
    /// Serve every model call from this cassette; no server is needed.
    #[arg(long, value_name = "CASSETTE", conflicts_with = "replay_or_record")]
    pub(super) replay: Option<std::path::PathBuf>,
    /// Serve what the cassette holds and record the rest from live servers.
    #[arg(long, value_name = "CASSETTE")]
    pub(super) replay_or_record: Option<std::path::PathBuf>,
    #[arg(long, value_name = "DIR", help = STORE_HELP)]
    pub(super) store: Option<std::path::PathBuf>,
    /// Call every model stage, whatever the cache holds (answers are still stored).
    #[arg(long)]
    pub(super) no_cache: bool,
    /// Call this stage's model again, whatever the cache holds; repeat for more.
    #[arg(long, value_name = "STAGE")]
    pub(super) refresh: Vec<String>,
    /// Keep the run folders (`out/run-*`) of this many most recent runs of the workflow;
    /// older ones are removed after the run (the ledger keeps their provenance).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(super) keep_runs: usize,
    /// Ask no model server: every model stage comes from the cache, under the model identity
    /// the ledger recorded (regenerates documents with every server down).
    #[arg(long, conflicts_with_all = ["no_cache", "refresh", "record", "replay_or_record"])]
    pub(super) offline: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum CacheAction {
    /// List the cached answers.
    Ls,
    /// Re-hash every stored object.
    Verify,
    /// Remove what the last `--keep` runs do not use.
    Gc,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum Format {
    /// For people.
    Text,
    /// For programs.
    Json,
    /// A Graphviz graph.
    Dot,
}

// `lexrun bates`: what to stamp and how (its help is the subcommand's doc comment).
#[derive(clap::Args, Debug)]
pub(super) struct BatesArgs {
    /// The Bates prefix, e.g. SMITH.
    #[arg(long)]
    pub(super) prefix: String,
    /// The first number.
    #[arg(long, default_value_t = 1)]
    pub(super) start: u64,
    /// Digits in each number, zero-padded.
    #[arg(long, default_value_t = 6)]
    pub(super) width: u32,
    /// Text after the number, e.g. -CONFIDENTIAL.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub(super) suffix: String,
    /// bottom-right, bottom-center, bottom-left, top-right, top-center or top-left.
    #[arg(long, default_value = "bottom-right")]
    pub(super) position: String,
    /// Font size in points.
    #[arg(long = "font-size", default_value_t = 9.0)]
    pub(super) font_size: f64,
    /// The folder for the stamped copies.
    #[arg(short = 'o', long = "out", value_name = "OUT_DIR")]
    pub(super) out: std::path::PathBuf,
    /// The files, in the order they are numbered; other kinds than PDF are stamped as PDFs
    /// of them (`lease.docx` → `lease.pdf`).
    #[arg(required = true, value_name = "IN")]
    pub(super) inputs: Vec<std::path::PathBuf>,
}

// `lexrun decide`: the claim, the decision, and what it is about.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("decision").required(true).multiple(false).args(["confirm", "strike", "waive", "withdraw"])))]
pub(super) struct DecideArgs {
    /// The claim's id, as the report's `id` column shows it (`date-3f9a2b41c07e`).
    pub(super) claim: String,
    /// The claim is supported by the page --page names.
    #[arg(long, requires = "page")]
    pub(super) confirm: bool,
    /// The claim must come out of the draft.
    #[arg(long)]
    pub(super) strike: bool,
    /// The claim is no claim (a defined term, a caption): --reason says why.
    #[arg(long, requires = "reason")]
    pub(super) waive: bool,
    /// Undo the standing decision on the claim.
    #[arg(long)]
    pub(super) withdraw: bool,
    /// The supporting page: FILE:PAGE (`intake/lease.pdf:3`) or a Bates number.
    #[arg(long, value_name = "FILE:PAGE|BATES")]
    pub(super) page: Option<String>,
    /// A note kept with the decision (what the reviewer read, where).
    #[arg(long)]
    pub(super) note: Option<String>,
    /// Why a waived claim is no claim (required with --waive).
    #[arg(long)]
    pub(super) reason: Option<String>,
    /// Who decides (default: the user logged in).
    #[arg(long, value_name = "NAME")]
    pub(super) reviewer: Option<String>,
    /// A run's verification: its folder (`out/RUN/verify-STAGE`) or its report.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["draft", "sources"])]
    pub(super) report: Option<std::path::PathBuf>,
    /// Or a draft as `lexrun verify` checks it, with its --sources.
    #[arg(long, value_name = "FILE", requires = "sources")]
    pub(super) draft: Option<std::path::PathBuf>,
    /// The source files or folders the draft is checked against (with --draft).
    #[arg(long = "sources", value_name = "PATH")]
    pub(super) sources: Vec<std::path::PathBuf>,
    /// A Bates prefix the sources use, as for `lexrun verify` (with --draft).
    #[arg(long = "bates-prefix", value_name = "PREFIX")]
    pub(super) bates_prefix: Vec<String>,
    /// A reporter abbreviation to accept, as for `lexrun verify` (with --draft).
    #[arg(long = "allow-reporter", value_name = "ABBREVIATION")]
    pub(super) allow_reporter: Vec<String>,
    /// The matter (with --draft; default as for `lexrun verify`).
    #[arg(long, value_name = "NAME")]
    pub(super) matter: Option<String>,
    #[arg(long, value_name = "DIR", help = STORE_HELP)]
    pub(super) store: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every argument of every command, positional or not, says what it is.
    #[test]
    fn every_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if id == "help" || id == "version" || a.is_hide_set() {
                    continue;
                }
                if a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "lexrun", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
    }

    /// `--store` is described one way by every command that opens the store.
    #[test]
    fn the_store_default_is_said_one_way() {
        let cli = super::Cli::command();
        let opens = ["plan", "run", "why", "audit", "sources", "cache", "runs"];
        for sub in cli
            .get_subcommands()
            .filter(|s| opens.contains(&s.get_name()))
        {
            for a in sub.get_arguments().filter(|a| a.get_id() == "store") {
                let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert_eq!(help, super::STORE_HELP, "lexrun {} --store", sub.get_name());
            }
        }
    }
}
