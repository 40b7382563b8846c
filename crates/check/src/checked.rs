//! What checking a file gives back: its sources, its diagnostics and, when there are no
//! errors, the workflow.

use camino::Utf8Path;

use crate::diagnostic::{Code, Diagnostic, SourceMap};
use crate::plan::workflow::Workflow;

/// The outcome of checking a file.
#[derive(Debug)]
pub struct Checked {
    pub sources: SourceMap,
    /// Errors and warnings, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// The workflow, when there are no errors.
    pub workflow: Option<Workflow>,
    /// The entry file could not be read at all (exit code 2 rather than 1).
    pub unreadable: bool,
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        self.unreadable || self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The outcome for a file that could not be read at `path`.
    pub(crate) fn unreadable(path: &Utf8Path, e: &std::io::Error) -> Checked {
        Checked {
            sources: SourceMap::default(),
            diagnostics: vec![Diagnostic::new(
                Code::UnreadableFile,
                format!("cannot read `{path}`: {e}"),
            )
            .help("check the path; run `lexrun check` on a .lex file")],
            workflow: None,
            unreadable: true,
        }
    }
}
