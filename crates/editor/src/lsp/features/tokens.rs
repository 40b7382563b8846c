//! Semantic tokens: keywords, strings, numbers, names and settings, for editors that colour
//! by meaning rather than by the TextMate grammar.

use std::collections::HashMap;

use lsp_types::{SemanticToken, SemanticTokenType};

use super::super::analysis::Analysis;
use super::super::index::Kind;
use super::super::lines::Lines;
use crate::syntax::keywords as kw;
use crate::syntax::CLAIM_KINDS;

/// The token types, in the order of the legend the server announces.
pub const TOKEN_TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::CLASS,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::OPERATOR,
    SemanticTokenType::TYPE,
    SemanticTokenType::ENUM_MEMBER,
];

#[derive(Clone, Copy)]
enum Tok {
    Keyword = 0,
    String = 1,
    Number = 2,
    Comment = 3,
    Namespace = 4,
    Class = 5,
    Function = 6,
    Variable = 7,
    Property = 8,
    Operator = 9,
    Type = 10,
    EnumMember = 11,
}

const KEYWORDS: &[&str] = &[
    "workflow",
    "matter",
    "ledger",
    "use",
    "pool",
    "model",
    "on",
    "sources",
    "stage",
    "tool",
    "runs",
    "verify",
    "against",
    "output",
    "from",
    "appendix",
    "layout",
    "unverified",
    "template",
    "ruleset",
    "after",
    "when",
    "until",
    "at",
    "most",
    "rounds",
    "round",
    "and",
    "or",
    "not",
    "is",
    "empty",
    "list",
    "of",
    "record",
    "must",
    "failure",
    "stop",
    "revise",
    "returns",
    "reads",
    "prompt",
    "rules",
];
/// Words that are settings only inside some `bates`/`admit`/`ocr` clause, on top of
/// [`kw::settings`].
const CLAUSE_SETTINGS: &[&str] = &["because", "optional", "start", "width", "suffix"];
const TYPES: &[&str] = &["bool", "text", "number", "date"];
const VALUES: &[&str] = &[
    "true", "false", "appear", "exist", "match", "exactly", "block", "flag", "nvlink", "pcie",
];

/// Semantic tokens for the document, read by a small lexer that never fails, so a
/// half-typed file is coloured too. Declared names are coloured by their kind.
pub fn semantic_tokens(a: &Analysis) -> Vec<SemanticToken> {
    let text = a.text(0);
    let mut settings = kw::settings();
    settings.extend_from_slice(CLAUSE_SETTINGS);
    let mut names: HashMap<usize, Kind> = HashMap::new();
    for d in a.index().decls.iter().filter(|d| d.file == 0) {
        names.insert(d.span.start, d.kind);
    }
    for u in a.index().uses.iter().filter(|u| u.file == 0) {
        if let Some(d) = a.index().decl(&u.key) {
            names.insert(u.span.start, d.kind);
        }
    }
    let mut raw: Vec<(usize, usize, Tok)> = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        let c = rest.chars().next().unwrap_or(' ');
        let (len, tok) = if rest.starts_with("//") {
            (rest.find('\n').unwrap_or(rest.len()), Some(Tok::Comment))
        } else if rest.starts_with("/*") {
            (
                rest.find("*/").map_or(rest.len(), |e| e + 2),
                Some(Tok::Comment),
            )
        } else if let Some(body) = rest.strip_prefix("\"\"\"") {
            (
                body.find("\"\"\"").map_or(rest.len(), |e| e + 6),
                Some(Tok::String),
            )
        } else if c == '"' {
            let mut j = 1;
            let rb = rest.as_bytes();
            while j < rb.len() && rb[j] != b'"' && rb[j] != b'\n' {
                j += if rb[j] == b'\\' { 2 } else { 1 };
            }
            ((j + 1).min(rest.len()), Some(Tok::String))
        } else if c.is_ascii_digit() {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                .unwrap_or(rest.len());
            (len, Some(Tok::Number))
        } else if c.is_ascii_alphabetic() || c == '_' {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            let word = &rest[..len];
            let tok = match names.get(&i) {
                Some(Kind::Pool) => Tok::Namespace,
                Some(Kind::Model) => Tok::Class,
                Some(Kind::Stage | Kind::Tool) => Tok::Function,
                Some(Kind::Template | Kind::Ruleset) => Tok::EnumMember,
                Some(Kind::Sources) => Tok::Variable,
                None if KEYWORDS.contains(&word) => Tok::Keyword,
                None if settings.contains(&word) || CLAIM_KINDS.contains(&word) => Tok::Property,
                None if TYPES.contains(&word) => Tok::Type,
                None if VALUES.contains(&word)
                    || lexrun_base::server_kind::ServerKind::parse(word).is_some() =>
                {
                    Tok::EnumMember
                }
                None => Tok::Variable,
            };
            (len, Some(tok))
        } else if "=<>!".contains(c) {
            let len = rest
                .find(|c: char| !"=<>!".contains(c))
                .unwrap_or(rest.len());
            (len, Some(Tok::Operator))
        } else {
            (c.len_utf8(), None)
        };
        if let Some(t) = tok {
            raw.push((i, i + len, t));
        }
        i += len.max(1);
        while !text.is_char_boundary(i) {
            i += 1;
        }
    }
    encode(text, &raw)
}

/// Relative encoding, one token per line piece (the protocol's tokens do not span lines).
fn encode(text: &str, raw: &[(usize, usize, Tok)]) -> Vec<SemanticToken> {
    let lines = Lines::new(text);
    let mut out = Vec::new();
    let (mut pl, mut pc) = (0u32, 0u32);
    for &(s, e, t) in raw {
        let mut start = s;
        for piece in text[s..e].split_inclusive('\n') {
            let body = piece.trim_end_matches(['\n', '\r']);
            let end = start + body.len();
            if end > start {
                let p = lines.position(start);
                let q = lines.position(end);
                let len = q.character - p.character;
                let dl = p.line - pl;
                let dc = if dl == 0 {
                    p.character - pc
                } else {
                    p.character
                };
                out.push(SemanticToken {
                    delta_line: dl,
                    delta_start: dc,
                    length: len,
                    token_type: t as u32,
                    token_modifiers_bitset: 0,
                });
                pl = p.line;
                pc = p.character;
            }
            start += piece.len();
        }
    }
    out
}
