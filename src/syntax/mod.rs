//! Text → abstract syntax tree with byte spans. No semantics: names are not resolved and
//! values are not range-checked here.

pub mod ast;
mod parse;
mod recover;

pub use parse::{decode, dedent, parse, with_pest, Parsed};
/// The pest parser itself, for the formatter, which needs the concrete tree.
pub(crate) use parse::{LexParser, Rule};

/// The kinds of claim a `verify` rule can name.
pub const CLAIM_KINDS: &[&str] = &[
    "citations",
    "statutes",
    "dates",
    "bates",
    "quotes",
    "amounts",
];
