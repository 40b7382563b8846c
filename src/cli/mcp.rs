//! `lexrun mcp`: a Model Context Protocol server on standard input and output, so an agent
//! orchestrator calls lexrun's commands as tools with typed arguments and gets structured
//! results. Each tool calls what the command of the same name calls. Every path a tool is
//! given must lie inside the roots the client declares (MCP `roots`) or, when it declares
//! none, inside the folder the server was started in — on top of every rule the command
//! applies (a matter's links, the workflow library, the intake guard).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use camino::Utf8PathBuf;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, Implementation, ListResourcesResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{tool, tool_handler, tool_router, ErrorData, Peer, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::output::exit;

mod roots;

use roots::inside;

/// The longest path argument taken: far beyond any real path.
const MAX_PATH: usize = 4096;

/// The longest JSON-RPC message read: a larger one is dropped unread (and logged on stderr).
/// Anything smaller reaches the tool, whose arguments are checked and refused with a message.
const MAX_MESSAGE: usize = 256 << 20;

/// Runs the server until the client closes standard input; every run still under way is
/// cancelled and its finished steps kept before the process ends.
pub(super) fn cmd_mcp() -> u8 {
    let start = match std::env::current_dir().and_then(|d| d.canonicalize()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: cannot resolve the current folder: {e}");
            return exit::USAGE;
        }
    };
    let rt = match super::output::runtime(Some(2)) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let server = Lexrun::new(start);
    let runs = server.runs.clone();
    let served = rt.block_on(async move {
        use rmcp::ServiceExt;
        let transport = rmcp::transport::async_rw::AsyncRwTransport::<RoleServer, _, _>::new(
            tokio::io::stdin(),
            tokio::io::stdout(),
        )
        .with_max_line_length(MAX_MESSAGE);
        let service = server
            .serve(transport)
            .await
            .map_err(std::io::Error::other)?;
        service.waiting().await.map_err(std::io::Error::other)?;
        Ok::<(), std::io::Error>(())
    });
    // Runs stop on their own once cancelled; their records are written before exit.
    let handles: Vec<_> = runs
        .lock()
        .map(|mut r| r.drain(..).collect())
        .unwrap_or_default();
    for h in handles {
        let _ = h.join();
    }
    match served {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("error: the MCP connection failed: {e}");
            exit::USAGE
        }
    }
}

/// The server: where it started, the client's roots once asked, and the runs under way.
#[derive(Clone)]
struct Lexrun {
    start: PathBuf,
    roots: Arc<Mutex<Option<Vec<PathBuf>>>>,
    runs: Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>,
    /// What the runs of this session wrote, by URI: record, report, review page, outputs.
    files: Arc<Mutex<std::collections::BTreeMap<String, PathBuf>>>,
}

/// A tool that could not do what was asked: a stable code, the message, the exit code the
/// command line gives for the same failure, and details (diagnostics, verdicts) when any.
#[derive(Debug)]
struct Refusal {
    code: &'static str,
    message: String,
    exit_code: u8,
    details: Option<Value>,
}

impl Refusal {
    fn new(code: &'static str, message: impl Into<String>, exit_code: u8) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            exit_code,
            details: None,
        }
    }

    fn usage(message: impl Into<String>) -> Refusal {
        Refusal::new("usage", message, exit::USAGE)
    }

    fn with(mut self, details: Value) -> Refusal {
        self.details = Some(details);
        self
    }

    fn into_result(self) -> CallToolResult {
        let mut error = json!({
            "code": self.code,
            "message": self.message,
            "exit_code": self.exit_code,
        });
        if let Some(d) = self.details {
            error["details"] = d;
        }
        CallToolResult::structured_error(json!({ "error": error }))
    }
}

type Outcome = Result<Value, Refusal>;

fn respond(outcome: Outcome) -> Result<CallToolResult, ErrorData> {
    Ok(match outcome {
        Ok(v) => CallToolResult::structured(v),
        Err(r) => r.into_result(),
    })
}

