//! What the server answers: hover, definitions, references, renames, completions and
//! semantic tokens, all from one [`Analysis`](super::analysis::Analysis).

mod complete;
mod hover;
mod inlay;
mod navigate;
mod signature;
mod symbols;
mod tokens;
mod word;

use lsp_types::Url;

use super::analysis::file_url;

pub use complete::completion;
pub use hover::hover;
pub use inlay::inlay_hints;
pub use navigate::{definition, references, rename, rename_target};
pub use signature::signature_help;
pub use symbols::{code_actions, document_symbols, workspace_symbols};
pub use tokens::{semantic_tokens, TOKEN_TYPES};

/// The stdlib file a document URL points into, if it is one of the read-only copies.
pub fn is_stdlib(url: &Url) -> bool {
    file_url("std/prompts.lex").is_some_and(|s| {
        let dir = s.as_str().trim_end_matches("prompts.lex");
        url.as_str().starts_with(dir)
    })
}
