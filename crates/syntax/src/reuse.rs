//! Parsing a file again after an edit, reusing the parse of every declaration whose text did
//! not change: what an editor needs to check a large workflow on every keystroke.
//!
//! The text is split into top-level declarations at the lines that start one (a declaration
//! keyword at the start of a line, outside any block, string, text or comment). Each piece is
//! parsed alone, and its tree (with spans counted from the piece's start) is kept under the
//! hash of its text; a later parse that meets the same text again takes the tree and moves
//! its spans to where the piece now starts. A piece without malformed text parses alone as
//! in the whole file: its declarations end at their own closing braces, so the whole file's
//! parse has a declaration boundary where the piece ends. From the first piece that needed
//! the grammar's catch-alls for malformed text on, the rest of the file is read as one
//! piece, since a catch-all reads braces, strings and comments otherwise (`tim{eout 30m`
//! opens a group that the stage's `}` closes). So the parse, diagnostics included, is the
//! whole file's.

use std::collections::HashMap;

use super::ast::*;
use crate::diagnostic::{Diagnostic, FileId, Span};

/// What one declaration's text parsed to, with spans counted from its start.
#[derive(Clone, Default)]
pub(super) struct Piece {
    pub items: Vec<Item>,
    pub diagnostics: Vec<Diagnostic>,
    pub broken: Vec<String>,
    /// Whether a catch-all for a malformed setting or declaration was used: then the rest
    /// of the file is read as one piece.
    pub recovered: bool,
}

/// The parses of declarations kept between parses of a file (or of the files one check
/// reads). What one [`Reuse::begin`]-to-`begin` round did not use is dropped at the next.
#[derive(Default)]
pub struct Reuse {
    now: HashMap<blake3::Hash, Piece>,
    before: HashMap<blake3::Hash, Piece>,
    /// Pieces parsed, and pieces taken from the cache, since the cache was made.
    pub parsed: u64,
    pub reused: u64,
}

impl Reuse {
    /// Starts a round: what the last round did not use is dropped at the end of this one.
    pub fn begin(&mut self) {
        self.before = std::mem::take(&mut self.now);
    }

    /// The pieces of `text` (already scanned and repaired, see `parse`) read one by one, as
    /// one piece with spans from the start of `text`, its diagnostics in `file`.
    pub(super) fn read(
        &mut self,
        text: &str,
        file: FileId,
        parse_piece: &mut dyn FnMut(&str) -> Piece,
    ) -> Piece {
        let starts = declaration_starts(text);
        let mut out = Piece::default();
        let mut k = 0;
        while k < starts.len() {
            let start = starts[k];
            let end = starts.get(k + 1).copied().unwrap_or(text.len());
            let mut got = self.piece(&text[start..end], parse_piece);
            k += 1;
            if got.recovered && k < starts.len() {
                got = self.piece(&text[start..], parse_piece);
                k = starts.len();
            }
            for item in &mut got.items {
                item.shift(start);
            }
            for d in &mut got.diagnostics {
                d.shift(start);
                d.file = d.file.map(|_| file);
            }
            out.items.append(&mut got.items);
            out.diagnostics.append(&mut got.diagnostics);
            out.broken.append(&mut got.broken);
        }
        out
    }

    /// The parse of one piece, kept or made (and kept).
    fn piece(&mut self, piece: &str, parse_piece: &mut dyn FnMut(&str) -> Piece) -> Piece {
        let key = blake3::hash(piece.as_bytes());
        if let Some(kept) = self.before.remove(&key) {
            self.now.insert(key, kept);
        }
        if let Some(kept) = self.now.get(&key) {
            self.reused += 1;
            return kept.clone();
        }
        self.parsed += 1;
        let p = parse_piece(piece);
        self.now.insert(key, p.clone());
        p
    }
}