/// Runs CPU or disk work off the protocol's threads.
async fn blocking(f: impl FnOnce() -> Outcome + Send + 'static) -> Outcome {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(Refusal::new("internal", format!("internal error: {e}"), 2)))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    /// The .lex or .test.lex files to check.
    files: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PlanArgs {
    /// The .lex workflow.
    file: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VerifyArgs {
    /// The draft to check (Markdown or plain text).
    draft: String,
    /// Source files or folders (PDF, scan, photo, Word, email, spreadsheet, web page, text).
    sources: Vec<String>,
    /// Bates prefixes of the sources, e.g. SMITH (default: those stamped on the pages).
    #[serde(default)]
    bates_prefix: Vec<String>,
    /// Reporter abbreviations to accept beyond the citation catalogue.
    #[serde(default)]
    allow_reporter: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SourcesArgs {
    /// The .lex workflow whose sources are checked.
    file: String,
    /// Matter folders (default: the workflow's `matter`, else its own folder).
    #[serde(default)]
    matter: Vec<String>,
    /// The store (default: as `lexrun sources`).
    store: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TextArgs {
    /// The files to read.
    files: Vec<String>,
    /// Tesseract's language for OCR (default eng).
    lang: Option<String>,
    /// Resolution for OCR rendering (default 300).
    dpi: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BatesArgs {
    /// The Bates prefix, e.g. SMITH.
    prefix: String,
    /// The files, in the order they are numbered.
    inputs: Vec<String>,
    /// The folder for the stamped copies and `bates-map.json`.
    out: String,
    /// The first number (default 1).
    start: Option<u64>,
    /// Digits in each number (default 6).
    width: Option<u32>,
    /// Text after the number, e.g. -CONFIDENTIAL.
    suffix: Option<String>,
    /// bottom-right (default), bottom-center, bottom-left, top-right, top-center or top-left.
    position: Option<String>,
    /// Font size in points (default 9).
    font_size: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AuditArgs {
    /// The .lex workflow.
    file: String,
    /// The run (default: the last).
    run: Option<String>,
    /// The store (default: as `lexrun audit`).
    store: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    /// The .lex workflow.
    file: String,
    /// Matter folders (default: the workflow's `matter`, else its own folder).
    #[serde(default)]
    matter: Vec<String>,
    /// Where runs and outputs go (default: `out` beside the workflow).
    out: Option<String>,
    /// Pool overrides, each `POOL=[KIND:]URL` (`*=URL` for every pool not named).
    #[serde(default)]
    endpoint: Vec<String>,
    /// Serve every model call from this cassette; no server is needed.
    replay: Option<String>,
    /// Save every model exchange of the run in this cassette.
    record: Option<String>,
    /// The store (default: as `lexrun run`).
    store: Option<String>,
    /// Call every model stage, whatever the cache holds.
    #[serde(default)]
    no_cache: bool,
    /// Ask no model server: every model stage from the cache.
    #[serde(default)]
    offline: bool,
}

#[tool_router]
impl Lexrun {
    fn new(start: PathBuf) -> Lexrun {
        Lexrun {
            start,
            roots: Arc::new(Mutex::new(None)),
            runs: Arc::new(Mutex::new(Vec::new())),
            files: Arc::new(Mutex::new(std::collections::BTreeMap::new())),
        }
    }

    #[tool(
        description = "Check .lex workflow files (and .test.lex tests): every problem with its code (see `lexrun explain CODE`), severity, message, file, line and column. `ok` is false when any file has errors.",
        annotations(read_only_hint = true)
    )]
    async fn check(
        &self,
        Parameters(a): Parameters<CheckArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&peer).await;
        let files = match self.inputs(&roots, "files", &a.files) {
            Ok(f) => f,
            Err(r) => return respond(Err(r)),
        };
        respond(blocking(move || Ok(check_files(&files))).await)
    }

    #[tool(
        description = "Check a .lex workflow and give its execution plan as JSON (steps, pools, models, dependencies). A workflow with errors is refused with its diagnostics.",
        annotations(read_only_hint = true)
    )]
    async fn plan(
        &self,
        Parameters(a): Parameters<PlanArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&peer).await;
        let file = match self.input(&roots, "file", &a.file) {
            Ok(f) => f,
            Err(r) => return respond(Err(r)),
        };
        respond(
            blocking(move || {
                let plan = checked_plan(&file)?;
                serde_json::from_str(&plan.to_json())
                    .map_err(|e| Refusal::new("internal", e.to_string(), exit::USAGE))
            })
            .await,
        )
    }

    #[tool(
        description = "Check every citation, date, Bates number, quotation and amount in a draft against the sources: each claim with its status (supported, unsupported, contradicted, …) and evidence, as `lexrun verify --json` gives them. `exit_code` is 0 when every claim is supported.",
        annotations(read_only_hint = true)
    )]
    async fn verify(
        &self,
        Parameters(a): Parameters<VerifyArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&peer).await;
        let (draft, sources) = match self
            .input(&roots, "draft", &a.draft)
            .and_then(|d| Ok((d, self.inputs(&roots, "sources", &a.sources)?)))
        {
            Ok(x) => x,
            Err(r) => return respond(Err(r)),
        };
        if sources.is_empty() {
            return respond(Err(Refusal::usage(
                "`sources` is empty: give the source files or folders to check the draft against",
            )));
        }
        respond(
            blocking(move || {
                let done = super::verify::verify_draft(
                    &sources,
                    (a.bates_prefix, Vec::new()),
                    &a.allow_reporter,
                    None,
                    &draft,
                )
                .map_err(|e| Refusal::new("not_verified", e.message, e.code))?;
                let mut v: Value = serde_json::from_str(&crate::verify::report::json(&done.v))
                    .map_err(|e| Refusal::new("internal", e.to_string(), exit::USAGE))?;
                v["exit_code"] = json!(super::verify::verdict_code(&done.v));
                Ok(v)
            })
            .await,
        )
    }

    #[tool(
        description = "The intake guard's verdict on every source file of a workflow's matters: admitted, or refused (a copy of lexrun's own output, a file carrying claims a model invented, unreadable), with why. `refused` is true when any is.",
        annotations(read_only_hint = true)
    )]
    async fn sources(
        &self,
        Parameters(a): Parameters<SourcesArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&peer).await;
        let checked = (|| {
            let file = self.input(&roots, "file", &a.file)?;
            let matters = self.inputs(&roots, "matter", &a.matter)?;
            let store = self.optional(&roots, "store", a.store.as_deref())?;
            Ok((file, matters, store))
        })();
        let (file, matters, store) = match checked {
            Ok(x) => x,
            Err(r) => return respond(Err(r)),
        };
        let this = self.clone();
        respond(
            blocking(move || {
                let plan = checked_plan(&file)?;
                let dir = folder_of(&file);
                this.default_matter(&roots, &plan, &dir, &matters)?;
                let st = open_store(store.as_deref(), &dir, &plan)?;
                let verdicts =
                    crate::run::check_sources(&plan, &dir, &matters, &st).map_err(run_refusal)?;
                let refused = verdicts.iter().any(|v| v.blocked());
                Ok(json!({
                    "refused": refused,
                    "exit_code": if refused { exit::ERRORS } else { exit::OK },
                    "files": verdicts,
                }))
            })
            .await,
        )
    }

    #[tool(
        description = "The text of each page of any source (PDF, scan, photo, Word, email, spreadsheet, web page, text) with its Bates stamp, OCR where a page has no text, as `lexrun text --json`.",
        annotations(read_only_hint = true)
    )]
    async fn text(
        &self,
        Parameters(a): Parameters<TextArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&peer).await;
        let files = match self.inputs(&roots, "files", &a.files) {
            Ok(f) => f,
            Err(r) => return respond(Err(r)),
        };
        let lang = a.lang.unwrap_or_else(|| "eng".into());
        let dpi = a.dpi.unwrap_or(300);
        respond(blocking(move || Ok(text_of(&files, lang, dpi))).await)
    }

    #[tool(
        description = "Stamp Bates numbers on files, numbering continuously across them in order; the stamped copies and bates-map.json go to `out`. Inputs are never modified. Gives the page map."
    )]
    async fn bates(
        &self,
        Parameters(a): Parameters<BatesArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&peer).await;
        let checked = (|| {
            let inputs = self.inputs(&roots, "inputs", &a.inputs)?;
            let out = self.output(&roots, "out", &a.out)?;
            Ok((inputs, out))
        })();
        let (inputs, out) = match checked {
            Ok(x) => x,
            Err(r) => return respond(Err(r)),
        };
        if inputs.is_empty() {
            return respond(Err(Refusal::usage(
                "`inputs` is empty: give the files to stamp",
            )));
        }
        let args = super::args::BatesArgs {
            prefix: a.prefix,
            start: a.start.unwrap_or(1),
            width: a.width.unwrap_or(6),
            suffix: a.suffix.unwrap_or_default(),
            position: a.position.unwrap_or_else(|| "bottom-right".into()),
            font_size: a.font_size.unwrap_or(9.0),
            out,
            inputs,
        };
        respond(
            blocking(move || {
                let opts = super::exhibits::bates_options(&args).map_err(Refusal::usage)?;
                let map = crate::exhibits::bates::stamp_files(&args.inputs, &args.out, &opts)
                    .map_err(|e| Refusal::usage(e.to_string()))?;
                Ok(json!({
                    "pages": map.len(),
                    "first": map.first().map(|s| s.bates.clone()),
                    "last": map.last().map(|s| s.bates.clone()),
                    "page_map": args.out.join("bates-map.json"),
                    "stamps": map,
                }))
            })
            .await,
        )
    }

    #[tool(
        description = "The chain of custody of a run (default: the last) from the ledger: its sources with their hashes, and for every output the stage, model, inputs, plan and time, and the production volumes it wrote, as `lexrun audit --json`.",
        annotations(read_only_hint = true)
    )]
    async fn audit(
        &self,
        Parameters(a): Parameters<AuditArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&peer).await;
        let checked = (|| {
            let file = self.input(&roots, "file", &a.file)?;
            let store = self.optional(&roots, "store", a.store.as_deref())?;
            Ok((file, store))
        })();
        let (file, store) = match checked {
            Ok(x) => x,
            Err(r) => return respond(Err(r)),
        };
        respond(
            blocking(move || {
                let plan = checked_plan(&file)?;
                let dir = folder_of(&file);
                let st = open_store(store.as_deref(), &dir, &plan)?;
                let f8 = camino::Utf8Path::from_path(&file)
                    .ok_or_else(|| Refusal::usage("file: the path is not UTF-8"))?;
                let (_, info, _, _) =
                    super::store::audit_of(&st, &plan.workflow.name, f8, a.run.as_deref())
                        .map_err(|e| Refusal::new("no_run", e, exit::USAGE))?;
                Ok(info)
            })
            .await,
        )
    }

    #[tool(
        description = "Run a workflow over its matters against its model servers (or a cassette with `replay`) and give the run record: each matter's steps, statuses, verification counts and outputs, and `exit_code` as `lexrun run` exits (0 every output written, 1 a step failed or was blocked, 3 stopped by a gate, 130 cancelled). Sends a progress notification as each stage finishes when the request carries a progress token; cancelling the request stops the run and keeps every finished stage."
    )]
    async fn run(
        &self,
        Parameters(a): Parameters<RunArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let roots = self.roots(&ctx.peer).await;
        let prepared = self.prepare_run(&roots, a);
        let (plan, dir, opts, keep) = match prepared {
            Ok(x) => x,
            Err(r) => return respond(Err(r)),
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Value)>();
        let mut opts = opts;
        opts.events = crate::run::events::Mode::Quiet;
        opts.watch = Some(crate::run::events::Watch {
            event: Arc::new(move |name, v| {
                let _ = tx.send((name.to_string(), v.clone()));
            }),
            stop: ctx.ct.clone(),
        });
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let handle = std::thread::spawn(move || {
            let outcome = run_blocking(&plan, &dir, &opts, keep);
            let _ = done_tx.send(outcome);
        });
        if let Ok(mut runs) = self.runs.lock() {
            runs.retain(|h| !h.is_finished());
            runs.push(handle);
        }
        let token = ctx.meta.get_progress_token();
        let mut finished = 0u32;
        // Events until the run ends (the sender is dropped with the run's options).
        while let Some((name, v)) = rx.recv().await {
            let Some(token) = &token else { continue };
            if name != "stage_finished" {
                continue;
            }
            finished += 1;
            let message = format!(
                "{} {}",
                v["stage"].as_str().unwrap_or(""),
                v["status"].as_str().unwrap_or("")
            );
            let _ = ctx
                .peer
                .notify_progress(
                    ProgressNotificationParam::new(token.clone(), f64::from(finished))
                        .with_message(message),
                )
                .await;
        }
        let mut outcome = done_rx.await.unwrap_or_else(|_| {
            Err(Refusal::new(
                "internal",
                "internal error: the run ended without a record",
                exit::USAGE,
            ))
        });
        if let Ok(rec) = &mut outcome {
            let files = run_files(rec);
            rec["resources"] = json!(files.keys().collect::<Vec<_>>());
            if let Ok(mut all) = self.files.lock() {
                all.extend(files);
            }
        }
        respond(outcome)
    }
}

