//! The canonical layout of a `.lex` file, computed from pest's concrete tree.
//!
//! Pest's tree has every word of the file but neither its comments (the grammar skips them)
//! nor its punctuation (literals in non-atomic rules make no pairs), so both are read back from
//! the text between two pairs, which by the grammar holds only white space, comments and
//! punctuation. The layout:
//!
//! - one declaration after another with one blank line between them, except that one-line
//!   declarations of one kind (`use`, `output`, `template`) may stay on adjacent lines;
//! - settings indented by two spaces, one space between words, two between settings that
//!   share a line (which lines hold which settings is the author's choice and is kept);
//! - in a run of lines that each hold one setting, the values start in one column; `stop
//!   when`, `when`, `rules`, `on failure` and sampling settings (`temperature`, …) stand
//!   outside the column, and a value written over several lines (`returns {`, `prompt """`)
//!   counts for the column but opens next to its key;
//! - `returns { a: t, b: t }` spaced like that; a record written over several lines gets one
//!   field per line;
//! - text blocks and strings kept byte for byte; comments kept where they were, blank lines
//!   kept (at most one) between settings and between comments;
//! - a setting or declaration with a comment inside it is kept as written.

use pest::iterators::Pair;
use pest::Parser as _;

use crate::diagnostic::{Code, Diagnostic, Span};
use crate::syntax::{self, LexParser, Rule};

mod gap;
mod render;
mod types;

use gap::{join, Gap, GapTok};
use render::render;
use types::{Entry, Printer, Unit};

const INDENT: &str = "  ";

/// Formats a `.lex` file. A file that does not parse is left alone: its errors are returned.
pub fn format_lex(text: &str) -> Result<String, Vec<Diagnostic>> {
    let parsed = syntax::parse(text, 0);
    let errors: Vec<Diagnostic> = parsed
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let file = syntax::with_pest(false, || LexParser::parse(Rule::file, text))
        .ok()
        .and_then(|mut p| p.next());
    match file {
        Some(file) => Ok(Printer { text }.file(file)),
        None => Err(vec![Diagnostic::new(
            Code::Syntax,
            "this file does not parse",
        )
        .in_file(0)
        .label(Span::new(0, 0), "")
        .help("run `lexrun check` on it to see why")]),
    }
}

fn is_entry(rule: Rule) -> bool {
    use Rule::*;
    matches!(
        rule,
        host_e
            | gpus_e
            | link_e
            | vram_e
            | compute_e
            | serve_e
            | slots_e
            | binary_e
            | gpu_e
            | bandwidth_e
            | min_build_e
            | params_e
            | api_key_e
            | gguf_e
            | tag_e
            | weights_e
            | ctx_e
            | kv_e
            | kv_k_e
            | kv_v_e
            | flash_e
            | min_decode_e
            | layers_e
            | kv_heads_e
            | head_dim_e
            | quant_e
            | dtype_e
            | sampling_e
            | files_e
            | bates_e
            | description_e
            | admit_e
            | ocr_e
            | model_e
            | prompt_e
            | reads_e
            | after_e
            | when_e
            | returns_e
            | stop_e
            | revise_e
            | timeout_e
            | option_e
            | rule_e
            | rules_e
            | on_failure_e
            | allow_e
            | ignore_e
            | judge_e
            | volume_e
            | legend_e
            | designate_e
            | redact_e
            | withhold_e
            | natives_e
            | images_e
            | fields_e
            | bad_entry
    )
}

/// Settings written outside the value column: clauses (`stop when …`, `on failure …`) and
/// sampling knobs, which are tuned and often share a line.
fn stands_alone(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::stop_e
            | Rule::when_e
            | Rule::rules_e
            | Rule::on_failure_e
            | Rule::allow_e
            | Rule::ignore_e
            | Rule::judge_e
            | Rule::sampling_e
    )
}

fn is_block(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::pool_decl
            | Rule::model_decl
            | Rule::sources_decl
            | Rule::stage_decl
            | Rule::tool_decl
            | Rule::verify_decl
            | Rule::ruleset_decl
            | Rule::production_decl
    )
}

