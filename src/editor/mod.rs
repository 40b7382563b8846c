//! Editor support on the same syntax and check layers as `lexrun check`: the formatter
//! (`lexrun fmt`) and the language server (`lexrun lsp`).

pub mod fmt;
pub mod format;
pub mod lsp;
pub mod testfile;
