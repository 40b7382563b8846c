//! Why a source could not be read: the reason a file is refused, a text layer or OCR that
//! failed, an outside program that failed or did not finish, and which files could not be read.

use std::path::PathBuf;

/// Why a source could not be read; says what the file is, not where (the caller names it).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot be read: {0}")]
    Io(#[source] std::io::Error),
    #[error("an empty file (0 bytes)")]
    Empty,
    #[error("{0}")]
    TooLarge(String),
    #[error("a binary file lexrun does not recognise; save it as PDF, Word or text")]
    Binary,
    #[error("not UTF-8 text (invalid byte at offset {0}); save it as UTF-8")]
    NotUtf8(usize),
    #[error("{0}")]
    Refused(String),
    #[error("a damaged {kind}: {reason}")]
    Damaged { kind: &'static str, reason: String },
    #[error("{0}")]
    Scan(#[from] TextError),
    #[error("{0}")]
    Tool(#[from] ToolError),
}

impl SourceError {
    pub(crate) fn damaged(kind: &'static str, reason: impl std::fmt::Display) -> Self {
        SourceError::Damaged {
            kind,
            reason: reason.to_string(),
        }
    }
}

/// A source that could not be read, and which one.
#[derive(Debug, thiserror::Error)]
#[error("`{}`: {source}", path.display())]
pub struct Unreadable {
    pub path: PathBuf,
    #[source]
    pub source: SourceError,
}

/// Every source that could not be read, each with why.
#[derive(Debug)]
pub struct Unreadables(pub Vec<Unreadable>);

impl std::fmt::Display for Unreadables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} files cannot be read:", many.len())?;
                for u in many {
                    write!(f, "\n  {u}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Unreadables {}

/// An outside program that failed or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("`{tool}` is needed to read this {what} and is not installed: `apt-get install {package}` (or run scripts/install-tools)")]
    Missing {
        tool: &'static str,
        package: &'static str,
        what: &'static str,
    },
    #[error("`{tool}` did not finish within {secs} s and was stopped; the file may be damaged")]
    Timeout { tool: &'static str, secs: u64 },
    #[error("`{tool}` failed: {message}")]
    Failed { tool: &'static str, message: String },
}

#[derive(Debug, thiserror::Error)]
pub enum TextError {
    #[error("cannot read `{0}`: {1}")]
    Read(String, String),
    #[error("`{0}` is encrypted with a password needed to open it; open it with the password and save an unprotected copy (e.g. `qpdf --password=PASSWORD --decrypt IN OUT`)")]
    Encrypted(String),
    #[error("`{0}` is not a readable PDF: {1}")]
    Damaged(String, String),
    #[error("`{tool}` is needed to read `{file}` and is not installed: `apt-get install {package}` (or set {var})")]
    MissingTool {
        tool: &'static str,
        package: &'static str,
        var: &'static str,
        file: String,
    },
    #[error("OCR of `{0}` failed: {1}")]
    Ocr(String, String),
}