impl<'a> Printer<'a> {
    fn file(&self, file: Pair<'a, Rule>) -> String {
        let mut units: Vec<Unit> = Vec::new();
        // The previous declaration: its rule and whether it was one line.
        let mut prev: Option<(Rule, bool)> = None;
        let mut pos = file.as_span().start();
        let end = file.as_span().end();
        for item in file.into_inner() {
            if item.as_rule() == Rule::EOI {
                continue;
            }
            let (s, e) = (item.as_span().start(), self.end(&item));
            let unit = self.item(item.clone());
            let single = matches!(unit, Unit::Line(_));
            let rule = item.as_rule();
            let apart = prev.is_some_and(|(r, one)| !(one && single && r == rule));
            let gap = self.gap(pos, s);
            let apart = self.comments_into(&gap, &mut units, apart);
            let blank = apart || gap.trailing_newlines >= 2;
            if blank && !units.is_empty() && !matches!(units.last(), Some(Unit::Blank)) {
                units.push(Unit::Blank);
            }
            units.push(unit);
            prev = Some((rule, single));
            pos = e;
        }
        let gap = self.gap(pos, end);
        self.comments_into(&gap, &mut units, false);
        let mut out = String::new();
        render(&units, "", &mut out);
        out
    }

    /// Adds the comments of a gap as units. `apart` asks for a blank line before the first
    /// line after a declaration; returns whether that request is still open (no comment line
    /// took it).
    fn comments_into(&self, gap: &Gap<'a>, units: &mut Vec<Unit>, apart: bool) -> bool {
        let mut apart = apart;
        for (nl, c) in gap.comments() {
            if nl == 0 && !units.is_empty() {
                units.push(Unit::Trailing(c.to_string()));
                continue;
            }
            let blank = nl >= 2 || apart;
            if blank && !units.is_empty() && !matches!(units.last(), Some(Unit::Blank)) {
                units.push(Unit::Blank);
            }
            units.push(Unit::Comment(c.to_string()));
            apart = false;
        }
        apart
    }

    fn item(&self, item: Pair<'a, Rule>) -> Unit {
        let rule = item.as_rule();
        if is_block(rule) {
            return self.block(item);
        }
        let (s, e) = (item.as_span().start(), self.end(&item));
        let words = match self.words(s, e, item.clone().into_inner().collect()) {
            Some(w) => w,
            None => return Unit::Text(self.verbatim(&item)),
        };
        if words.iter().any(|w| w.contains('\n')) {
            // A template whose text is a block.
            return Unit::Text(join(&words));
        }
        let split = match rule {
            Rule::output_decl | Rule::template_decl => 2,
            _ => words.len(),
        };
        Unit::Line(vec![Entry {
            key: join(&words[..split.min(words.len())]),
            rest: join(&words[split.min(words.len())..]),
            align: split < words.len(),
            kind: Some(rule),
        }])
    }