#[tool_handler]
impl ServerHandler for Lexrun {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
            .with_server_info(Implementation::new("lexrun", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "lexrun checks, plans, runs and verifies legal workflows (.lex files) on the firm's own model servers. Every path must lie inside the client's roots (or the folder the server started in). Errors come back as {\"error\": {\"code\", \"message\", \"exit_code\"}}; `lexrun explain CODE` explains a diagnostic code.",
            )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let files = self.files.lock().map(|f| f.clone()).unwrap_or_default();
        Ok(ListResourcesResult::with_all_items(
            files
                .iter()
                .map(|(uri, path)| {
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let mut r = Resource::new(uri.clone(), name);
                    r.mime_type = Some(mime_of(path).into());
                    r
                })
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let path = self
            .files
            .lock()
            .ok()
            .and_then(|f| f.get(&request.uri).cloned())
            .ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!(
                        "no resource `{}`: resources are the files the runs of this session wrote (see `resources/list` or a run's `resources`)",
                        request.uri
                    ),
                    None,
                )
            })?;
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ErrorData::invalid_params(
                format!(
                    "cannot read `{}` as text ({e}); open it from its path",
                    path.display()
                ),
                None,
            )
        })?;
        Ok(
            ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
                uri: request.uri,
                mime_type: Some(mime_of(&path).into()),
                text,
                meta: None,
            }])
            .into(),
        )
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if let Ok(mut r) = self.roots.lock() {
            *r = None;
        }
    }
}