/// Where each top-level declaration starts: 0, then every line that begins with a
/// declaration keyword while no block, string, text or comment is open.
pub(super) fn declaration_starts(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut starts = vec![0];
    let mut depth = 0usize;
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        if line_start && depth == 0 && i > 0 && starts_declaration(&b[i..]) {
            starts.push(i);
        }
        line_start = false;
        let rest = &b[i..];
        match b[i] {
            b'\n' => line_start = true,
            b'/' if rest.starts_with(b"//") => {
                i = memchr::memchr(b'\n', rest).map_or(b.len(), |e| i + e);
                continue;
            }
            b'/' if rest.starts_with(b"/*") => match memchr::memmem::find(&rest[2..], b"*/") {
                Some(e) => {
                    i += e + 4;
                    continue;
                }
                None => break,
            },
            b'"' if rest.starts_with(b"\"\"\"") => {
                match memchr::memmem::find(&rest[3..], b"\"\"\"") {
                    Some(e) => {
                        i += e + 6;
                        continue;
                    }
                    None => break,
                }
            }
            b'"' => {
                // A string ends at its closing quote or, unclosed, at the end of its line.
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i < b.len() && b[i] == b'"' {
                    i += 1;
                }
                continue;
            }
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    starts
}

/// The words that start a top-level declaration (the grammar's `top_keyword`).
const TOP_KEYWORDS: &[&[u8]] = &[
    b"workflow",
    b"matter",
    b"ledger",
    b"use",
    b"pool",
    b"model",
    b"sources",
    b"stage",
    b"tool",
    b"verify",
    b"output",
    b"template",
    b"ruleset",
    b"production",
];

fn starts_declaration(rest: &[u8]) -> bool {
    TOP_KEYWORDS.iter().any(|k| {
        rest.starts_with(k)
            && rest
                .get(k.len())
                // Not a longer name (`models_a`); a letter outside ASCII may continue a name.
                .is_some_and(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80))
    })
}

/// Moves every span of a tree by the same distance.
pub(crate) trait Shift {
    fn shift(&mut self, by: usize);
}

impl Shift for Span {
    fn shift(&mut self, by: usize) {
        self.start += by;
        self.end += by;
    }
}

macro_rules! no_spans {
    ($($t:ty),*) => { $(impl Shift for $t { fn shift(&mut self, _: usize) {} })* };
}
no_spans!(String, bool, u32, u64, f64, [f64; 4], CmpOp, OptionValue);

impl Shift for Diagnostic {
    fn shift(&mut self, by: usize) {
        for l in &mut self.labels {
            l.span.shift(by);
        }
        // Notes point into other files.
    }
}

impl<T: Shift> Shift for Spanned<T> {
    fn shift(&mut self, by: usize) {
        self.span.shift(by);
        self.node.shift(by);
    }
}

impl<T: Shift> Shift for Option<T> {
    fn shift(&mut self, by: usize) {
        if let Some(t) = self {
            t.shift(by);
        }
    }
}

impl<T: Shift> Shift for Vec<T> {
    fn shift(&mut self, by: usize) {
        for t in self {
            t.shift(by);
        }
    }
}

impl<T: Shift> Shift for Box<T> {
    fn shift(&mut self, by: usize) {
        (**self).shift(by);
    }
}

impl<A: Shift, B: Shift> Shift for (A, B) {
    fn shift(&mut self, by: usize) {
        self.0.shift(by);
        self.1.shift(by);
    }
}

/// A struct's spans moved field by field; the pattern names every field, so a field added
/// to the tree and forgotten here does not compile.
macro_rules! fields {
    ($($t:ident { $($f:ident),* $(,)? })*) => {
        $(impl Shift for $t {
            fn shift(&mut self, by: usize) {
                let $t { $($f),* } = self;
                $($f.shift(by);)*
            }
        })*
    };
}

