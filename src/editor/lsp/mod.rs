//! `lexrun lsp`: a language server over standard input and output.
//!
//! One thread reads messages in order. Edits mark a document stale; once no further message
//! is waiting, every stale document is checked and its diagnostics published, so a burst of
//! keystrokes costs one check (the debounce) and a pause costs none. A request about a stale
//! document checks it first. Each handler runs behind `catch_unwind`: a bug answers one
//! request with an error and the server keeps serving.

mod analysis;
mod features;
mod index;
mod lines;

use std::collections::{BTreeSet, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    Completion, Formatting, GotoDefinition, HoverRequest, PrepareRenameRequest, References, Rename,
    Request as _, SemanticTokensFullRequest,
};
use lsp_types::{
    CompletionOptions, GotoDefinitionResponse, OneOf, PrepareRenameResponse,
    PublishDiagnosticsParams, RenameOptions, SemanticTokens, SemanticTokensFullOptions,
    SemanticTokensLegend, SemanticTokensOptions, SemanticTokensResult,
    SemanticTokensServerCapabilities, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Url,
};

use crate::plan::workflow::Workflow;
use analysis::Analysis;
use lines::Lines;

struct Doc {
    text: String,
    version: i32,
    /// The check of `text`, once one was asked for.
    analysis: Option<Analysis>,
    /// Whether `analysis` is of the current `text`.
    fresh: bool,
    /// The workflow of the last check without errors, so hovers keep their figures while a
    /// line is half typed.
    last_good: Option<Workflow>,
}

struct Server<'a> {
    conn: &'a Connection,
    docs: HashMap<Url, Doc>,
    stale: BTreeSet<Url>,
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
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

/// Runs the server until the client says `exit`; returns the process exit code.
pub fn run() -> u8 {
    let (conn, io) = Connection::stdio();
    let caps = match serde_json::to_value(capabilities()) {
        Ok(c) => c,
        Err(_) => return 2,
    };
    if let Err(e) = conn.initialize(caps) {
        eprintln!("lexrun lsp: the client did not initialize: {e}");
        return 1;
    }
    let mut server = Server {
        conn: &conn,
        docs: HashMap::new(),
        stale: BTreeSet::new(),
    };
    let code = server.serve();
    drop(server);
    drop(conn);
    let _ = io.join();
    code
}

impl Server<'_> {
    fn serve(&mut self) -> u8 {
        while let Ok(msg) = self.conn.receiver.recv() {
            if self.handle(msg) {
                return 0;
            }
            // Take whatever else is already waiting before checking anything.
            while let Ok(msg) = self.conn.receiver.try_recv() {
                if self.handle(msg) {
                    return 0;
                }
            }
            self.flush();
        }
        0
    }

    /// Handles one message; true when the server should stop.
    fn handle(&mut self, msg: Message) -> bool {
        match msg {
            Message::Request(req) => {
                match self.conn.handle_shutdown(&req) {
                    Ok(true) => return true,
                    Ok(false) => {}
                    Err(_) => return true,
                }
                let id = req.id.clone();
                let method = req.method.clone();
                let resp =
                    catch_unwind(AssertUnwindSafe(|| self.request(req))).unwrap_or_else(|_| {
                        Response::new_err(
                            id,
                            ErrorCode::InternalError as i32,
                            format!("lexrun lsp failed on {method}; the server keeps running"),
                        )
                    });
                let _ = self.conn.sender.send(Message::Response(resp));
            }
            Message::Notification(n) => {
                if n.method == "exit" {
                    return true;
                }
                let _ = catch_unwind(AssertUnwindSafe(|| self.notification(n)));
            }
            Message::Response(_) => {}
        }
        false
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
                            last_good: None,
                        },
                    );
                    self.stale.insert(uri);
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
                                // Full sync is announced; a ranged change is applied anyway.
                                Some(r) => {
                                    let l = Lines::new(&doc.text);
                                    let (s, e) = (l.offset(r.start), l.offset(r.end));
                                    doc.text.replace_range(s..e.max(s), &change.text);
                                }
                            }
                        }
                        doc.version = p.text_document.version;
                        doc.fresh = false;
                        self.stale.insert(uri);
                    }
                }
            }
            DidSaveTextDocument::METHOD => {
                // A saved file may be imported by the others: check them all again.
                for doc in self.docs.values_mut() {
                    doc.fresh = false;
                }
                let all: Vec<Url> = self.docs.keys().cloned().collect();
                self.stale.extend(all);
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    n.extract::<lsp_types::DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
                {
                    let uri = p.text_document.uri;
                    self.docs.remove(&uri);
                    self.stale.remove(&uri);
                    self.publish(uri, Vec::new(), None);
                }
            }
            _ => {}
        }
    }

    /// Checks every stale document and publishes its diagnostics.
    fn flush(&mut self) {
        let stale = std::mem::take(&mut self.stale);
        for uri in stale {
            let _ = catch_unwind(AssertUnwindSafe(|| {
                self.refresh(&uri);
                if let Some(doc) = self.docs.get(&uri) {
                    if let Some(a) = &doc.analysis {
                        let diags = a.diagnostics(&uri);
                        let version = Some(doc.version);
                        self.publish(uri.clone(), diags, version);
                    }
                }
            }));
        }
    }

    /// Checks a document again if it changed since its last check.
    fn refresh(&mut self, uri: &Url) {
        let Some(doc) = self.docs.get_mut(uri) else {
            return;
        };
        if doc.fresh {
            return;
        }
        let a = analysis::analyze(uri, &doc.text);
        if let Some(w) = a.workflow() {
            doc.last_good = Some(w.clone());
        }
        doc.analysis = Some(a);
        doc.fresh = true;
    }

    fn publish(&self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        let n = Notification::new(PublishDiagnostics::METHOD.into(), params);
        let _ = self.conn.sender.send(Message::Notification(n));
    }

    /// The document a request is about, checked if it changed since.
    /// (Its diagnostics still go out at the next flush.)
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
            PrepareRenameRequest::METHOD => {
                let Ok((id, p)) = req
                    .extract::<lsp_types::TextDocumentPositionParams>(PrepareRenameRequest::METHOD)
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
            Rename::METHOD => {
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
            Formatting::METHOD => self.with::<Formatting>(req, |s, p| {
                let uri = p.text_document.uri;
                if features::is_stdlib(&uri) {
                    return None;
                }
                let doc = s.docs.get(&uri)?;
                let path = analysis::doc_path(&uri);
                let formatted =
                    super::fmt::format_file(path.as_std_path(), &doc.text, false).ok()?;
                if formatted == doc.text {
                    return Some(Vec::new());
                }
                let end = Lines::new(&doc.text).position(doc.text.len());
                Some(vec![TextEdit::new(
                    lsp_types::Range::new(lsp_types::Position::new(0, 0), end),
                    formatted,
                )])
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
