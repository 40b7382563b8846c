//! Text → AST. Pest recognises the text; this module builds the tree, converts numbers and
//! units, and turns every swallowed piece of bad text into a diagnostic with a span and a hint.
//!
//! One builder with one method per grammar rule, kept in one file (about 600 lines) so that a
//! rule and the node it builds are read side by side; recovery from bad text lives in
//! `recover.rs`, the lexical checks that run first in `lexical.rs`.

use pest::iterators::{Pair, Pairs};
use pest::Parser as _;

use super::ast::*;
// The AST's `Rule` type would clash with pest's generated `Rule`.
use super::ast::Rule as Rule_;
use super::grammar::{with_pest, Block, LexParser, Rule};
use super::limits::too_deep;
use super::reuse::{Piece, Reuse};
use super::{lexical, recover};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};

/// The result of parsing one file: as much of the tree as could be read, and what was wrong.
#[derive(Debug, Default)]
pub struct Parsed {
    pub file: File,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a whole `.lex` file. Never panics; every problem is a diagnostic.
pub fn parse(text: &str, file: FileId) -> Parsed {
    parse_with(text, file, None)
}

/// [`parse`], reusing the parse of every declaration that `reuse` holds from an earlier
/// parse (see [`Reuse`]); the result is the same.
pub fn parse_reusing(text: &str, file: FileId, reuse: &mut Reuse) -> Parsed {
    parse_with(text, file, Some(reuse))
}

fn parse_with(text: &str, file: FileId, reuse: Option<&mut Reuse>) -> Parsed {
    if let Some(d) = too_deep(text, file) {
        return Parsed {
            file: File::default(),
            diagnostics: vec![d],
        };
    }
    let scan = lexical::scan(text, file);
    let read = scan.repaired.as_deref().unwrap_or(text);
    let mut b = Builder::new(file);
    // An unclosed comment or text blanks the rest of the file: that file is read whole.
    let mut items = match reuse {
        Some(r) if scan.cut.is_none() => {
            let read = r.read(read, file, &mut |piece| {
                let mut b = Builder::new(file);
                let items = b.items(piece);
                Piece {
                    items,
                    diagnostics: b.diags,
                    broken: b.broken,
                    recovered: b.recovered,
                }
            });
            b.diags = read.diagnostics;
            b.broken = read.broken;
            read.items
        }
        _ => b.items(read),
    };
    // What the scan explained, the parser only echoes.
    b.diags.retain(|d| !scan.explains(d.position().1));
    if let Some(cut) = scan.cut {
        cut_short(&mut items, cut);
    }
    let mut diagnostics = scan.diagnostics;
    diagnostics.append(&mut b.diags);
    b.diags = diagnostics;
    if items.is_empty() && b.diags.is_empty() {
        b.diags.push(
            Diagnostic::new(Code::EmptyFile, "this file declares nothing")
                .in_file(file)
                .label(Span::new(0, text.len().min(1)), "")
                .help("start with a header such as `workflow affidavit \"Affidavit from intake to draft\"`"),
        );
    }
    Parsed {
        file: File {
            items,
            broken: b.broken,
        },
        diagnostics: b.diags,
    }
}

/// Marks the declaration an unclosed comment or text starts in as incomplete, so the settings
/// it lost are not reported missing.
fn cut_short(items: &mut [Item], cut: usize) {
    for item in items {
        let (span, broken) = match item {
            Item::Pool(d) => (d.span, &mut d.broken),
            Item::Model(d) => (d.span, &mut d.broken),
            Item::Sources(d) => (d.span, &mut d.broken),
            Item::Stage(d) => (d.span, &mut d.broken),
            Item::Tool(d) => (d.span, &mut d.broken),
            _ => continue,
        };
        if span.start <= cut && cut <= span.end {
            broken.push("*".to_string());
        }
    }
}

pub(crate) struct Builder {
    pub(crate) file: FileId,
    pub(crate) base: usize,
    pub(crate) diags: Vec<Diagnostic>,
    /// Names of declarations that did not parse at all.
    pub(crate) broken: Vec<String>,
    /// Whether a catch-all for a malformed setting or declaration was used.
    pub(crate) recovered: bool,
}

impl Builder {
    /// A builder for `file`, from its start, with nothing said yet.
    pub(crate) fn new(file: FileId) -> Builder {
        Builder {
            file,
            base: 0,
            diags: Vec::new(),
            broken: Vec::new(),
            recovered: false,
        }
    }