fields! {
    WorkflowDecl { name, description, span }
    UseDecl { target, span }
    PoolDecl {
        name, span, host, gpus, link, vram, compute, serve, slots, binary, gpu, bandwidth,
        min_build, min_build_because, api_key_env, broken,
    }
    Serve { kind, endpoint, span }
    ModelDecl {
        name, pool, span, gguf, tag, weights, ctx, kv, kv_k, kv_v, flash_attn, min_decode,
        layers, kv_heads, head_dim, quant, dtype, params, active, sampling, broken,
    }
    SamplingSetting { key, value }
    SourcesDecl { name, span, files, bates, description, admit, ocr_optional, broken }
    BatesDecl { prefix, start, width, suffix, span }
    StageDecl {
        name, span, model, prompt, reads, after, when, returns, stop_when, revise, sampling,
        timeout, broken,
    }
    Field { name, ty }
    Revise { target, until, max_rounds, span }
    ToolDecl { name, kind, span, reads, after, options, broken, production }
    ProductionDecl { volume, bates, legends, designate, redact, withhold, natives, images, fields }
    RedactDecl { what, reason, span }
    WithholdDecl { files, privilege, because, span }
    ToolOption { key, value }
    VerifyDecl { target, against, span, body }
    RulesetDecl { name, span, body }
    VerifyBody { rules, includes, on_failure, allow, ignore, judge }
    Rule { kind, requirement, policy, span }
    OnFailure { policy, max_rounds, span }
    OutputDecl { path, from, appendix, layout, unverified, span }
    TemplateDecl { name, body, span }
}

impl Shift for Item {
    fn shift(&mut self, by: usize) {
        match self {
            Item::Workflow(d) => d.shift(by),
            Item::Matter(d) | Item::Ledger(d) => d.shift(by),
            Item::Use(d) => d.shift(by),
            Item::Pool(d) => d.shift(by),
            Item::Model(d) => d.shift(by),
            Item::Sources(d) => d.shift(by),
            Item::Stage(d) => d.shift(by),
            Item::Tool(d) => d.shift(by),
            Item::Verify(d) => d.shift(by),
            Item::Ruleset(d) => d.shift(by),
            Item::Output(d) => d.shift(by),
            Item::Template(d) => d.shift(by),
        }
    }
}

impl Shift for UseTarget {
    fn shift(&mut self, by: usize) {
        match self {
            UseTarget::Module(n) => n.shift(by),
            UseTarget::File(f) => f.shift(by),
        }
    }
}

impl Shift for Vram {
    fn shift(&mut self, by: usize) {
        match self {
            Vram::Repeat { count, size } => {
                count.shift(by);
                size.shift(by);
            }
            Vram::List(v) => v.shift(by),
        }
    }
}

impl Shift for Prompt {
    fn shift(&mut self, by: usize) {
        match self {
            Prompt::Inline(s) | Prompt::File(s) => s.shift(by),
            Prompt::Named(n) => n.shift(by),
        }
    }
}

impl Shift for TypeExpr {
    fn shift(&mut self, by: usize) {
        match self {
            TypeExpr::Prim(_) => {}
            TypeExpr::List(t) => t.shift(by),
            TypeExpr::Record(f) => f.shift(by),
        }
    }
}

impl Shift for Cond {
    fn shift(&mut self, by: usize) {
        match self {
            Cond::Or(v) | Cond::And(v) => v.shift(by),
            Cond::Not(c, s) => {
                c.shift(by);
                s.shift(by);
            }
            Cond::Compare { op: _, left, right } => {
                left.shift(by);
                right.shift(by);
            }
            Cond::IsEmpty {
                operand,
                negated: _,
                span,
            } => {
                operand.shift(by);
                span.shift(by);
            }
            Cond::Operand(o) => o.shift(by),
        }
    }
}

impl Shift for Operand {
    fn shift(&mut self, by: usize) {
        match self {
            Operand::Field { stage, field } => {
                stage.shift(by);
                field.shift(by);
            }
            Operand::Bool(s) => s.shift(by),
            Operand::Number(s) => s.shift(by),
            Operand::Text(s) | Operand::Date(s) => s.shift(by),
        }
    }
}

