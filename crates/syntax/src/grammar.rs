//! The pest parser generated from `grammar/lex.pest` (for `.lex` and `.test.lex` files), the
//! one lock every pest parse takes, and what the readers of its output share.

#[derive(pest_derive::Parser)]
#[grammar = "../../../grammar/lex.pest"]
pub struct LexParser;

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

/// Which block a setting sits in, for recovery messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    Pool,
    Model,
    Sources,
    Stage,
    Tool,
    Verify,
    Production,
}