    /// The declarations of `text`, read as a whole file.
    fn items(&mut self, text: &str) -> Vec<Item> {
        let mut items = Vec::new();
        match with_pest(false, || LexParser::parse(Rule::file, text)) {
            Ok(mut pairs) => {
                if let Some(file_pair) = pairs.next() {
                    for pair in file_pair.into_inner() {
                        if pair.as_rule() == Rule::EOI {
                            continue;
                        }
                        if let Some(item) = self.item(pair) {
                            items.push(item);
                        }
                    }
                }
            }
            // The catch-alls make this unreachable for ordinary text, but a diagnostic is
            // still better than a panic if the grammar ever rejects a file outright.
            Err(e) => self
                .diags
                .push(recover::pest_error(&e, text, self.base, self.file, None)),
        }
        items
    }

    pub(super) fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span::new(self.base + s.start(), self.base + s.end())
    }

    pub(super) fn err(
        &mut self,
        code: Code,
        span: Span,
        msg: impl Into<String>,
        label: &str,
        help: &str,
    ) {
        let mut d = Diagnostic::new(code, msg)
            .in_file(self.file)
            .label(span, label);
        if !help.is_empty() {
            d = d.help(help);
        }
        self.diags.push(d);
    }

    pub(super) fn name(&self, p: Pair<Rule>) -> Name {
        Spanned::new(p.as_str().to_string(), self.span(&p))
    }

