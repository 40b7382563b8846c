//! Text → AST. Pest recognises the text; this module builds the tree, converts numbers and
//! units, and turns every swallowed piece of bad text into a diagnostic with a span and a hint.

use pest::iterators::Pair;
use pest::Parser as _;

use super::ast::*;
use super::recover;
use crate::diagnostic::{Code, Diagnostic, FileId, Span};

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/lex.pest"]
pub(crate) struct LexParser;

/// Conditions and record types nest; past this depth the file is surely a mistake, and a
/// bounded depth keeps the tree walkers from exhausting the stack on hostile input.
const MAX_NESTING: usize = 32;

/// The result of parsing one file: as much of the tree as could be read, and what was wrong.
#[derive(Debug, Default)]
pub struct Parsed {
    pub file: File,
    pub diagnostics: Vec<Diagnostic>,
}

/// Checks that a file's bytes are UTF-8. On failure the diagnostic points at the first bad
/// byte in the lossy text that is returned for display.
pub fn decode(bytes: &[u8]) -> Result<&str, (String, usize)> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        (String::from_utf8_lossy(bytes).into_owned(), at)
    })
}

/// Parses a whole `.lex` file. Never panics; every problem is a diagnostic.
pub fn parse(text: &str, file: FileId) -> Parsed {
    if let Some(d) = too_deep(text, file) {
        return Parsed {
            file: File::default(),
            diagnostics: vec![d],
        };
    }
    let mut b = Builder {
        file,
        base: 0,
        diags: Vec::new(),
    };
    let mut items = Vec::new();
    match with_pest(false, || LexParser::parse(Rule::file, text)) {
        Ok(mut pairs) => {
            if let Some(file_pair) = pairs.next() {
                for pair in file_pair.into_inner() {
                    if pair.as_rule() == Rule::EOI {
                        continue;
                    }
                    if let Some(item) = b.item(pair) {
                        items.push(item);
                    }
                }
            }
        }
        // The catch-alls make this unreachable for ordinary text, but a diagnostic is still
        // better than a panic if the grammar ever rejects a file outright.
        Err(e) => b.diags.push(recover::pest_error(&e, text, 0, file, None)),
    }
    if items.is_empty() && b.diags.is_empty() {
        b.diags.push(
            Diagnostic::new(Code::EmptyFile, "this file declares nothing")
                .in_file(file)
                .label(Span::new(0, text.len().min(1)), "")
                .help("start with a header such as `workflow affidavit \"Affidavit from intake to draft\"`"),
        );
    }
    Parsed {
        file: File { items },
        diagnostics: b.diags,
    }
}

/// Larger than any workflow a person writes; the generated 1,000-stage benchmark is 275 KiB.
const MAX_FILE: usize = 16 << 20;

/// Blocks left open at the end of the file: past this many, parsing would only repeat the
/// search for their ends (quadratic time), so the file is refused with the first one shown.
const MAX_UNCLOSED: usize = 4;

/// Finds shapes no real workflow has, before they can exhaust the parser's stack or time:
/// `{` or `(` more than 32 deep, a long chain of `list of`, many unclosed blocks, a huge
/// file. Strings and comments are skipped.
fn too_deep(text: &str, file: FileId) -> Option<Diagnostic> {
    if text.len() > MAX_FILE {
        return Some(
            Diagnostic::new(
                Code::Syntax,
                format!(
                    "this file is {} MiB, larger than any workflow",
                    text.len() >> 20
                ),
            )
            .in_file(file)
            .label(Span::new(0, 0), "")
            .help("split it into files joined with `use \"other.lex\"`"),
        );
    }
    let bytes = text.as_bytes();
    let mut open_braces: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut lists = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"\"\"\"") {
            i += 3 + text[i + 3..].find("\"\"\"").map_or(text.len(), |e| e + 3);
            continue;
        }
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if rest.starts_with(b"//") => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if rest.starts_with(b"/*") => {
                i += text[i..].find("*/").map_or(text.len(), |e| e + 1);
            }
            b'{' => {
                depth += 1;
                open_braces.push(i);
            }
            b'(' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                open_braces.pop();
            }
            b')' => depth = depth.saturating_sub(1),
            b'l' if rest.starts_with(b"list") => {
                lists += 1;
                i += 3;
            }
            c if c.is_ascii_whitespace() => {}
            _ if rest.starts_with(b"of") => i += 1,
            _ => lists = 0,
        }
        if depth > MAX_NESTING || lists > MAX_NESTING {
            let at = i.min(text.len());
            let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
            return Some(
                Diagnostic::new(Code::Syntax, "this is nested too deeply to be a workflow")
                    .in_file(file)
                    .label(Span::new(at, end), format!("more than {MAX_NESTING} levels deep here"))
                    .help("check for a missing `}` or `)`; real blocks, conditions and types nest only a few levels"),
            );
        }
        i += 1;
    }
    if open_braces.len() > MAX_UNCLOSED {
        let at = open_braces[0];
        return Some(
            Diagnostic::new(
                Code::Syntax,
                format!("{} blocks are never closed", open_braces.len()),
            )
            .in_file(file)
            .label(Span::new(at, at + 1), "the first is opened here")
            .help("every `{` needs its `}`; check the blocks from here on"),
        );
    }
    None
}

static PEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs a pest parse (lexrun's or handlebars') with detailed expectations only when the parse
/// is expected to fail and its error shown: collecting them costs time on every parse. The
/// setting is process-wide, so parses take turns. (pest's call budget is left off: it doubles
/// the cost of every parse, and `too_deep` already refuses the inputs it would stop.)
pub fn with_pest<T>(detail: bool, parse: impl FnOnce() -> T) -> T {
    let _turn = PEST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    pest::set_error_detail(detail);
    parse()
}

pub(crate) struct Builder {
    pub(crate) file: FileId,
    pub(crate) base: usize,
    pub(crate) diags: Vec<Diagnostic>,
}

/// Which block a setting sits in, for recovery messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    Pool,
    Model,
    Sources,
    Stage,
    Tool,
    Verify,
}

impl Builder {
    fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span::new(self.base + s.start(), self.base + s.end())
    }

    fn err(&mut self, code: Code, span: Span, msg: impl Into<String>, label: &str, help: &str) {
        let mut d = Diagnostic::new(code, msg)
            .in_file(self.file)
            .label(span, label);
        if !help.is_empty() {
            d = d.help(help);
        }
        self.diags.push(d);
    }

    fn name(&self, p: Pair<Rule>) -> Name {
        Spanned::new(p.as_str().to_string(), self.span(&p))
    }

    fn item(&mut self, pair: Pair<Rule>) -> Option<Item> {
        let span = self.span(&pair);
        Some(match pair.as_rule() {
            Rule::workflow_decl => {
                let mut it = pair.into_inner();
                it.next(); // keyword
                let name = self.name(it.next()?);
                let description = it.next().map(|p| self.string(p));
                Item::Workflow(WorkflowDecl {
                    name,
                    description,
                    span,
                })
            }
            Rule::matter_decl => Item::Matter(self.string(pair.into_inner().nth(1)?)),
            Rule::use_decl => {
                let p = pair.into_inner().nth(1)?;
                let target = if p.as_rule() == Rule::string {
                    UseTarget::File(self.string(p))
                } else {
                    UseTarget::Module(self.name(p))
                };
                Item::Use(UseDecl { target, span })
            }
            Rule::template_decl => {
                let mut it = pair.into_inner();
                it.next();
                let name = self.name(it.next()?);
                let body = self.prompt(it.next()?);
                Item::Template(TemplateDecl { name, body, span })
            }
            Rule::output_decl => {
                let mut it = pair.into_inner();
                it.next();
                let path = self.string(it.next()?);
                it.next();
                let from = self.name(it.next()?);
                let appendix = it.nth(1).map(|p| self.name(p));
                Item::Output(OutputDecl {
                    path,
                    from,
                    appendix,
                    span,
                })
            }
            Rule::pool_decl => Item::Pool(Box::new(self.pool(pair, span)?)),
            Rule::model_decl => Item::Model(Box::new(self.model(pair, span)?)),
            Rule::sources_decl => Item::Sources(self.sources(pair, span)?),
            Rule::stage_decl => Item::Stage(Box::new(self.stage(pair, span)?)),
            Rule::tool_decl => Item::Tool(self.tool(pair, span)?),
            Rule::verify_decl => {
                let mut it = pair.into_inner();
                it.next();
                let target = self.name(it.next()?);
                it.next();
                let mut against = Vec::new();
                let mut body = VerifyBody::default();
                for p in it {
                    match p.as_rule() {
                        Rule::ident => against.push(self.name(p)),
                        _ => self.verify_entry(p, &mut body),
                    }
                }
                Item::Verify(Box::new(VerifyDecl {
                    target,
                    against,
                    span,
                    body,
                }))
            }
            Rule::ruleset_decl => {
                let mut it = pair.into_inner();
                it.next();
                let name = self.name(it.next()?);
                let mut body = VerifyBody::default();
                for p in it {
                    self.verify_entry(p, &mut body);
                }
                Item::Ruleset(RulesetDecl { name, span, body })
            }
            Rule::bad_item => {
                let d = recover::bad_item(pair.as_str(), span.start, self.file);
                self.diags.push(d);
                return None;
            }
            _ => return None,
        })
    }

    /// Reports a malformed setting; returns the setting it was meant to be, if clear.
    fn bad_entry(&mut self, p: &Pair<Rule>, block: Block) -> Option<String> {
        let span = self.span(p);
        let (d, key) = recover::bad_entry(p.as_str(), span.start, self.file, block);
        self.diags.push(d);
        key
    }

    /// Records a setting, reporting a second occurrence instead of silently overwriting.
    fn set<T>(&mut self, slot: &mut Option<T>, value: T, key: &str, span: Span, first: Span) {
        if slot.is_some() {
            self.duplicate(key, span, first);
        } else {
            *slot = Some(value);
        }
    }

    fn duplicate(&mut self, key: &str, span: Span, first: Span) {
        self.diags.push(
            Diagnostic::new(Code::DuplicateSetting, format!("`{key}` is set twice"))
                .in_file(self.file)
                .label(span, "set again here")
                .label(first, "first set here")
                .help("keep one of the two lines"),
        );
    }

    fn pool(&mut self, pair: Pair<Rule>, span: Span) -> Option<PoolDecl> {
        let mut it = pair.into_inner();
        it.next();
        let name = self.name(it.next()?);
        let mut d = PoolDecl {
            broken: Vec::new(),
            name,
            span,
            host: None,
            gpus: None,
            link: None,
            vram: None,
            compute: None,
            serve: None,
            slots: None,
            binary: None,
        };
        let mut firsts: Vec<(String, Span)> = Vec::new();
        for e in it {
            let espan = self.span(&e);
            let rule = e.as_rule();
            let (key, first) = entry_key(&e, espan, &mut firsts);
            let mut inner = e.clone().into_inner();
            inner.next();
            let _ = (|| -> Option<()> {
                match rule {
                    Rule::host_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.host, v, &key, espan, first);
                    }
                    Rule::gpus_e => {
                        let ids: Vec<_> = inner.filter_map(|p| self.int_u32(p)).collect();
                        self.set(&mut d.gpus, Spanned::new(ids, espan), &key, espan, first);
                    }
                    Rule::link_e => {
                        let v = self.name(inner.next()?);
                        self.set(&mut d.link, v, &key, espan, first);
                    }
                    Rule::vram_e => {
                        let v = self.vram(inner.next()?)?;
                        self.set(&mut d.vram, Spanned::new(v, espan), &key, espan, first);
                    }
                    Rule::compute_e => {
                        let v = self.decimal(inner.next()?)?;
                        self.set(&mut d.compute, v, &key, espan, first);
                    }
                    Rule::serve_e => {
                        let kind = self.name(inner.next()?);
                        inner.next();
                        let endpoint = self.string(inner.next()?);
                        let v = Serve {
                            kind,
                            endpoint,
                            span: espan,
                        };
                        self.set(&mut d.serve, v, &key, espan, first);
                    }
                    Rule::slots_e => {
                        let v = self.int_u32(inner.next()?)?;
                        self.set(&mut d.slots, v, &key, espan, first);
                    }
                    Rule::binary_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.binary, v, &key, espan, first);
                    }
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Pool)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    fn vram(&mut self, p: Pair<Rule>) -> Option<Vram> {
        match p.as_rule() {
            Rule::vram_repeat => {
                let mut it = p.into_inner();
                let count = self.int_u32(it.next()?)?;
                let size = self.size(it.next()?)?;
                Some(Vram::Repeat {
                    count,
                    size: size.node,
                })
            }
            _ => Some(Vram::List(
                p.into_inner().filter_map(|s| self.size(s)).collect(),
            )),
        }
    }

    fn model(&mut self, pair: Pair<Rule>, span: Span) -> Option<ModelDecl> {
        let mut it = pair.into_inner();
        it.next();
        let name = self.name(it.next()?);
        it.next();
        let pool = self.name(it.next()?);
        let mut d = ModelDecl {
            broken: Vec::new(),
            name,
            pool,
            span,
            gguf: None,
            tag: None,
            weights: None,
            ctx: None,
            kv: None,
            kv_k: None,
            kv_v: None,
            flash_attn: None,
            min_decode: None,
            layers: None,
            kv_heads: None,
            head_dim: None,
            quant: None,
            dtype: None,
            sampling: Vec::new(),
        };
        let mut firsts: Vec<(String, Span)> = Vec::new();
        for e in it {
            let espan = self.span(&e);
            let rule = e.as_rule();
            let (key, first) = entry_key(&e, espan, &mut firsts);
            let mut inner = e.clone().into_inner();
            let head = inner.next();
            let _ = (|| -> Option<()> {
                match rule {
                    Rule::gguf_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.gguf, v, &key, espan, first);
                    }
                    Rule::tag_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.tag, v, &key, espan, first);
                    }
                    Rule::weights_e => {
                        let v = self.size(inner.next()?)?;
                        self.set(&mut d.weights, v, &key, espan, first);
                    }
                    Rule::ctx_e => {
                        let v = self.count(inner.next()?)?;
                        self.set(&mut d.ctx, v, &key, espan, first);
                    }
                    Rule::kv_e
                    | Rule::kv_k_e
                    | Rule::kv_v_e
                    | Rule::flash_e
                    | Rule::quant_e
                    | Rule::dtype_e => {
                        let v = self.name(inner.next()?);
                        let slot = match rule {
                            Rule::kv_e => &mut d.kv,
                            Rule::kv_k_e => &mut d.kv_k,
                            Rule::kv_v_e => &mut d.kv_v,
                            Rule::flash_e => &mut d.flash_attn,
                            Rule::quant_e => &mut d.quant,
                            _ => &mut d.dtype,
                        };
                        let mut tmp = slot.take();
                        self.set(&mut tmp, v, &key, espan, first);
                        *slot = tmp;
                    }
                    Rule::min_decode_e => {
                        let v = self.decimal(inner.next()?)?;
                        self.set(&mut d.min_decode, v, &key, espan, first);
                    }
                    Rule::layers_e | Rule::kv_heads_e | Rule::head_dim_e => {
                        let v = self.int_u32(inner.next()?)?;
                        let slot = match rule {
                            Rule::layers_e => &mut d.layers,
                            Rule::kv_heads_e => &mut d.kv_heads,
                            _ => &mut d.head_dim,
                        };
                        let mut tmp = slot.take();
                        self.set(&mut tmp, v, &key, espan, first);
                        *slot = tmp;
                    }
                    Rule::sampling_e => {
                        let key_pair = head?;
                        let s = self.sampling(key_pair, inner.next()?)?;
                        if let Some(prev) = d.sampling.iter().find(|x| x.key.node == s.key.node) {
                            let prev_span = prev.key.span;
                            self.duplicate(&key, espan, prev_span);
                        } else {
                            d.sampling.push(s);
                        }
                    }
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Model)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    fn sampling(&mut self, key: Pair<Rule>, value: Pair<Rule>) -> Option<SamplingSetting> {
        let key = self.name(key);
        let value = self.decimal(value)?;
        Some(SamplingSetting { key, value })
    }

    fn sources(&mut self, pair: Pair<Rule>, span: Span) -> Option<SourcesDecl> {
        let mut it = pair.into_inner();
        it.next();
        let name = self.name(it.next()?);
        let mut d = SourcesDecl {
            broken: Vec::new(),
            name,
            span,
            files: Vec::new(),
            bates: None,
            description: None,
            admit: Vec::new(),
        };
        let mut first_bates = None;
        let mut first_desc = None;
        for e in it {
            let espan = self.span(&e);
            let mut inner = e.clone().into_inner();
            inner.next();
            let _ = (|| -> Option<()> {
                match e.as_rule() {
                    Rule::files_e => d.files.extend(inner.map(|p| self.string(p))),
                    Rule::bates_e => {
                        let prefix = self.string(inner.next()?);
                        let mut b = BatesDecl {
                            prefix,
                            start: None,
                            width: None,
                            suffix: None,
                            span: espan,
                        };
                        for opt in inner {
                            let mut o = opt.into_inner();
                            let key = o.next()?;
                            let val = o.next()?;
                            let vspan = self.span(&val);
                            match (key.as_str(), val.as_rule()) {
                                ("start", Rule::int) => b.start = self.int_u64(val),
                                ("width", Rule::int) => b.width = self.int_u32(val),
                                ("suffix", Rule::string) => b.suffix = Some(self.string(val)),
                                (k, _) => self.err(
                                    Code::InvalidValue,
                                    vspan,
                                    format!(
                                        "`{k}` in a Bates declaration takes {}",
                                        if k == "suffix" {
                                            "a quoted text"
                                        } else {
                                            "a whole number"
                                        }
                                    ),
                                    "this value",
                                    "write it like `bates \"SMITH\" start 1 width 6 suffix \"-C\"`",
                                ),
                            }
                        }
                        let f = *first_bates.get_or_insert(espan);
                        self.set(&mut d.bates, b, "bates", espan, f);
                    }
                    Rule::description_e => {
                        let v = self.string(inner.next()?);
                        let f = *first_desc.get_or_insert(espan);
                        self.set(&mut d.description, v, "description", espan, f);
                    }
                    Rule::admit_e => {
                        let file = self.string(inner.next()?);
                        inner.next()?;
                        let reason = self.string(inner.next()?);
                        d.admit.push((file, reason));
                    }
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Sources)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    fn stage(&mut self, pair: Pair<Rule>, span: Span) -> Option<StageDecl> {
        let mut it = pair.into_inner();
        it.next();
        let name = self.name(it.next()?);
        let mut d = StageDecl {
            broken: Vec::new(),
            name,
            span,
            model: None,
            prompt: None,
            reads: Vec::new(),
            after: Vec::new(),
            when: None,
            returns: None,
            stop_when: None,
            revise: None,
            sampling: Vec::new(),
            timeout: None,
        };
        let mut firsts: Vec<(String, Span)> = Vec::new();
        for e in it {
            let espan = self.span(&e);
            let rule = e.as_rule();
            let (key, first) = entry_key(&e, espan, &mut firsts);
            let mut inner = e.clone().into_inner();
            let head = inner.next();
            let _ = (|| -> Option<()> {
                match rule {
                    Rule::after_clause | Rule::after_e => {
                        d.after.extend(inner.map(|p| self.name(p)));
                    }
                    Rule::when_clause | Rule::when_e => {
                        let c = self.cond(inner.next()?, 0)?;
                        self.set(&mut d.when, c, "when", espan, first);
                    }
                    Rule::model_e => {
                        let v = self.name(inner.next()?);
                        self.set(&mut d.model, v, &key, espan, first);
                    }
                    Rule::prompt_e => {
                        let v = self.prompt(inner.next()?);
                        self.set(&mut d.prompt, v, &key, espan, first);
                    }
                    Rule::reads_e => d.reads.extend(inner.map(|p| self.name(p))),
                    Rule::returns_e => {
                        let fields = self.record(inner.next()?, 0)?;
                        self.set(
                            &mut d.returns,
                            Spanned::new(fields, espan),
                            &key,
                            espan,
                            first,
                        );
                    }
                    Rule::stop_e => {
                        inner.next();
                        let c = self.cond(inner.next()?, 0)?;
                        self.set(&mut d.stop_when, c, "stop when", espan, first);
                    }
                    Rule::revise_e => {
                        let target = self.name(inner.next()?);
                        inner.next();
                        let until = self.cond(inner.next()?, 0)?;
                        let max_rounds = inner
                            .find(|p| p.as_rule() == Rule::int)
                            .and_then(|p| self.int_u32(p));
                        let v = Revise {
                            target,
                            until,
                            max_rounds,
                            span: espan,
                        };
                        self.set(&mut d.revise, v, &key, espan, first);
                    }
                    Rule::sampling_e => {
                        let s = self.sampling(head?, inner.next()?)?;
                        if let Some(prev) = d.sampling.iter().find(|x| x.key.node == s.key.node) {
                            let prev_span = prev.key.span;
                            self.duplicate(&key, espan, prev_span);
                        } else {
                            d.sampling.push(s);
                        }
                    }
                    Rule::timeout_e => {
                        let v = self.duration(inner.next()?)?;
                        self.set(&mut d.timeout, v, &key, espan, first);
                    }
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Stage)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    fn tool(&mut self, pair: Pair<Rule>, span: Span) -> Option<ToolDecl> {
        let mut it = pair.into_inner();
        it.next();
        let name = self.name(it.next()?);
        it.next();
        let kind = self.name(it.next()?);
        let mut d = ToolDecl {
            broken: Vec::new(),
            name,
            kind,
            span,
            reads: Vec::new(),
            after: Vec::new(),
            options: Vec::new(),
        };
        for e in it {
            let espan = self.span(&e);
            let mut inner = e.clone().into_inner();
            inner.next();
            let _ = (|| -> Option<()> {
                match e.as_rule() {
                    Rule::after_clause | Rule::after_e => {
                        d.after.extend(inner.map(|p| self.name(p)))
                    }
                    Rule::reads_e => d.reads.extend(inner.map(|p| self.name(p))),
                    Rule::option_e => {
                        let mut o = e.into_inner();
                        let key = self.name(o.next()?);
                        let v = o.next()?;
                        let vspan = self.span(&v);
                        let value = match v.as_rule() {
                            Rule::string => OptionValue::Text(self.string(v).node),
                            Rule::size => OptionValue::Size(self.size(v)?.node),
                            Rule::duration => OptionValue::DurationMs(self.duration(v)?.node),
                            Rule::decimal => OptionValue::Number(self.decimal(v)?.node),
                            _ => OptionValue::Word(v.as_str().to_string()),
                        };
                        if let Some(prev) = d.options.iter().find(|x| x.key.node == key.node) {
                            let prev_span = prev.key.span;
                            self.duplicate(&key.node, espan, prev_span);
                        } else {
                            d.options.push(ToolOption {
                                key,
                                value: Spanned::new(value, vspan),
                            });
                        }
                    }
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Tool)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    fn verify_entry(&mut self, e: Pair<Rule>, body: &mut VerifyBody) {
        let espan = self.span(&e);
        match e.as_rule() {
            Rule::rule_e => {
                let mut it = e.into_inner();
                let (Some(kind), Some(_must), Some(req)) = (it.next(), it.next(), it.next()) else {
                    return;
                };
                let kind = self.name(kind);
                let requirement = self.name(req);
                let policy = it.nth(1).map(|p| self.name(p));
                body.rules.push(Rule_ {
                    kind,
                    requirement,
                    policy,
                    span: espan,
                });
            }
            Rule::rules_e => {
                if let Some(p) = e.into_inner().nth(1) {
                    body.includes.push(self.name(p));
                }
            }
            Rule::on_failure_e => {
                let mut it = e.into_inner().skip(2);
                let Some(policy) = it.next() else { return };
                let policy = self.name(policy);
                let max_rounds = it
                    .find(|p| p.as_rule() == Rule::int)
                    .and_then(|p| self.int_u32(p));
                let v = OnFailure {
                    policy,
                    max_rounds,
                    span: espan,
                };
                if let Some(prev) = &body.on_failure {
                    let prev_span = prev.span;
                    self.duplicate("on failure", espan, prev_span);
                } else {
                    body.on_failure = Some(v);
                }
            }
            Rule::bad_entry => {
                self.bad_entry(&e, Block::Verify);
            }
            _ => {}
        }
    }

    fn prompt(&mut self, p: Pair<Rule>) -> Prompt {
        match p.as_rule() {
            Rule::text_block => {
                let inner = p.into_inner().next();
                let (text, span) = match inner {
                    Some(i) => (i.as_str().to_string(), self.span(&i)),
                    None => (String::new(), Span::default()),
                };
                Prompt::Inline(Spanned::new(text, span))
            }
            Rule::string => {
                let mut s = self.string(p);
                if s.node.ends_with(".hbs") {
                    Prompt::File(s)
                } else {
                    // Point inside the quotes, so template positions map onto the file.
                    s.span = Span::new(s.span.start + 1, s.span.end.saturating_sub(1));
                    Prompt::Inline(s)
                }
            }
            _ => Prompt::Named(self.name(p)),
        }
    }

    fn record(&mut self, p: Pair<Rule>, depth: usize) -> Option<Vec<Field>> {
        if depth > MAX_NESTING {
            self.err(
                Code::Syntax,
                self.span(&p),
                "record types are nested too deeply",
                "here",
                "flatten the answer; a stage's answer rarely needs more than two levels",
            );
            return None;
        }
        let mut fields = Vec::new();
        for f in p.into_inner() {
            let mut it = f.into_inner();
            let name = self.name(it.next()?);
            let ty = self.type_expr(it.next()?, depth + 1)?;
            fields.push(Field { name, ty });
        }
        Some(fields)
    }

    fn type_expr(&mut self, p: Pair<Rule>, depth: usize) -> Option<Spanned<TypeExpr>> {
        let span = self.span(&p);
        let inner = p.into_inner().next()?;
        let node = match inner.as_rule() {
            Rule::list_type => {
                let t = inner.into_inner().nth(2)?;
                TypeExpr::List(Box::new(self.type_expr(t, depth + 1)?))
            }
            Rule::record_kw_type => {
                TypeExpr::Record(self.record(inner.into_inner().nth(1)?, depth + 1)?)
            }
            Rule::record_type => TypeExpr::Record(self.record(inner, depth + 1)?),
            _ => TypeExpr::Prim(inner.as_str().to_string()),
        };
        Some(Spanned::new(node, span))
    }

    fn cond(&mut self, p: Pair<Rule>, depth: usize) -> Option<Cond> {
        if depth > MAX_NESTING {
            self.err(
                Code::Syntax,
                self.span(&p),
                "this condition is nested too deeply",
                "here",
                "split it, or remove redundant parentheses",
            );
            return None;
        }
        let span = self.span(&p);
        match p.as_rule() {
            Rule::cond => self.cond(p.into_inner().next()?, depth + 1),
            Rule::disj | Rule::conj => {
                let is_or = p.as_rule() == Rule::disj;
                let mut parts = Vec::new();
                for c in p.into_inner() {
                    if matches!(c.as_rule(), Rule::kw_or | Rule::kw_and) {
                        continue;
                    }
                    parts.push(self.cond(c, depth + 1)?);
                }
                Some(if parts.len() == 1 {
                    parts.pop()?
                } else if is_or {
                    Cond::Or(parts)
                } else {
                    Cond::And(parts)
                })
            }
            Rule::neg => {
                let mut it = p.into_inner();
                let first = it.next()?;
                if first.as_rule() == Rule::kw_not {
                    let c = self.cond(it.next()?, depth + 1)?;
                    Some(Cond::Not(Box::new(c), span))
                } else {
                    self.cond(first, depth + 1)
                }
            }
            Rule::cmp => {
                let mut it = p.into_inner();
                let left = it.next()?;
                let left_cond = self.atom(left, depth + 1)?;
                match it.next() {
                    None => Some(left_cond),
                    Some(op) if op.as_rule() == Rule::cmp_op => {
                        let right = self.atom(it.next()?, depth + 1)?;
                        let (Cond::Operand(l), Cond::Operand(r)) = (left_cond, right) else {
                            self.err(
                                Code::Syntax,
                                span,
                                "only a field or a value can be compared",
                                "this comparison",
                                "compare a field with a value, e.g. `attack.score >= 7`",
                            );
                            return None;
                        };
                        let op = match op.as_str() {
                            "==" => CmpOp::Eq,
                            "!=" => CmpOp::Ne,
                            "<" => CmpOp::Lt,
                            "<=" => CmpOp::Le,
                            ">" => CmpOp::Gt,
                            _ => CmpOp::Ge,
                        };
                        Some(Cond::Compare {
                            op,
                            left: l,
                            right: r,
                        })
                    }
                    Some(is) => {
                        let negated = is.into_inner().any(|x| x.as_rule() == Rule::kw_not);
                        let Cond::Operand(operand) = left_cond else {
                            self.err(
                                Code::Syntax,
                                span,
                                "`is empty` applies to a field",
                                "here",
                                "write e.g. `attack.objections is empty`",
                            );
                            return None;
                        };
                        Some(Cond::IsEmpty {
                            operand,
                            negated,
                            span,
                        })
                    }
                }
            }
            _ => self.atom(p, depth + 1),
        }
    }

    fn atom(&mut self, p: Pair<Rule>, depth: usize) -> Option<Cond> {
        let span = self.span(&p);
        let operand = match p.as_rule() {
            Rule::cond => return self.cond(p, depth),
            Rule::kw_true => Operand::Bool(Spanned::new(true, span)),
            Rule::kw_false => Operand::Bool(Spanned::new(false, span)),
            Rule::date_lit => Operand::Date(Spanned::new(p.as_str().to_string(), span)),
            Rule::decimal => Operand::Number(self.decimal(p)?),
            Rule::string => Operand::Text(self.string(p)),
            Rule::field_path => {
                let text = p.as_str();
                match text.split_once('.') {
                    Some((stage, field)) => Operand::Field {
                        stage: Some(Spanned::new(
                            stage.to_string(),
                            Span::new(span.start, span.start + stage.len()),
                        )),
                        field: Spanned::new(
                            field.to_string(),
                            Span::new(span.start + stage.len() + 1, span.end),
                        ),
                    },
                    None => Operand::Field {
                        stage: None,
                        field: Spanned::new(text.to_string(), span),
                    },
                }
            }
            _ => return None,
        };
        Some(Cond::Operand(operand))
    }

    // ------------------------------------------------------------ literals

    pub(crate) fn string(&mut self, p: Pair<Rule>) -> Spanned<String> {
        let span = self.span(&p);
        let raw = p.into_inner().next().map_or("", |i| i.as_str());
        Spanned::new(unescape(raw), span)
    }

    fn int_u64(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        match p.as_str().parse::<u64>() {
            Ok(v) => Some(Spanned::new(v, span)),
            Err(_) => {
                self.too_large(span, u64::MAX as f64);
                None
            }
        }
    }

    fn int_u32(&mut self, p: Pair<Rule>) -> Option<Spanned<u32>> {
        let span = self.span(&p);
        match p.as_str().parse::<u32>() {
            Ok(v) => Some(Spanned::new(v, span)),
            Err(_) => {
                self.too_large(span, u32::MAX as f64);
                None
            }
        }
    }

    fn too_large(&mut self, span: Span, max: f64) {
        self.err(
            Code::NumberTooLarge,
            span,
            "this number is too large",
            "too large",
            &format!("the largest value allowed here is {max}"),
        );
    }

    fn decimal(&mut self, p: Pair<Rule>) -> Option<Spanned<f64>> {
        let span = self.span(&p);
        match p.as_str().parse::<f64>() {
            Ok(v) if v.is_finite() && v.abs() < 1e15 => Some(Spanned::new(v, span)),
            _ => {
                self.too_large(span, 1e15);
                None
            }
        }
    }

    /// `32k` → 32768, `2M` → 2097152: context sizes count tokens in powers of two, as
    /// llama.cpp does.
    fn count(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        let text = p.as_str();
        let (num, mult) = match text.chars().last() {
            Some('k' | 'K') => (&text[..text.len() - 1], 1024.0),
            Some('M') => (&text[..text.len() - 1], 1024.0 * 1024.0),
            _ => (text, 1.0),
        };
        let v = num.parse::<f64>().ok()? * mult;
        if v.fract() != 0.0 {
            self.err(
                Code::InvalidValue,
                span,
                "a context size must be a whole number of tokens",
                "not whole",
                "write e.g. `32k` or `32768`",
            );
            return None;
        }
        if v > 1e12 {
            self.too_large(span, 1e12);
            return None;
        }
        Some(Spanned::new(v as u64, span))
    }

    fn size(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        let mut it = p.into_inner();
        let num: f64 = it.next()?.as_str().parse().ok()?;
        let unit = it.next()?.as_str();
        let mult: f64 = match unit {
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            "KB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            _ => 1e12,
        };
        let v = num * mult;
        if !(v.is_finite() && v < 1.0e18) {
            self.too_large(span, 1.0e18);
            return None;
        }
        Some(Spanned::new(v.round() as u64, span))
    }

    fn duration(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        let t = p.as_str();
        let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
            (n, 1u64)
        } else if let Some(n) = t.strip_suffix('s') {
            (n, 1000)
        } else if let Some(n) = t.strip_suffix('m') {
            (n, 60_000)
        } else {
            (t.strip_suffix('h').unwrap_or(t), 3_600_000)
        };
        match num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)) {
            Some(ms) => Some(Spanned::new(ms, span)),
            None => {
                self.too_large(span, u64::MAX as f64);
                None
            }
        }
    }
}

/// A setting's key, and where that key was first set in its block (itself, the first time), so
/// a second occurrence can be reported next to the first.
fn entry_key(e: &Pair<Rule>, span: Span, firsts: &mut Vec<(String, Span)>) -> (String, Span) {
    let key = e
        .as_str()
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    match firsts.iter().find(|(k, _)| *k == key) {
        Some((_, first)) => (key, *first),
        None => {
            firsts.push((key.clone(), span));
            (key, span)
        }
    }
}

// The AST's `Rule` type would clash with pest's generated `Rule`.
use super::ast::Rule as Rule_;

pub(crate) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|c| *c != '}').collect();
                let ch = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                out.push(ch);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Removes the first line break and the indentation common to every line, so a `"""` block
/// can sit indented in the file and still render flush left.
pub fn dedent(raw: &str) -> String {
    let body = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    let indent = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(body.len());
    for line in body.lines() {
        out.push_str(
            line.get(indent..)
                .unwrap_or(line.trim_start_matches([' ', '\t'])),
        );
        out.push('\n');
    }
    // Keep the closing `"""` line from adding a trailing blank line.
    while out.ends_with("\n\n") || out.ends_with(" \n") {
        out.pop();
    }
    let trimmed = out.trim_end_matches([' ', '\t']).len();
    out.truncate(trimmed);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedent_strips_common_indent() {
        assert_eq!(dedent("\n    a\n      b\n    "), "a\n  b\n");
    }

    #[test]
    fn unescape_handles_escapes() {
        assert_eq!(unescape(r#"a\"b\n\u{41}"#), "a\"b\nA");
    }

    #[test]
    fn counts_use_powers_of_two() {
        let p = parse("model m on p { ctx 32k }", 0);
        let Item::Model(m) = &p.file.items[0] else {
            panic!()
        };
        assert_eq!(m.ctx.as_ref().unwrap().node, 32768);
    }

    #[test]
    fn sizes_honour_binary_and_decimal_units() {
        let p = parse("pool p { vram 32 GiB + 16 GB }", 0);
        let Item::Pool(pool) = &p.file.items[0] else {
            panic!()
        };
        let Some(Spanned {
            node: Vram::List(v),
            ..
        }) = &pool.vram
        else {
            panic!()
        };
        assert_eq!(v[0].node, 32 << 30);
        assert_eq!(v[1].node, 16_000_000_000);
    }
}
