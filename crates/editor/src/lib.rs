//! Editor support on the same syntax and check layers as `lexrun check`: the formatter
//! (`lexrun fmt`) and the language server (`lexrun lsp`).

#[allow(unused_imports)]
use lexrun_base::{confine, diagnostic};
#[allow(unused_imports)]
use lexrun_check as check;
#[allow(unused_imports)]
use lexrun_plan as plan;
#[allow(unused_imports)]
use lexrun_syntax as syntax;

pub mod fmt_files;
pub mod format;
pub mod lsp;
mod testfile;
