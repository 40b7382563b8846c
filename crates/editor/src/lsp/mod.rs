//! `lexrun lsp`: a language server over standard input and output (or a pipe or a socket,
//! as a client may ask with `--pipe` or `--socket`).
//!
//! One thread reads messages ([`transport`]) and hands them to the main thread in order; a
//! message that is not one is answered with the protocol's error (-32700 or -32600) and the
//! server reads on. The lifecycle is the protocol's: requests before `initialize` are
//! answered -32002, requests after `shutdown` -32600, and `exit` ends the server with 0 after
//! `shutdown` and 1 without.
//!
//! Checking is debounced. An edit to a document whose diagnostics are up to date is checked
//! at once; an edit that comes while an earlier one still waits for its check starts a burst,
//! and the document is checked once no edit has come for [`QUIET`]. Checks run one at a time,
//! and a check whose document changed while it ran is not published (its result is stale).
//! So a burst of edits costs two checks, the first and the last, however long it is. A
//! request about a document checks it first if it changed. Each handler runs behind
//! `catch_unwind`: a bug answers one request with an error and the server keeps serving.

mod analysis;
mod features;
mod index;
mod lines;
pub mod transport;

use std::collections::HashMap;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use lsp_server::{ErrorCode, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest,
    InlayHintRequest, PrepareRenameRequest, References, Rename, Request as _,
    SemanticTokensFullRequest, SignatureHelpRequest, WorkspaceSymbolRequest,
};
use lsp_types::{
    CompletionOptions, GotoDefinitionResponse, OneOf, PrepareRenameResponse,
    PublishDiagnosticsParams, RenameOptions, SemanticTokens, SemanticTokensFullOptions,
    SemanticTokensLegend, SemanticTokensOptions, SemanticTokensResult,
    SemanticTokensServerCapabilities, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Url,
};
use serde_json::{json, Value};

use crate::plan::workflow::Workflow;
use analysis::Analysis;
use lines::Lines;
use transport::Incoming;

/// How long a burst of edits must pause before the document is checked.
pub const QUIET: Duration = Duration::from_millis(80);

/// The protocol's error for a request that comes before `initialize`.
const SERVER_NOT_INITIALIZED: i32 = -32002;

/// Where the server speaks with its client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    /// A Unix socket (named pipe) the client listens on.
    Pipe(String),
    /// A TCP port on this machine the client listens on.
    Socket(u16),
}

struct Doc {
    text: String,
    version: i32,
    /// The check of `text`, once one was asked for.
    analysis: Option<Analysis>,
    /// Whether `analysis` is of the current `text`.
    fresh: bool,
    /// Whether the diagnostics of the current `text` went out.
    published: bool,
    /// When the document is due for a check, if it waits for one.
    due: Option<Instant>,
    /// The workflow of the last check without errors, so hovers keep their figures while a
    /// line is half typed.
    last_good: Option<Workflow>,
    /// The parse of its declarations (and its imports'), kept for the next check.
    reuse: crate::syntax::Reuse,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before `initialize`.
    Waiting,
    Running,
    /// After `shutdown`: only `exit` is expected.
    ShutDown,
}

struct Server {
    out: Box<dyn Write>,
    incoming: mpsc::Receiver<Incoming>,
    docs: HashMap<Url, Doc>,
    phase: Phase,
    /// Checks run so far (`lexrun/stats` answers it).
    checks: u64,
    /// Checks whose result was dropped because the document changed meanwhile.
    dropped: u64,
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), " ".into()]),
            ..Default::default()
        }),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        signature_help_provider: Some(lsp_types::SignatureHelpOptions {
            trigger_characters: Some(vec!["{".into(), "#".into(), " ".into()]),
            retrigger_characters: None,
            work_done_progress_options: Default::default(),
        }),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(lsp_types::CodeActionProviderCapability::Options(
            lsp_types::CodeActionOptions {
                code_action_kinds: Some(vec![lsp_types::CodeActionKind::QUICKFIX]),
                ..Default::default()
            },
        )),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: features::TOKEN_TYPES.to_vec(),
                    token_modifiers: Vec::new(),
                },
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: Default::default(),
            },
        )),
        ..Default::default()
    }
}