impl Shift for RedactWhat {
    fn shift(&mut self, by: usize) {
        match self {
            RedactWhat::Kind(n) => n.shift(by),
            RedactWhat::Pattern(p) => p.shift(by),
            RedactWhat::Box { file, page, rect } => {
                file.shift(by);
                page.shift(by);
                rect.shift(by);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, parse_reusing};

    /// A small deterministic generator, so a failure is the same on every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
    }

    fn boundary(text: &str, mut i: usize) -> usize {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    /// One edit of the kinds typing makes: a character or a fragment inserted, a stretch
    /// deleted, a line doubled or removed, a number changed.
    fn edit(text: &str, rng: &mut Rng) -> String {
        const BITS: &[&str] = &[
            "}",
            "{",
            "\"",
            "\"\"\"",
            "\n",
            "\nstage x {\n",
            "\nmodel ",
            "/*",
            "*/",
            "// ",
            "x",
            " after ",
            "\n}\n",
            "1",
            "30.5B",
            "“",
            "é",
            "\r\n",
            "stage",
            "\ntool t runs ocr {}\n",
        ];
        let at = boundary(text, rng.below(text.len() + 1));
        match rng.below(6) {
            0 | 1 => {
                let bit = BITS[rng.below(BITS.len())];
                format!("{}{bit}{}", &text[..at], &text[at..])
            }
            2 => {
                let end = boundary(text, (at + rng.below(12)).min(text.len()));
                format!("{}{}", &text[..at], &text[end..])
            }
            3 => {
                let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
                if rng.below(2) == 0 {
                    format!("{}{}{}", &text[..end], &text[start..end], &text[end..])
                } else {
                    format!("{}{}", &text[..start], &text[end..])
                }
            }
            _ => match text[at..].find(|c: char| c.is_ascii_digit()) {
                Some(d) => {
                    let d = at + d;
                    format!("{}{}{}", &text[..d], rng.below(10), &text[d + 1..])
                }
                None => text.to_string(),
            },
        }
    }

    /// The parse reusing declarations is the whole parse, tree and diagnostics, over random
    /// edits to the project's workflows and the stdlib (kept for the edits that follow, as an
    /// editor keeps it).
    #[test]
    fn reusing_declarations_parses_as_the_whole_file_over_random_edits() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut pieces_reused = 0;
        for name in [
            "workflows/affidavit.lex",
            "workflows/exhibits.lex",
            "workflows/motion.lex",
            "workflows/production.lex",
            "stdlib/prompts.lex",
        ] {
            let original = std::fs::read_to_string(format!("{root}/{name}")).unwrap();
            let mut reuse = Reuse::default();
            let mut text = original.clone();
            for step in 0..300 {
                // Mostly an edit of the last text; now and then back to the clean file, so
                // the edits do not all land in a file already broken beyond repair.
                text = if step % 25 == 0 {
                    original.clone()
                } else {
                    edit(&text, &mut rng)
                };
                reuse.begin();
                let before = reuse.reused;
                let got = parse_reusing(&text, 3, &mut reuse);
                pieces_reused += reuse.reused - before;
                let want = parse(&text, 3);
                assert_eq!(got.file, want.file, "{name}, step {step}:\n{text}");
                assert_eq!(
                    got.diagnostics, want.diagnostics,
                    "{name}, step {step}:\n{text}"
                );
            }
        }
        assert!(pieces_reused > 1000, "reused only {pieces_reused} pieces");
    }

    #[test]
    fn an_unchanged_declaration_is_not_parsed_again_and_moves_with_the_text() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../workflows/affidavit.lex"
        ))
        .unwrap();
        let mut reuse = Reuse::default();
        reuse.begin();
        parse_reusing(&text, 0, &mut reuse);
        let pieces = reuse.parsed;
        assert!(pieces > 5, "{pieces} pieces");
        // One line longer near the top: every later declaration moves by four bytes.
        let at = text.find("\nstage").unwrap();
        let edited = format!("{}\n// x{}", &text[..at], &text[at..]);
        reuse.begin();
        let got = parse_reusing(&edited, 0, &mut reuse);
        assert_eq!(reuse.parsed, pieces + 1, "only the piece holding the edit");
        assert_eq!(got.file, parse(&edited, 0).file);
    }

    #[test]
    fn declarations_start_at_keyword_lines_outside_blocks_strings_and_comments() {
        let text = "workflow w \"x\"\nuse std.prompts\n\nstage a {\n  prompt \"\"\"\nstage b {\n  \"\"\"\n}\n/* \nmodel m\n*/\nstage c { reads \"\n}\nmodels_x\nmodel m on p {\n}\n";
        let starts = declaration_starts(text);
        let words: Vec<&str> = starts
            .iter()
            .map(|&s| text[s..].split_whitespace().next().unwrap())
            .collect();
        assert_eq!(words, ["workflow", "use", "stage", "stage", "model"]);
    }
}