    fn block(&self, item: Pair<'a, Rule>) -> Unit {
        let (start, end) = (item.as_span().start(), item.as_span().end());
        let children: Vec<Pair<Rule>> = item.clone().into_inner().collect();
        let n_header = children
            .iter()
            .position(|c| is_entry(c.as_rule()))
            .unwrap_or(children.len());
        let header_end = children[..n_header].last().map_or(start, |c| self.end(c));
        let body_start = children.get(n_header).map_or(end, |c| c.as_span().start());
        // The opening brace: the first `{` after the header's last pair.
        let Some(brace) = self
            .gap(header_end, body_start)
            .toks
            .iter()
            .position(|(_, t)| matches!(t, GapTok::Punct("{")))
        else {
            return Unit::Text(self.verbatim(&item));
        };
        let gap = self.gap(header_end, body_start);
        if gap.toks[..brace]
            .iter()
            .any(|(_, t)| matches!(t, GapTok::Comment(_)))
        {
            return Unit::Text(self.verbatim(&item));
        }
        let brace_at = header_end + self.text[header_end..body_start].find('{').unwrap_or(0);
        let header = match self.words(start, brace_at, children[..n_header].to_vec()) {
            Some(w) => join(&w),
            None => return Unit::Text(self.verbatim(&item)),
        };
        // The closing brace is the declaration's last character.
        let close = end - 1;
        let mut units = Vec::new();
        let mut header_comment = None;
        let mut pos = brace_at + 1;
        for entry in children.into_iter().skip(n_header) {
            let (s, e) = (entry.as_span().start(), self.end(&entry));
            let gap = self.gap(pos, s);
            self.body_comments(&gap, &mut units, &mut header_comment);
            let unit = self.entry(entry);
            let same_line = gap.trailing_newlines == 0 && !gap.has_comment();
            match (units.last_mut(), unit) {
                (Some(Unit::Line(entries)), Unit::Line(mut more)) if same_line => {
                    entries.append(&mut more);
                }
                (_, unit) => {
                    if gap.trailing_newlines >= 2
                        && !units.is_empty()
                        && !matches!(units.last(), Some(Unit::Blank))
                    {
                        units.push(Unit::Blank);
                    }
                    units.push(unit);
                }
            }
            pos = e;
        }
        let gap = self.gap(pos, close);
        self.body_comments(&gap, &mut units, &mut header_comment);
        while matches!(units.last(), Some(Unit::Blank)) {
            units.pop();
        }
        let mut out = header;
        out.push_str(" {");
        if let Some(c) = header_comment {
            out.push_str("  ");
            out.push_str(&c);
        }
        if units.is_empty() && out.ends_with('{') {
            out.push('}');
            return Unit::Text(out);
        }
        out.push('\n');
        render(&units, INDENT, &mut out);
        out.push('}');
        Unit::Text(out)
    }

    fn body_comments(&self, gap: &Gap<'a>, units: &mut Vec<Unit>, header: &mut Option<String>) {
        for (nl, c) in gap.comments() {
            if nl == 0 {
                if units.is_empty() && header.is_none() {
                    *header = Some(c.to_string());
                } else {
                    units.push(Unit::Trailing(c.to_string()));
                }
                continue;
            }
            if nl >= 2 && !units.is_empty() && !matches!(units.last(), Some(Unit::Blank)) {
                units.push(Unit::Blank);
            }
            units.push(Unit::Comment(c.to_string()));
        }
    }

    fn entry(&self, entry: Pair<'a, Rule>) -> Unit {
        let rule = entry.as_rule();
        let (s, e) = (entry.as_span().start(), self.end(&entry));
        let Some(words) = self.words(s, e, entry.clone().into_inner().collect()) else {
            return Unit::Line(vec![Entry::whole(self.verbatim(&entry))]);
        };
        let rest = if rule == Rule::returns_e {
            entry
                .clone()
                .into_inner()
                .find(|p| p.as_rule() == Rule::record_type)
                .map(|r| self.record(r, INDENT.len()))
                .unwrap_or_else(|| join(&words[1..]))
        } else {
            join(&words[1..])
        };
        Unit::Line(vec![Entry {
            key: words[0].clone(),
            rest,
            align: !stands_alone(rule),
            kind: None,
        }])
    }

    /// `{ a: t, b: t }`, or one field per line when the record was written over several.
    fn record(&self, rec: Pair<'a, Rule>, indent: usize) -> String {
        let multiline = rec.as_str().contains('\n');
        let fields: Vec<String> = rec
            .into_inner()
            .map(|f| {
                let inner = if multiline {
                    indent + INDENT.len()
                } else {
                    indent
                };
                self.field(f, inner)
            })
            .collect();
        if fields.is_empty() {
            return "{}".into();
        }
        if !multiline {
            return format!("{{ {} }}", fields.join(", "));
        }
        let pad = " ".repeat(indent + INDENT.len());
        let mut out = String::from("{\n");
        for (i, f) in fields.iter().enumerate() {
            out.push_str(&pad);
            out.push_str(f);
            if i + 1 < fields.len() {
                out.push(',');
            }
            out.push('\n');
        }
        out.push_str(&" ".repeat(indent));
        out.push('}');
        out
    }

    fn field(&self, f: Pair<'a, Rule>, indent: usize) -> String {
        let mut it = f.into_inner();
        let name = it.next().map_or("", |p| p.as_str()).to_string();
        let ty = it.next().map(|t| self.ty(t, indent)).unwrap_or_default();
        format!("{name}: {ty}")
    }