    pub(super) fn item(&mut self, pair: Pair<Rule>) -> Option<Item> {
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
            Rule::ledger_decl => Item::Ledger(self.string(pair.into_inner().nth(1)?)),
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
                let (mut it, name) = self.named(pair)?;
                let body = self.prompt(it.next()?);
                Item::Template(TemplateDecl { name, body, span })
            }
            Rule::output_decl => {
                let mut it = pair.into_inner();
                it.next();
                let path = self.string(it.next()?);
                it.next();
                let from = self.name(it.next()?);
                let (mut appendix, mut layout, mut unverified) = (None, None, false);
                while let Some(p) = it.next() {
                    match p.as_rule() {
                        Rule::kw_appendix => appendix = it.next().map(|p| self.name(p)),
                        Rule::kw_layout => layout = it.next().map(|p| self.name(p)),
                        Rule::kw_unverified => unverified = true,
                        _ => {}
                    }
                }
                Item::Output(OutputDecl {
                    path,
                    from,
                    appendix,
                    layout,
                    unverified,
                    span,
                })
            }
            Rule::pool_decl => Item::Pool(Box::new(self.pool(pair, span)?)),
            Rule::model_decl => Item::Model(Box::new(self.model(pair, span)?)),
            Rule::sources_decl => Item::Sources(self.sources(pair, span)?),
            Rule::stage_decl => Item::Stage(Box::new(self.stage(pair, span)?)),
            Rule::tool_decl => Item::Tool(self.tool(pair, span)?),
            Rule::production_decl => Item::Tool(self.production(pair, span)?),
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
                let (it, name) = self.named(pair)?;
                let mut body = VerifyBody::default();
                for p in it {
                    self.verify_entry(p, &mut body);
                }
                Item::Ruleset(RulesetDecl { name, span, body })
            }
            Rule::bad_item => {
                self.recovered = true;
                let d = recover::bad_item(pair.as_str(), span.start, self.file);
                self.diags.push(d);
                self.broken.extend(recover::declared_name(pair.as_str()));
                return None;
            }
            _ => return None,
        })
    }

    /// Reports a malformed setting; returns the setting it was meant to be, if clear.
    pub(super) fn bad_entry(&mut self, p: &Pair<Rule>, block: Block) -> Option<String> {
        self.recovered = true;
        let span = self.span(p);
        let (d, key) = recover::bad_entry(p.as_str(), span.start, self.file, block);
        self.diags.push(d);
        key
    }

    /// Records a setting, reporting a second occurrence instead of silently overwriting.
    pub(super) fn set<T>(
        &mut self,
        slot: &mut Option<T>,
        value: T,
        key: &str,
        span: Span,
        first: Span,
    ) {
        if slot.is_some() {
            self.duplicate(key, span, first);
        } else {
            *slot = Some(value);
        }
    }

    /// Sets `slot` to `v` the first time `key` is set; a second time is a duplicate
    /// setting, at `span`, of the first (whose span `span_of` gives).
    fn set_once<T>(
        &mut self,
        slot: &mut Option<T>,
        v: T,
        key: &str,
        span: Span,
        span_of: fn(&T) -> Span,
    ) {
        match slot {
            Some(prev) => {
                let first = span_of(prev);
                self.duplicate(key, span, first);
            }
            None => *slot = Some(v),
        }
    }

    pub(super) fn duplicate(&mut self, key: &str, span: Span, first: Span) {
        self.diags.push(
            Diagnostic::new(Code::DuplicateSetting, format!("`{key}` is set twice"))
                .in_file(self.file)
                .label(span, "set again here")
                .label(first, "first set here")
                .help("keep one of the two lines"),
        );
    }

    pub(super) fn sources(&mut self, pair: Pair<Rule>, span: Span) -> Option<SourcesDecl> {
        let (it, name) = self.named(pair)?;
        let mut d = SourcesDecl {
            name,
            span,
            files: Vec::new(),
            bates: None,
            description: None,
            admit: Vec::new(),
            ocr_optional: false,
            broken: Vec::new(),
        };
        let mut first_bates = None;
        let mut first_desc = None;
        for (e, _, espan, _, _, _, mut inner) in self.entries(it) {
            let _ = (|| -> Option<()> {
                match e.as_rule() {
                    Rule::files_e => d.files.extend(inner.map(|p| self.string(p))),
                    Rule::bates_e => {
                        let b = self.bates(inner, espan)?;
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
                    Rule::ocr_e => d.ocr_optional = true,
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Sources)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    /// `bates "PREFIX" start N width N suffix "S"`, in a `sources` or `production` block.
    pub(super) fn bates(
        &mut self,
        mut inner: pest::iterators::Pairs<Rule>,
        espan: Span,
    ) -> Option<BatesDecl> {
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
        Some(b)
    }

    pub(super) fn stage(&mut self, pair: Pair<Rule>, span: Span) -> Option<StageDecl> {
        let (it, name) = self.named(pair)?;
        let mut d = StageDecl {
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
            broken: Vec::new(),
        };
        for (e, rule, espan, key, first, head, mut inner) in self.entries(it) {
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

    pub(super) fn tool(&mut self, pair: Pair<Rule>, span: Span) -> Option<ToolDecl> {
        let (mut it, name) = self.named(pair)?;
        it.next();
        let kind = self.name(it.next()?);
        let mut d = ToolDecl::new(name, kind, span);
        for (e, _, espan, _, _, _, inner) in self.entries(it) {
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

    pub(super) fn verify_entry(&mut self, e: Pair<Rule>, body: &mut VerifyBody) {
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
            Rule::judge_e => {
                let Some(model) = e.into_inner().nth(1) else {
                    return;
                };
                let model = self.name(model);
                self.set_once(&mut body.judge, model, "judge", espan, |p| p.span);
            }
            Rule::allow_e => {
                let mut it = e.into_inner().skip(1);
                let Some(what) = it.next() else { return };
                let what = self.name(what);
                let names = it.map(|p| self.string(p)).collect();
                body.allow.push((what, names));
            }
            Rule::ignore_e => {
                let mut it = e.into_inner().skip(1);
                let Some(what) = it.next() else { return };
                let what = self.name(what);
                let names = it.map(|p| self.string(p)).collect();
                body.ignore.push((what, names));
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
                self.set_once(&mut body.on_failure, v, "on failure", espan, |p| p.span);
            }
            Rule::bad_entry => {
                self.bad_entry(&e, Block::Verify);
            }
            _ => {}
        }
    }

    pub(super) fn prompt(&mut self, p: Pair<Rule>) -> Prompt {
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
                if super::literal::names_a_file(&s.node) {
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

    // ------------------------------------------------------------ literals
}

/// A setting's key, and where that key was first set in its block (itself, the first time), so
/// a second occurrence can be reported next to the first.
/// One entry of a block, as every block reads it: the entry, its rule and span, its key and
/// where that key was first set, its first part (the keyword) and the parts after it.
pub(super) type Entry<'i> = (
    Pair<'i, Rule>,
    Rule,
    Span,
    String,
    Span,
    Option<Pair<'i, Rule>>,
    Pairs<'i, Rule>,
);

impl Builder {
    /// A declaration's parts after its keyword and the name that follows it, and that name.
    pub(super) fn named<'i>(&self, pair: Pair<'i, Rule>) -> Option<(Pairs<'i, Rule>, Name)> {
        let mut it = pair.into_inner();
        it.next();
        let name = self.name(it.next()?);
        Some((it, name))
    }

    /// The entries of a block, in order, each with its key and where that key was first set.
    pub(super) fn entries<'i>(&self, it: Pairs<'i, Rule>) -> Vec<Entry<'i>> {
        let mut firsts: Vec<(String, Span)> = Vec::new();
        it.map(|e| {
            let espan = self.span(&e);
            let rule = e.as_rule();
            let (key, first) = entry_key(&e, espan, &mut firsts);
            let mut inner = e.clone().into_inner();
            let head = inner.next();
            (e, rule, espan, key, first, head, inner)
        })
        .collect()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