/// Runs the server until the client says `exit` (or its input ends, or the process
/// `client_pid` is gone); returns the process exit code.
pub fn run(transport: Transport, client_pid: Option<u32>) -> u8 {
    let (input, out): (Box<dyn std::io::Read + Send>, Box<dyn Write>) = match &transport {
        Transport::Stdio => (Box::new(std::io::stdin()), Box::new(std::io::stdout())),
        Transport::Pipe(path) => match std::os::unix::net::UnixStream::connect(path) {
            Ok(s) => match s.try_clone() {
                Ok(r) => (Box::new(r), Box::new(s)),
                Err(e) => return cannot_connect(&format!("the pipe `{path}`"), &e),
            },
            Err(e) => return cannot_connect(&format!("the pipe `{path}`"), &e),
        },
        Transport::Socket(port) => match std::net::TcpStream::connect(("127.0.0.1", *port)) {
            Ok(s) => match s.try_clone() {
                Ok(r) => (Box::new(r), Box::new(s)),
                Err(e) => return cannot_connect(&format!("port {port}"), &e),
            },
            Err(e) => return cannot_connect(&format!("port {port}"), &e),
        },
    };
    let (tx, rx) = mpsc::channel();
    let reader_tx = tx.clone();
    std::thread::spawn(move || {
        let mut r = transport::Reader::new(std::io::BufReader::with_capacity(1 << 16, input));
        while let Some(m) = r.next_message() {
            if reader_tx.send(m).is_err() {
                break;
            }
        }
    });
    if let Some(pid) = client_pid {
        watch_client(pid, tx);
    } else {
        drop(tx);
    }
    let mut server = Server {
        out,
        incoming: rx,
        docs: HashMap::new(),
        phase: Phase::Waiting,
        checks: 0,
        dropped: 0,
    };
    server.serve()
}

fn cannot_connect(what: &str, e: &std::io::Error) -> u8 {
    eprintln!("error: lexrun lsp cannot connect to {what}: {e}\n  help: start `lexrun lsp` from the editor that listens there, or use `lexrun lsp --stdio`");
    2
}

/// Ends the server (as if its input ended) once the editor's process is gone.
fn watch_client(pid: u32, tx: mpsc::Sender<Incoming>) {
    let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(3));
        if !proc.exists() {
            let _ = tx.send(Incoming::Bad {
                code: 0,
                message: String::new(),
            });
            return;
        }
    });
}

/// What the main loop does next.
enum Step {
    Go,
    Exit(u8),
}

