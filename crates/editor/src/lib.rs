//! Editor support on the same syntax and check layers as `lexrun check`: the formatter
//! (`lexrun fmt`) and the language server (`lexrun lsp`).

use lexrun_base::{confine, diagnostic};
use lexrun_check as check;
use lexrun_plan as plan;
use lexrun_syntax as syntax;

pub mod fmt_files;
pub mod format;
pub mod lsp;
mod testfile;
