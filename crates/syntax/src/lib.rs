//! Text → abstract syntax tree with byte spans. No semantics: names are not resolved and
//! values are not range-checked here.

use lexrun_base::{claim_kind, compare, diagnostic, suggest};

pub mod ast;
mod cond;
mod grammar;
mod hardware;
pub mod keywords;
mod lexical;
mod limits;
mod literal;
mod parse;
mod production;
mod recover;
mod reuse;
pub mod test_file;

pub use grammar::with_pest;
/// The pest parser itself, for the formatter, which needs the concrete tree.
pub use grammar::{LexParser, Rule};
pub use keywords::CLAIM_KINDS;
pub use lexical::skeleton;
pub use literal::{decode, dedent, names_a_file, PROMPT_FILE_EXTENSIONS};
pub use parse::{parse, parse_reusing, Parsed};
pub use reuse::Reuse;