impl Lexrun {
    /// Without matters given, the workflow's own `matter` (or folder) must be inside the
    /// roots too.
    fn default_matter(
        &self,
        roots: &[PathBuf],
        plan: &crate::plan::Plan,
        dir: &Path,
        given: &[PathBuf],
    ) -> Result<(), Refusal> {
        if !given.is_empty() {
            return Ok(());
        }
        let m = match &plan.workflow.matter {
            Some(m) => dir.join(m),
            None => dir.to_path_buf(),
        };
        if let Ok(real) = m.canonicalize() {
            inside(roots, "matter", &m.display().to_string(), &real)?;
        }
        Ok(())
    }

    /// Everything `lexrun run` does before the run itself, with the same rules, as values.
    fn prepare_run(
        &self,
        roots: &[PathBuf],
        a: RunArgs,
    ) -> Result<(crate::plan::Plan, PathBuf, crate::run::Options, usize), Refusal> {
        let file = self.input(roots, "file", &a.file)?;
        let matters = self.inputs(roots, "matter", &a.matter)?;
        let out = self.optional(roots, "out", a.out.as_deref())?;
        let replay = a
            .replay
            .as_deref()
            .map(|r| self.input(roots, "replay", r))
            .transpose()?;
        let record = self.optional(roots, "record", a.record.as_deref())?;
        let store = self.optional(roots, "store", a.store.as_deref())?;
        if replay.is_some() && record.is_some() {
            return Err(Refusal::usage(
                "`replay` and `record` exclude each other: replay a cassette or record one",
            ));
        }
        if a.offline && (a.no_cache || record.is_some()) {
            return Err(Refusal::usage(
                "`offline` answers every model stage from the cache: it excludes `no_cache` and `record`",
            ));
        }
        let plan = checked_plan(&file)?;
        let dir = folder_of(&file);
        self.default_matter(roots, &plan, &dir, &matters)?;
        let out = match out {
            Some(o) => o,
            None => {
                let o = dir.join("out");
                self.output(roots, "out", &o.display().to_string())?
            }
        };
        let mut endpoints = crate::backend::endpoint::Overrides::new();
        for e in &a.endpoint {
            let (pool, o) = crate::backend::endpoint::parse_override(e)
                .map_err(|why| Refusal::usage(format!("endpoint: {why}")))?;
            endpoints.insert(pool, o);
        }
        let utf8 = Utf8PathBuf::from_path_buf(file.clone())
            .map_err(|p| Refusal::usage(format!("file: `{}` is not UTF-8", p.display())))?;
        let mut args = super::args::RunArgs {
            file: utf8,
            matter: matters,
            out: Some(out),
            endpoint: a.endpoint,
            json: false,
            retries: 4,
            idle_timeout: 300,
            load_timeout: 1800,
            backoff_ms: 500,
            record: None,
            replay: None,
            replay_or_record: None,
            store,
            no_cache: a.no_cache,
            refresh: Vec::new(),
            keep_runs: 20,
            offline: a.offline,
        };
        args.replay = replay;
        args.record = record;
        let ledger = super::open::ledger_url(Some(&plan));
        super::open::open_at(args.store.as_deref(), &dir, ledger).map_err(|e| {
            use super::failure::Failure;
            Refusal::new("store", e.to_string(), e.exit_code())
        })?;
        let opts = super::run::run_options(&args, &plan, &dir, endpoints);
        Ok((plan, dir, opts, args.keep_runs))
    }
}

