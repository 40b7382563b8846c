// A stand-in for the `vscode` module, enough for the extension and vscode-languageclient to
// run under plain Node.js: events, settings, documents, a diagnostics collection and
// messages are real (and recorded in `recorded`); the many provider registrations the client
// makes are accepted and kept. It is what the client test drives the extension with.
"use strict";

const recorded = { errors: [], warnings: [], infos: [], diagnostics: new Map(), commands: new Map(), output: [] };

class Disposable {
  constructor(fn) { this._fn = fn; }
  static from(...ds) { return new Disposable(() => ds.forEach((d) => d && d.dispose && d.dispose())); }
  dispose() { if (this._fn) { const f = this._fn; this._fn = undefined; f(); } }
}

class EventEmitter {
  constructor() {
    this._listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const l = thisArg ? listener.bind(thisArg) : listener;
      this._listeners.add(l);
      const d = new Disposable(() => this._listeners.delete(l));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(value) { for (const l of [...this._listeners]) l(value); }
  dispose() { this._listeners.clear(); }
}

class Uri {
  constructor(scheme, authority, path, query, fragment) {
    Object.assign(this, { scheme, authority: authority || "", path: path || "", query: query || "", fragment: fragment || "" });
  }
  static parse(s) {
    const u = new URL(s);
    return new Uri(u.protocol.replace(/:$/, ""), u.host, decodeURIComponent(u.pathname), u.search.replace(/^\?/, ""), u.hash.replace(/^#/, ""));
  }
  static file(p) { return new Uri("file", "", p); }
  get fsPath() { return this.path; }
  with(change) { return new Uri(change.scheme ?? this.scheme, change.authority ?? this.authority, change.path ?? this.path, change.query ?? this.query, change.fragment ?? this.fragment); }
  toString() { return this.scheme === "file" ? "file://" + encodeURI(this.path) : `${this.scheme}://${this.authority}${this.path}`; }
  toJSON() { return this.toString(); }
}

class Position {
  constructor(line, character) { this.line = line; this.character = character; }
  isEqual(o) { return o.line === this.line && o.character === this.character; }
}
class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") { this.start = new Position(a, b); this.end = new Position(c, d); }
    else { this.start = a; this.end = b; }
  }
}
class Location { constructor(uri, range) { this.uri = uri; this.range = range; } }
class Diagnostic {
  constructor(range, message, severity) { this.range = range; this.message = message; this.severity = severity ?? 0; }
}
class CancellationError extends Error {}
class CancellationTokenSource {
  constructor() {
    const e = new EventEmitter();
    this._e = e;
    this.token = { isCancellationRequested: false, onCancellationRequested: e.event };
  }
  cancel() { this.token.isCancellationRequested = true; this._e.fire(); }
  dispose() {}
}

// Plain data classes the converters build.
function dataClass() {
  return class { constructor(...args) { this.args = args; Object.assign(this, ...args.filter((a) => a && typeof a === "object" && !Array.isArray(a))); } };
}

// Enumerations: any member is a number.
function enumeration(values) {
  return new Proxy(values || {}, { get: (t, k) => (k in t ? t[k] : typeof k === "string" ? k.length : undefined) });
}

const settings = { lexrun: {} };
const configChange = new EventEmitter();

function configuration(section) {
  return {
    get(key, dflt) {
      const full = section ? `${section}.${key}` : key;
      const [top, ...rest] = full.split(".");
      const v = rest.length ? (settings[top] || {})[rest.join(".")] : settings[top];
      return v === undefined ? dflt : v;
    },
    has(key) { return this.get(key) !== undefined; },
    inspect() { return undefined; },
    update() { return Promise.resolve(); },
  };
}

const openDoc = new EventEmitter();
const changeDoc = new EventEmitter();
const closeDoc = new EventEmitter();
const saveDoc = new EventEmitter();
const textDocuments = [];

/// A text document as VS Code hands it to extensions.
function document(path, text, languageId = "lex") {
  const lines = () => text.split("\n");
  return {
    uri: Uri.file(path), fileName: path, languageId, version: 1, isClosed: false, isDirty: false, isUntitled: false, eol: 1,
    getText() { return text; },
    get lineCount() { return lines().length; },
    setText(t) { text = t; this.version += 1; },
    lineAt(n) { const l = lines()[n] || ""; return { text: l, range: new Range(n, 0, n, l.length) }; },
    offsetAt(p) { const ls = lines(); let o = 0; for (let i = 0; i < p.line; i++) o += ls[i].length + 1; return o + p.character; },
    positionAt(o) { const ls = lines(); let l = 0; while (l < ls.length - 1 && o > ls[l].length) { o -= ls[l].length + 1; l++; } return new Position(l, o); },
  };
}

function registration() { return new Disposable(() => {}); }

const languages = new Proxy({
  match(selector, doc) {
    const sels = Array.isArray(selector) ? selector : [selector];
    return sels.some((s) => (typeof s === "string" ? s === doc.languageId : !s.language || s.language === doc.languageId)) ? 10 : 0;
  },
  createDiagnosticCollection(name) {
    return {
      name,
      set(uri, diags) {
        if (Array.isArray(uri)) { for (const [u, d] of uri) recorded.diagnostics.set(u.toString(), d || []); }
        else recorded.diagnostics.set(uri.toString(), diags || []);
      },
      delete(uri) { recorded.diagnostics.delete(uri.toString()); },
      clear() { recorded.diagnostics.clear(); },
      forEach() {},
      get(uri) { return recorded.diagnostics.get(uri.toString()); },
      has(uri) { return recorded.diagnostics.has(uri.toString()); },
      dispose() {},
    };
  },
  getDiagnostics() { return []; },
  onDidChangeDiagnostics: new EventEmitter().event,
}, { get: (t, k) => (k in t ? t[k] : registration) });

function channel(name) {
  return {
    name,
    append(s) { recorded.output.push(String(s)); },
    appendLine(s) { recorded.output.push(String(s) + "\n"); },
    replace() {}, clear() {}, show() {}, hide() {}, dispose() {},
    trace() {}, debug() {}, info(s) { this.appendLine(s); }, warn(s) { this.appendLine(s); }, error(s) { this.appendLine(s); },
    logLevel: 2, onDidChangeLogLevel: new EventEmitter().event,
  };
}

const message = (list) => (text, ...items) => { list.push(String(text)); return Promise.resolve(undefined); };

module.exports = {
  recorded,
  document,
  /// Changes a setting as the user would in the settings editor.
  setSetting(key, value) {
    const [top, ...rest] = key.split(".");
    settings[top] = settings[top] || {};
    settings[top][rest.join(".")] = value;
    configChange.fire({ affectsConfiguration: (s) => key === s || key.startsWith(s + ".") });
  },
  openDocument(doc) { textDocuments.push(doc); openDoc.fire(doc); },
  /// Replaces a document's text as one edit, as typing into it would.
  editDocument(doc, text) {
    const old = doc.getText();
    const end = doc.positionAt(old.length);
    doc.setText(text);
    changeDoc.fire({ document: doc, contentChanges: [{ range: new Range(new Position(0, 0), end), rangeOffset: 0, rangeLength: old.length, text }], reason: undefined });
  },
  version: "1.90.0",
  Disposable, EventEmitter, Uri, Position, Range, Location, Diagnostic, CancellationError, CancellationTokenSource,
  DiagnosticRelatedInformation: class { constructor(location, message) { this.location = location; this.message = message; } },
  MarkdownString: class { constructor(value) { this.value = value || ""; } appendMarkdown(s) { this.value += s; return this; } appendCodeblock(s) { this.value += s; return this; } appendText(s) { this.value += s; return this; } },
  Hover: dataClass(), TextEdit: class { constructor(range, newText) { this.range = range; this.newText = newText; } },
  WorkspaceEdit: class { constructor() { this.edits = []; } replace(u, r, t) { this.edits.push([u, r, t]); } set(u, e) { this.edits.push([u, e]); } },
  CompletionItem: dataClass(), CompletionList: dataClass(), SnippetString: dataClass(), SymbolInformation: dataClass(), DocumentSymbol: dataClass(),
  CodeAction: dataClass(), CodeLens: dataClass(), DocumentLink: dataClass(), Color: dataClass(), ColorInformation: dataClass(), ColorPresentation: dataClass(),
  FoldingRange: dataClass(), SelectionRange: dataClass(), CallHierarchyItem: dataClass(), CallHierarchyIncomingCall: dataClass(), CallHierarchyOutgoingCall: dataClass(),
  SemanticTokens: dataClass(), SemanticTokensEdit: dataClass(), SemanticTokensEdits: dataClass(), SemanticTokensLegend: dataClass(),
  SignatureHelp: dataClass(), SignatureInformation: dataClass(), ParameterInformation: dataClass(), DocumentHighlight: dataClass(),
  LinkedEditingRanges: dataClass(), InlayHint: dataClass(), InlayHintLabelPart: dataClass(), InlineValueText: dataClass(),
  InlineValueVariableLookup: dataClass(), InlineValueEvaluatableExpression: dataClass(), InlineCompletionItem: dataClass(), InlineCompletionList: dataClass(),
  TypeHierarchyItem: dataClass(), RelativePattern: dataClass(), TabInputText: dataClass(), TabInputTextDiff: dataClass(), TabInputCustom: dataClass(),
  TabInputNotebook: dataClass(), TabInputNotebookDiff: dataClass(), NotebookCellKind: enumeration(), NotebookCellData: dataClass(), NotebookData: dataClass(),
  NotebookRange: dataClass(), NotebookEdit: dataClass(),
  CodeActionKind: enumeration({ Empty: { value: "" }, QuickFix: { value: "quickfix" }, Refactor: { value: "refactor" }, RefactorExtract: { value: "refactor.extract" }, RefactorInline: { value: "refactor.inline" }, RefactorRewrite: { value: "refactor.rewrite" }, Source: { value: "source" }, SourceOrganizeImports: { value: "source.organizeImports" }, SourceFixAll: { value: "source.fixAll" } }),
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  DiagnosticTag: enumeration(), CompletionItemKind: enumeration(), CompletionItemTag: enumeration(), CompletionTriggerKind: enumeration(),
  SymbolKind: enumeration(), SymbolTag: enumeration(), DocumentHighlightKind: enumeration(), FoldingRangeKind: enumeration(),
  SignatureHelpTriggerKind: enumeration(), TextDocumentSaveReason: enumeration(), CodeActionTriggerKind: enumeration(),
  InlayHintKind: enumeration(), ProgressLocation: enumeration(), ConfigurationTarget: enumeration(), EndOfLine: enumeration(), IndentAction: enumeration(),
  ViewColumn: enumeration(), TextDocumentChangeReason: enumeration(), FileType: enumeration(), UIKind: enumeration(), LogLevel: enumeration(),
  env: { appName: "stand-in", language: "en", machineId: "0", sessionId: "0", uiKind: 1, openExternal: () => Promise.resolve(true) },
  commands: {
    registerCommand(id, fn) { recorded.commands.set(id, fn); return new Disposable(() => recorded.commands.delete(id)); },
    executeCommand(id, ...args) { const f = recorded.commands.get(id); return Promise.resolve(f ? f(...args) : undefined); },
  },
  window: {
    createOutputChannel: channel,
    showErrorMessage: message(recorded.errors),
    showWarningMessage: message(recorded.warnings),
    showInformationMessage: message(recorded.infos),
    withProgress: (_o, task) => task({ report() {} }, new CancellationTokenSource().token),
    showTextDocument: () => Promise.resolve(undefined),
    activeTextEditor: undefined,
    visibleTextEditors: [],
    onDidChangeActiveTextEditor: new EventEmitter().event,
    onDidChangeVisibleTextEditors: new EventEmitter().event,
    tabGroups: { all: [], onDidChangeTabs: new EventEmitter().event, onDidChangeTabGroups: new EventEmitter().event },
  },
  workspace: {
    getConfiguration: configuration,
    onDidChangeConfiguration: configChange.event,
    textDocuments,
    workspaceFolders: undefined,
    notebookDocuments: [],
    onDidOpenTextDocument: openDoc.event,
    onDidChangeTextDocument: changeDoc.event,
    onDidCloseTextDocument: closeDoc.event,
    onDidSaveTextDocument: saveDoc.event,
    onWillSaveTextDocument: new EventEmitter().event,
    onDidChangeWorkspaceFolders: new EventEmitter().event,
    onDidOpenNotebookDocument: new EventEmitter().event,
    onDidChangeNotebookDocument: new EventEmitter().event,
    onDidCloseNotebookDocument: new EventEmitter().event,
    onDidSaveNotebookDocument: new EventEmitter().event,
    onDidCreateFiles: new EventEmitter().event,
    onDidRenameFiles: new EventEmitter().event,
    onDidDeleteFiles: new EventEmitter().event,
    onWillCreateFiles: new EventEmitter().event,
    onWillRenameFiles: new EventEmitter().event,
    onWillDeleteFiles: new EventEmitter().event,
    createFileSystemWatcher: () => ({ onDidCreate: new EventEmitter().event, onDidChange: new EventEmitter().event, onDidDelete: new EventEmitter().event, dispose() {} }),
    getWorkspaceFolder: () => undefined,
    applyEdit: () => Promise.resolve(true),
    fs: {},
  },
  languages,
};