impl Server {
    fn serve(&mut self) -> u8 {
        loop {
            let next = match self.next_due() {
                Some(due) => {
                    let wait = due.saturating_duration_since(Instant::now());
                    match self.incoming.recv_timeout(wait) {
                        Ok(m) => Some(m),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return self.ended(),
                    }
                }
                None => match self.incoming.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return self.ended(),
                },
            };
            if let Some(m) = next {
                if let Step::Exit(code) = self.take(m) {
                    return code;
                }
            }
            // Take whatever else is already waiting before checking anything.
            if let Step::Exit(code) = self.drain() {
                return code;
            }
            if let Step::Exit(code) = self.flush() {
                return code;
            }
        }
    }

    /// The exit code when the input ends without `exit`.
    fn ended(&self) -> u8 {
        u8::from(self.phase != Phase::ShutDown)
    }

    fn drain(&mut self) -> Step {
        while let Ok(m) = self.incoming.try_recv() {
            if let Step::Exit(code) = self.take(m) {
                return Step::Exit(code);
            }
        }
        Step::Go
    }

    fn next_due(&self) -> Option<Instant> {
        self.docs.values().filter_map(|d| d.due).min()
    }

    fn send(&mut self, msg: &Value) {
        let _ = transport::write(&mut *self.out, msg);
    }

    fn error(&mut self, id: Value, code: i32, message: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }

    /// Handles one thing read.
    fn take(&mut self, m: Incoming) -> Step {
        let mut m = match m {
            Incoming::Message(m) => m,
            // The editor's process is gone.
            Incoming::Bad { code: 0, .. } => return Step::Exit(self.ended()),
            Incoming::Bad { code, message } => {
                self.error(Value::Null, code, &message);
                return Step::Go;
            }
        };
        let id = m.remove("id");
        let method = match m.remove("method") {
            Some(Value::String(s)) => Some(s),
            None => None,
            Some(_) => {
                self.error(
                    id.filter(valid_id).unwrap_or(Value::Null),
                    transport::INVALID_REQUEST,
                    "a message's `method` must be a string",
                );
                return Step::Go;
            }
        };
        let params = m.remove("params").unwrap_or(Value::Null);
        match (id, method) {
            // A response to a request of ours (the server sends none), passed over.
            (Some(_), None) if m.contains_key("result") || m.contains_key("error") => Step::Go,
            (Some(id), Some(method)) if valid_id(&id) => {
                self.on_request(id, method, params);
                Step::Go
            }
            (Some(id), _) if !valid_id(&id) => {
                self.error(
                    Value::Null,
                    transport::INVALID_REQUEST,
                    "a request's `id` must be a number or a string",
                );
                Step::Go
            }
            (None, Some(method)) => self.on_notification(method, params),
            (id, _) => {
                self.error(
                    id.unwrap_or(Value::Null),
                    transport::INVALID_REQUEST,
                    "a message needs a `method` (a request or notification) or a `result` or `error` (a response)",
                );
                Step::Go
            }
        }
    }

    fn on_request(&mut self, id: Value, method: String, params: Value) {
        match (self.phase, method.as_str()) {
            (Phase::Waiting, "initialize") => {
                self.phase = Phase::Running;
                let result = json!({
                    "capabilities": capabilities(),
                    "serverInfo": {"name": "lexrun", "version": env!("CARGO_PKG_VERSION")},
                });
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            (Phase::Waiting, _) => self.error(
                id,
                SERVER_NOT_INITIALIZED,
                &format!("`{method}` before `initialize`: the client must send `initialize` first"),
            ),
            (Phase::Running, "initialize") => self.error(
                id,
                transport::INVALID_REQUEST,
                "`initialize` was sent already; it is sent once",
            ),
            (Phase::Running, "shutdown") => {
                self.phase = Phase::ShutDown;
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            (Phase::Running, "lexrun/stats") => {
                let result = json!({"checks": self.checks, "dropped": self.dropped});
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            (Phase::Running, _) => {
                let req = Request {
                    id: RequestId::from(0),
                    method: method.clone(),
                    params,
                };
                let resp =
                    catch_unwind(AssertUnwindSafe(|| self.request(req))).unwrap_or_else(|_| {
                        Response::new_err(
                            RequestId::from(0),
                            ErrorCode::InternalError as i32,
                            format!("lexrun lsp failed on {method}; the server keeps running"),
                        )
                    });
                let mut v = serde_json::to_value(resp).unwrap_or(Value::Null);
                v["jsonrpc"] = json!("2.0");
                v["id"] = id;
                if v.get("result").is_none() && v.get("error").is_none() {
                    v["result"] = Value::Null;
                }
                self.send(&v);
            }
            (Phase::ShutDown, _) => self.error(
                id,
                transport::INVALID_REQUEST,
                &format!("`{method}` after `shutdown`: only `exit` may follow"),
            ),
        }
    }

    fn on_notification(&mut self, method: String, params: Value) -> Step {
        if method == "exit" {
            return Step::Exit(u8::from(self.phase != Phase::ShutDown));
        }
        if self.phase != Phase::Running {
            return Step::Go;
        }
        let n = Notification { method, params };
        let _ = catch_unwind(AssertUnwindSafe(|| self.notification(n)));
        Step::Go
    }

    /// Marks a document changed: checked at once when its diagnostics were up to date,
    /// else once the burst pauses.
    fn changed(&mut self, uri: &Url) {
        let now = Instant::now();
        if let Some(doc) = self.docs.get_mut(uri) {
            let waiting = !doc.published;
            doc.fresh = false;
            doc.published = false;
            doc.due = Some(if waiting { now + QUIET } else { now });
        }
        // The documents that import this one are checked again, with the same pause.
        let Some(path) = uri.to_file_path().ok() else {
            return;
        };
        let name = path.display().to_string();
        for (u, d) in self.docs.iter_mut() {
            if u == uri {
                continue;
            }
            let imports = d.analysis.as_ref().is_some_and(|a| {
                let s = &a.checked.sources;
                (1..s.len()).any(|f| {
                    let n = &s.get(f).name;
                    *n == name || crate::confine::lexical(std::path::Path::new(n)) == path
                })
            });
            if imports {
                d.fresh = false;
                d.published = false;
                d.due = Some(d.due.map_or(now + QUIET, |t| t.max(now + QUIET)));
            }
        }
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    n.extract::<lsp_types::DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
                {
                    let uri = p.text_document.uri;
                    self.docs.insert(
                        uri.clone(),
                        Doc {
                            text: p.text_document.text,
                            version: p.text_document.version,
                            analysis: None,
                            fresh: false,
                            published: true,
                            due: None,
                            last_good: None,
                            reuse: Default::default(),
                        },
                    );
                    self.changed(&uri);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidChangeTextDocumentParams>(
                    DidChangeTextDocument::METHOD,
                ) {
                    let uri = p.text_document.uri;
                    if let Some(doc) = self.docs.get_mut(&uri) {
                        for change in p.content_changes {
                            match change.range {
                                None => doc.text = change.text,
                                Some(r) => {
                                    let l = Lines::new(&doc.text);
                                    let (s, e) = (l.offset(r.start), l.offset(r.end));
                                    doc.text.replace_range(s..e.max(s), &change.text);
                                }
                            }
                        }
                        doc.version = p.text_document.version;
                        self.changed(&uri);
                    }
                }
            }
            DidSaveTextDocument::METHOD => {
                // A file saved by another program may be imported: check them all again.
                let all: Vec<Url> = self.docs.keys().cloned().collect();
                for u in all {
                    if let Some(d) = self.docs.get_mut(&u) {
                        d.fresh = false;
                        d.published = false;
                        d.due = Some(d.due.unwrap_or_else(Instant::now));
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    n.extract::<lsp_types::DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
                {
                    let uri = p.text_document.uri;
                    self.docs.remove(&uri);
                    self.publish(uri, Vec::new(), None);
                }
            }
            _ => {}
        }
    }

    /// Checks every document that is due, one at a time, and publishes its diagnostics
    /// unless it changed while it was checked.
    fn flush(&mut self) -> Step {
        loop {
            let now = Instant::now();
            let Some(uri) = self
                .docs
                .iter()
                .filter(|(_, d)| d.due.is_some_and(|t| t <= now))
                .min_by_key(|(_, d)| d.due)
                .map(|(u, _)| u.clone())
            else {
                return Step::Go;
            };
            let version = self.docs.get(&uri).map(|d| d.version);
            let _ = catch_unwind(AssertUnwindSafe(|| self.refresh(&uri)));
            if let Some(d) = self.docs.get_mut(&uri) {
                d.due = None;
            }
            // What came while the check ran decides whether its result still stands.
            if let Step::Exit(code) = self.drain() {
                return Step::Exit(code);
            }
            let Some(doc) = self.docs.get_mut(&uri) else {
                continue;
            };
            if !doc.fresh || Some(doc.version) != version {
                self.dropped += 1;
                continue;
            }
            if let Some(a) = &doc.analysis {
                let diags =
                    catch_unwind(AssertUnwindSafe(|| a.diagnostics(&uri))).unwrap_or_default();
                doc.published = true;
                let version = Some(doc.version);
                self.publish(uri.clone(), diags, version);
            }
        }
    }

    /// Checks a document again if it changed since its last check, reading the other open
    /// documents in place of their files.
    fn refresh(&mut self, uri: &Url) {
        let Some(doc) = self.docs.get(uri) else {
            return;
        };
        if doc.fresh {
            return;
        }
        let mut reuse = self
            .docs
            .get_mut(uri)
            .map(|d| std::mem::take(&mut d.reuse))
            .unwrap_or_default();
        let Some(doc) = self.docs.get(uri) else {
            return;
        };
        let open: HashMap<std::path::PathBuf, &str> = self
            .docs
            .iter()
            .filter(|(u, _)| *u != uri)
            .filter_map(|(u, d)| {
                let p = crate::confine::lexical(&u.to_file_path().ok()?);
                Some((p, d.text.as_str()))
            })
            .collect();
        let a = analysis::analyze(uri, &doc.text, &open, &mut reuse);
        self.checks += 1;
        let Some(doc) = self.docs.get_mut(uri) else {
            return;
        };
        doc.reuse = reuse;
        if let Some(w) = a.workflow() {
            doc.last_good = Some(w.clone());
        }
        doc.analysis = Some(a);
        doc.fresh = true;
    }

    fn publish(&mut self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        let n = json!({"jsonrpc": "2.0", "method": PublishDiagnostics::METHOD, "params": params});
        self.send(&n);
    }

    /// The document a request is about, checked if it changed since.
    /// (Its diagnostics go out when it is due.)
    fn doc(&mut self, uri: &Url) -> Option<&Doc> {
        self.refresh(uri);
        self.docs.get(uri)
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        match req.method.as_str() {
            HoverRequest::METHOD => self.with::<HoverRequest>(req, |s, p| {
                let uri = p.text_document_position_params.text_document.uri;
                let doc = s.doc(&uri)?;
                let a = doc.analysis.as_ref()?;
                features::hover(
                    a,
                    doc.last_good.as_ref(),
                    p.text_document_position_params.position,
                )
            }),
            GotoDefinition::METHOD => self.with::<GotoDefinition>(req, |s, p| {
                let uri = p.text_document_position_params.text_document.uri;
                let a = s.doc(&uri)?.analysis.as_ref()?;
                features::definition(a, &uri, p.text_document_position_params.position)
                    .map(GotoDefinitionResponse::Scalar)
            }),
            References::METHOD => self.with::<References>(req, |s, p| {
                let uri = p.text_document_position.text_document.uri;
                let a = s.doc(&uri)?.analysis.as_ref()?;
                Some(features::references(
                    a,
                    &uri,
                    p.text_document_position.position,
                    p.context.include_declaration,
                ))
            }),
            Completion::METHOD => self.with::<Completion>(req, |s, p| {
                let uri = p.text_document_position.text_document.uri;
                let a = s.doc(&uri)?.analysis.as_ref()?;
                Some(lsp_types::CompletionResponse::Array(features::completion(
                    a,
                    p.text_document_position.position,
                )))
            }),
            PrepareRenameRequest::METHOD => self.prepare_rename(req),
            Rename::METHOD => self.rename(req),
            Formatting::METHOD => self.with::<Formatting>(req, |s, p| s.format_edits(p)),
            DocumentSymbolRequest::METHOD => self.with::<DocumentSymbolRequest>(req, |s, p| {
                let uri = p.text_document.uri;
                let a = s.doc(&uri)?.analysis.as_ref()?;
                Some(lsp_types::DocumentSymbolResponse::Flat(
                    features::document_symbols(a, &uri),
                ))
            }),
            WorkspaceSymbolRequest::METHOD => self.with::<WorkspaceSymbolRequest>(req, |s, p| {
                let uris: Vec<Url> = s.docs.keys().cloned().collect();
                for u in &uris {
                    s.refresh(u);
                }
                let docs = s
                    .docs
                    .iter()
                    .filter_map(|(u, d)| Some((u, d.analysis.as_ref()?)));
                Some(lsp_types::WorkspaceSymbolResponse::Flat(
                    features::workspace_symbols(docs, &p.query),
                ))
            }),
            InlayHintRequest::METHOD => self.with::<InlayHintRequest>(req, |s, p| {
                let uri = p.text_document.uri;
                let doc = s.doc(&uri)?;
                let a = doc.analysis.as_ref()?;
                Some(features::inlay_hints(a, doc.last_good.as_ref(), p.range))
            }),
            SignatureHelpRequest::METHOD => self.with::<SignatureHelpRequest>(req, |s, p| {
                let uri = p.text_document_position_params.text_document.uri;
                let a = s.doc(&uri)?.analysis.as_ref()?;
                features::signature_help(a, p.text_document_position_params.position)
            }),
            CodeActionRequest::METHOD => self.with::<CodeActionRequest>(req, |s, p| {
                let uri = p.text_document.uri;
                let a = s.doc(&uri)?.analysis.as_ref()?;
                Some(features::code_actions(a, &uri, p.range))
            }),
            SemanticTokensFullRequest::METHOD => {
                self.with::<SemanticTokensFullRequest>(req, |s, p| {
                    let a = s.doc(&p.text_document.uri)?.analysis.as_ref()?;
                    Some(SemanticTokensResult::Tokens(SemanticTokens {
                        result_id: None,
                        data: features::semantic_tokens(a),
                    }))
                })
            }
            _ => Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("lexrun lsp does not answer {}", req.method),
            ),
        }
    }

    /// `textDocument/prepareRename`: the name under the cursor and its range, or why it
    /// cannot be renamed.
    fn prepare_rename(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        let Ok((id, p)) =
            req.extract::<lsp_types::TextDocumentPositionParams>(PrepareRenameRequest::METHOD)
        else {
            return bad_params(id);
        };
        let Some(a) = self
            .doc(&p.text_document.uri)
            .and_then(|d| d.analysis.as_ref())
        else {
            return Response::new_ok(id, serde_json::Value::Null);
        };
        match features::rename_target(a, p.position) {
            Ok((key, span)) => Response::new_ok(
                id,
                PrepareRenameResponse::RangeWithPlaceholder {
                    range: a.range(0, span),
                    placeholder: key,
                },
            ),
            Err(why) => Response::new_err(id, ErrorCode::RequestFailed as i32, why),
        }
    }

    /// `textDocument/rename`: every edit that renames the name under the cursor.
    fn rename(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        let Ok((id, p)) = req.extract::<lsp_types::RenameParams>(Rename::METHOD) else {
            return bad_params(id);
        };
        let uri = p.text_document_position.text_document.uri;
        let Some(a) = self.doc(&uri).and_then(|d| d.analysis.as_ref()) else {
            return Response::new_ok(id, serde_json::Value::Null);
        };
        match features::rename(a, &uri, p.text_document_position.position, &p.new_name) {
            Ok(edit) => Response::new_ok(id, edit),
            Err(why) => Response::new_err(id, ErrorCode::RequestFailed as i32, why),
        }
    }

    /// `textDocument/formatting`: the whole document replaced by its formatted text, no edit
    /// if it is formatted already, nothing for a standard-library file or one that does not
    /// parse.
    fn format_edits(&self, p: lsp_types::DocumentFormattingParams) -> Option<Vec<TextEdit>> {
        let uri = p.text_document.uri;
        if features::is_stdlib(&uri) {
            return None;
        }
        let doc = self.docs.get(&uri)?;
        let path = analysis::doc_path(&uri);
        let formatted = super::fmt_files::format_file(path.as_std_path(), &doc.text, false).ok()?;
        if formatted == doc.text {
            return Some(Vec::new());
        }
        let end = Lines::new(&doc.text).position(doc.text.len());
        Some(vec![TextEdit::new(
            lsp_types::Range::new(lsp_types::Position::new(0, 0), end),
            formatted,
        )])
    }

    /// Decodes a request's parameters and answers with `f`'s result.
    fn with<R>(
        &mut self,
        req: Request,
        f: impl FnOnce(&mut Self, R::Params) -> R::Result,
    ) -> Response
    where
        R: lsp_types::request::Request,
    {
        let id = req.id.clone();
        match req.extract::<R::Params>(R::METHOD) {
            Ok((id, params)) => Response::new_ok(id, f(self, params)),
            Err(_) => bad_params(id),
        }
    }
}

fn bad_params(id: RequestId) -> Response {
    Response::new_err(
        id,
        ErrorCode::InvalidParams as i32,
        "the request's parameters do not have the protocol's form".into(),
    )
}

/// Whether a request id has the protocol's form: an integer or a string.
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}