/// The run on a thread of its own with its own runtime, as `lexrun run` runs it; the record
/// with its exit code and where `run.json` is.
fn run_blocking(
    plan: &crate::plan::Plan,
    dir: &Path,
    opts: &crate::run::Options,
    keep: usize,
) -> Outcome {
    let rt = super::output::runtime(Some(1))
        .map_err(|code| Refusal::new("internal", "cannot start the runtime", code))?;
    let rec = rt
        .block_on(crate::run::run(plan, dir, opts))
        .map_err(run_refusal)?;
    crate::run::prune_runs(&opts.out, &rec.workflow, keep);
    let mut v = serde_json::to_value(&rec)
        .map_err(|e| Refusal::new("internal", e.to_string(), exit::USAGE))?;
    v["exit_code"] = json!(rec.exit_code());
    v["record"] = json!(opts.out.join(&rec.run_id).join("run.json"));
    Ok(v)
}

/// The files a run wrote, by URI: `lexrun://RUN/PATH` for each file of its run folder
/// (record, report, review page, stage texts) and `lexrun://RUN/output/NAME` for its outputs.
fn run_files(rec: &Value) -> std::collections::BTreeMap<String, PathBuf> {
    let mut files = std::collections::BTreeMap::new();
    let (Some(run), Some(record)) = (rec["run_id"].as_str(), rec["record"].as_str()) else {
        return files;
    };
    let folder = Path::new(record).parent().unwrap_or(Path::new(""));
    if let Ok(all) = crate::confine::walk(folder, &|_| false, &|_| true) {
        for p in all {
            if let Ok(rel) = p.strip_prefix(folder) {
                files.insert(format!("lexrun://{run}/{}", rel.display()), p.clone());
            }
        }
    }
    let out = folder.parent().unwrap_or(Path::new(""));
    for m in rec["matters"].as_array().into_iter().flatten() {
        for o in m["outputs"].as_array().into_iter().flatten() {
            let Some(p) = o["path"].as_str() else {
                continue;
            };
            let p = out.join(p);
            if p.is_file() && !o["missing"].as_bool().unwrap_or(false) {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                files.insert(
                    format!("lexrun://{run}/output/{}", name.unwrap_or_default()),
                    p,
                );
            }
        }
    }
    files
}

