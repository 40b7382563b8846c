//! The draft `verify` checks, read whole: a text file of a size that fits in memory.

/// The largest draft `verify` reads: far beyond any filing, small enough to hold in memory.
pub(super) const MAX_DRAFT: u64 = 256 << 20;

/// Why a draft cannot be verified.
#[derive(Debug, thiserror::Error)]
pub(super) enum DraftError {
    #[error("cannot read the draft `{}`: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is a folder; give the draft file", .0.display())]
    Folder(std::path::PathBuf),
    #[error("the draft `{}` is {} MiB; lexrun checks drafts up to 256 MiB", .0.display(), .1 >> 20)]
    TooLarge(std::path::PathBuf, u64),
    #[error("the draft `{}` is a binary file; export it as text or Markdown first", .0.display())]
    Binary(std::path::PathBuf),
    #[error("the draft `{}` is not UTF-8 text (invalid byte at offset {}); save it as UTF-8", .0.display(), .1)]
    NotUtf8(std::path::PathBuf, usize),
    #[error("the draft `{}` is empty: there is nothing to verify", .0.display())]
    Empty(std::path::PathBuf),
}

pub(super) fn read_draft(path: &std::path::Path) -> Result<String, DraftError> {
    let owned = || path.to_path_buf();
    let read = |source| DraftError::Read {
        path: owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read)?;
    if meta.is_dir() {
        return Err(DraftError::Folder(owned()));
    }
    if meta.len() > MAX_DRAFT {
        return Err(DraftError::TooLarge(owned(), meta.len()));
    }
    let bytes = std::fs::read(path).map_err(read)?;
    if bytes.contains(&0) {
        return Err(DraftError::Binary(owned()));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| DraftError::NotUtf8(owned(), e.utf8_error().valid_up_to()))?;
    if text.trim().is_empty() {
        return Err(DraftError::Empty(owned()));
    }
    Ok(text)
}
