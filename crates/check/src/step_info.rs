//! What the stage checks know of every step while checking the others.

use crate::diagnostic::FileId;
use crate::plan::workflow::FieldType;
use crate::syntax::ast;

/// What the checker knows of each step while checking others.
pub(crate) struct Info<'a> {
    pub(crate) file: FileId,
    pub(crate) name: &'a ast::Name,
    pub(crate) after: Vec<&'a ast::Name>,
    pub(crate) reads: Vec<&'a ast::Name>,
    pub(crate) returns: Option<Vec<FieldType>>,
    /// `returns` was written, even if it has errors.
    pub(crate) returns_declared: bool,
    pub(crate) is_tool: bool,
    pub(crate) tool_kind: Option<&'a str>,
}