fn mime_of(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()) {
        Some("md") => "text/markdown",
        Some("html") => "text/html",
        Some("json" | "jsonl") => "application/json",
        Some("txt") => "text/plain",
        Some("pdf") => "application/pdf",
        Some("docx") => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        _ => "application/octet-stream",
    }
}

fn run_refusal(e: crate::run::RunError) -> Refusal {
    use super::failure::Failure;
    use crate::run::RunError;
    let code = e.exit_code();
    match &e {
        RunError::Refused(verdicts) => Refusal::new("refused_evidence", e.to_string(), code)
            .with(serde_json::to_value(verdicts).unwrap_or_default()),
        RunError::Confined(crate::confine::ConfineError::Escape(_)) => {
            Refusal::new("escape", e.to_string(), code)
        }
        RunError::NoMatter(_) | RunError::NoFiles(..) => {
            Refusal::new("not_found", e.to_string(), code)
        }
        _ => Refusal::new("run_error", e.to_string(), code),
    }
}

fn folder_of(file: &Path) -> PathBuf {
    file.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn utf8(p: &Path) -> Result<Utf8PathBuf, Refusal> {
    Utf8PathBuf::from_path_buf(p.to_path_buf())
        .map_err(|p| Refusal::usage(format!("`{}` is not a UTF-8 path", p.display())))
}

/// The workflow checked and lowered; with errors, refused with its diagnostics.
fn checked_plan(file: &Path) -> Result<crate::plan::Plan, Refusal> {
    let f = utf8(file)?;
    let checked = crate::check::check_path(&f);
    match checked.workflow.as_ref().filter(|_| !checked.has_errors()) {
        Some(w) => Ok(crate::plan::lower(w)),
        None => {
            let code = if checked.unreadable {
                exit::USAGE
            } else {
                exit::ERRORS
            };
            Err(Refusal::new(
                "check_failed",
                format!(
                    "{f} has errors ({}); see the diagnostics, or call `check`",
                    super::output::summary(&checked)
                ),
                code,
            )
            .with(json!(diagnostics(&checked))))
        }
    }
}

fn open_store(
    store: Option<&Path>,
    dir: &Path,
    plan: &crate::plan::Plan,
) -> Result<crate::store::Store, Refusal> {
    super::open::open_at(store, dir, super::open::ledger_url(Some(plan))).map_err(|e| {
        use super::failure::Failure;
        Refusal::new("store", e.to_string(), e.exit_code())
    })
}

/// `check` on each file, as values: the exit code `lexrun check` gives and each diagnostic.
fn check_files(files: &[PathBuf]) -> Value {
    let mut worst = exit::OK;
    let mut out = Vec::new();
    for f in files {
        let shown = f.display().to_string();
        let f = Utf8PathBuf::from(shown.clone());
        let checked = if f.as_str().ends_with(".test.lex") {
            crate::check::check_test_path(&f)
        } else {
            crate::check::check_path(&f)
        };
        let code = if checked.unreadable {
            exit::USAGE
        } else if checked.has_errors() {
            exit::ERRORS
        } else {
            exit::OK
        };
        worst = worst.max(code);
        let errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
        out.push(json!({
            "file": shown,
            "ok": code == exit::OK,
            "errors": errors,
            "warnings": checked.diagnostics.len() - errors,
            "diagnostics": diagnostics(&checked),
        }));
    }
    json!({ "ok": worst == exit::OK, "exit_code": worst, "files": out })
}

/// A check's diagnostics as JSON: code, severity, message, file, 1-based line and column of
/// the first label, every label, help and notes.
fn diagnostics(checked: &crate::check::Checked) -> Vec<Value> {
    let place = |file: Option<usize>, at: usize| -> Value {
        let Some(id) = file.filter(|&i| i < checked.sources.len()) else {
            return json!({});
        };
        let src = checked.sources.get(id);
        let at = at.min(src.text.len());
        let before = src.text.get(..at).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        json!({ "file": src.name, "line": line, "column": column })
    };
    checked
        .diagnostics
        .iter()
        .map(|d| {
            let mut v = json!({
                "code": d.code.id(),
                "severity": d.severity(),
                "message": d.message,
            });
            let first = place(d.file, d.labels.first().map_or(0, |l| l.span.start));
            if let Some(o) = first.as_object() {
                for (k, x) in o {
                    v[k] = x.clone();
                }
            }
            v["labels"] = d
                .labels
                .iter()
                .map(|l| {
                    let mut p = place(d.file, l.span.start);
                    p["text"] = json!(l.text);
                    p
                })
                .collect();
            if let Some(h) = &d.help {
                v["help"] = json!(h);
            }
            if !d.notes.is_empty() {
                v["notes"] = d
                    .notes
                    .iter()
                    .map(|n| {
                        let mut p = place(Some(n.file), n.span.start);
                        p["text"] = json!(n.text);
                        p
                    })
                    .collect();
            }
            v
        })
        .collect()
}

/// `text --json` as values: every page of every file with its Bates stamp; files that cannot
/// be read are named with why.
fn text_of(files: &[PathBuf], lang: String, dpi: u32) -> Value {
    use crate::sources::pdf_text as text;
    let opts = crate::sources::Options {
        scan: text::Options {
            lang,
            dpi,
            cache: text::default_cache(),
            ocr_optional: false,
        },
    };
    let mut pages = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let shown = f.display().to_string();
        match crate::sources::read(f, &opts) {
            Ok(docs) => {
                for d in docs {
                    let file = d.shown(&shown);
                    if let Some(why) = &d.unreadable {
                        pages.push(json!({"file": file, "page": 0, "bates": null, "from": "unreadable", "text": "", "unreadable": why}));
                    }
                    for p in &d.pages {
                        pages.push(json!({
                            "file": file,
                            "page": p.page,
                            "bates": crate::sources::stamp_of(&p.text),
                            "from": p.from,
                            "text": p.text,
                        }));
                    }
                }
            }
            Err(e) => errors.push(json!({"file": shown, "error": e.to_string()})),
        }
    }
    json!({
        "exit_code": if errors.is_empty() { exit::OK } else { exit::USAGE },
        "pages": pages,
        "errors": errors,
    })
}