    fn ty(&self, t: Pair<'a, Rule>, indent: usize) -> String {
        let Some(inner) = t.clone().into_inner().next() else {
            return t.as_str().to_string();
        };
        match inner.as_rule() {
            Rule::list_type => {
                let ty = inner.into_inner().find(|p| p.as_rule() == Rule::type_expr);
                format!(
                    "list of {}",
                    ty.map(|t| self.ty(t, indent)).unwrap_or_default()
                )
            }
            Rule::record_kw_type => {
                let rec = inner
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::record_type);
                format!(
                    "record {}",
                    rec.map(|r| self.record(r, indent)).unwrap_or_default()
                )
            }
            Rule::record_type => self.record(inner, indent),
            _ => inner.as_str().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(s: &str) -> String {
        format_lex(s).unwrap_or_else(|d| panic!("{d:?}"))
    }

    #[test]
    fn aligns_a_run_of_settings_and_normalises_spacing() {
        let got = fmt("workflow w\npool p {\n  gpus 0,1\n     vram 2 x 32GiB\n  serve llama_cpp at \"http://h:1\"\n}\n");
        assert_eq!(
            got,
            "workflow w\n\npool p {\n  gpus  0, 1\n  vram  2 x 32 GiB\n  serve llama_cpp at \"http://h:1\"\n}\n"
        );
    }

    #[test]
    fn keeps_comments_blank_lines_and_settings_sharing_a_line() {
        let src = "// head\nworkflow w\n\n\n\nmodel m on p { // why\n  layers 4   kv_heads 2\n\n\n  // about ctx\n  ctx 8k // trailing\n}\n// end\n";
        let got = fmt(src);
        assert_eq!(
            got,
            "// head\nworkflow w\n\nmodel m on p {  // why\n  layers 4  kv_heads 2\n\n  // about ctx\n  ctx 8k  // trailing\n}\n// end\n"
        );
        assert_eq!(fmt(&got), got);
    }

    #[test]
    fn records_over_several_lines_get_a_field_per_line() {
        let src = "workflow w\nstage s {\n  model m\n  returns { a: list of record {x: number,y: text},\n b: bool }\n  stop when not (b)\n}\n";
        let got = fmt(src);
        assert_eq!(
            got,
            "workflow w\n\nstage s {\n  model   m\n  returns {\n    a: list of record { x: number, y: text },\n    b: bool\n  }\n  stop when not (b)\n}\n"
        );
    }

    #[test]
    fn text_blocks_are_kept_byte_for_byte() {
        let src = "workflow w\nstage s {\n      prompt \"\"\"\n  odd   spacing {{x}}\n\t tab\n\"\"\"\n}\n";
        let got = fmt(src);
        assert!(
            got.contains("prompt \"\"\"\n  odd   spacing {{x}}\n\t tab\n\"\"\""),
            "{got}"
        );
    }

    #[test]
    fn one_line_declarations_of_a_kind_stay_together_and_align() {
        let src = "workflow w\nuse std.prompts\nuse std.verify\noutput \"a.md\" from s\noutput \"long.docx\" from s appendix verification\n";
        assert_eq!(
            fmt(src),
            "workflow w\n\nuse std.prompts\nuse std.verify\n\noutput \"a.md\"      from s\noutput \"long.docx\" from s appendix verification\n"
        );
    }

    #[test]
    fn punctuation_is_spaced_by_kind() {
        let src = "workflow w\npool p {\n  vram 4×32GiB\n}\nstage s after a,b when ( a.x or not(b.y) ) and a.n>=2 {\n  model m\n}\nmodel m on p {\n  min_decode 40   tok/s\n}\n";
        assert_eq!(
            fmt(src),
            "workflow w\n\npool p {\n  vram 4 × 32 GiB\n}\n\nstage s after a, b when (a.x or not (b.y)) and a.n >= 2 {\n  model m\n}\n\nmodel m on p {\n  min_decode 40 tok/s\n}\n"
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused() {
        let errs = format_lex("workflow w\npool p {\n  gpus 0\n  vram lots\n}\n").unwrap_err();
        assert!(errs.iter().all(Diagnostic::is_error));
        assert!(!errs.is_empty());
    }
}
