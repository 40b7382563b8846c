//! Bounds on reading, so that no one file can stall or exhaust a run: a largest source, a
//! largest expansion of a ZIP container (a `.docx` or `.xlsx` is a ZIP, and a crafted one can
//! expand a few kilobytes into gigabytes), and a time limit on every outside program.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::error::SourceError;
pub use super::error::ToolError;

/// The largest source file read: far above any real intake document (a 5,000-page scanned
/// PDF is well under it), low enough that one file cannot take the machine's memory.
pub const MAX_FILE: u64 = 1 << 30;

/// The most a ZIP container (Word, Excel, OpenDocument) may expand to, all parts together.
pub const MAX_EXPANDED: u64 = 512 << 20;

/// The most parts a ZIP container may hold.
pub const MAX_PARTS: usize = 20_000;

/// How long an outside program (LibreOffice, tesseract, pdftoppm) may take on one file.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(180);

pub fn check_size(size: u64) -> Result<(), SourceError> {
    if size > MAX_FILE {
        return Err(SourceError::TooLarge(format!(
            "{} MiB, larger than the {} MiB lexrun reads as one source: split it (e.g. `qpdf --split-pages`) or export its parts",
            size >> 20,
            MAX_FILE >> 20
        )));
    }
    Ok(())
}

/// Refuses a ZIP container whose parts expand past [`MAX_EXPANDED`] or number more than
/// [`MAX_PARTS`]. Every part is inflated (into nothing) to count, since a part's declared size
/// can lie.
pub fn check_zip(bytes: &[u8], what: &'static str) -> Result<(), SourceError> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| SourceError::damaged(what, e))?;
    if z.len() > MAX_PARTS {
        return Err(bomb(what));
    }
    let mut left = MAX_EXPANDED;
    for i in 0..z.len() {
        let f = z.by_index(i).map_err(|e| encrypted_or_damaged(what, e))?;
        if f.size() > left {
            return Err(bomb(what));
        }
        let n = std::io::copy(&mut f.take(left + 1), &mut std::io::sink())
            .map_err(|e| SourceError::damaged(what, e))?;
        if n > left {
            return Err(bomb(what));
        }
        left -= n;
    }
    Ok(())
}

/// One part of a ZIP container, read whole but never past [`MAX_EXPANDED`].
pub fn zip_part(
    z: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    name: &str,
    what: &'static str,
) -> Result<Option<String>, SourceError> {
    let f = match z.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(encrypted_or_damaged(what, e)),
    };
    let mut buf = Vec::new();
    f.take(MAX_EXPANDED + 1)
        .read_to_end(&mut buf)
        .map_err(|e| SourceError::damaged(what, e))?;
    if buf.len() as u64 > MAX_EXPANDED {
        return Err(bomb(what));
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

fn encrypted_or_damaged(what: &'static str, e: zip::result::ZipError) -> SourceError {
    match e {
        zip::result::ZipError::UnsupportedArchive(m) if m.to_lowercase().contains("encrypt") => {
            SourceError::Refused(format!(
                "an encrypted {what}: open it with its password and save an unprotected copy"
            ))
        }
        e => SourceError::damaged(what, e),
    }
}

fn bomb(what: &'static str) -> SourceError {
    SourceError::TooLarge(format!(
        "a {what} that expands past {} MiB or into more than {MAX_PARTS} parts: a damaged or crafted file; open it and save a fresh copy",
        MAX_EXPANDED >> 20
    ))
}

/// Runs a program to its end or to [`TOOL_TIMEOUT`], whichever is first; its output goes to
/// files the caller names in its arguments, its error output is kept for the message.
pub fn run(tool: &'static str, cmd: &mut Command, work: &Path) -> Result<(), ToolError> {
    run_to(tool, cmd, work, None)
}

/// [`run`], with the program's standard output written to `stdout` (for programs that print
/// what they read rather than write a file).
pub fn run_to(
    tool: &'static str,
    cmd: &mut Command,
    work: &Path,
    stdout: Option<&Path>,
) -> Result<(), ToolError> {
    let err_path = work.join(format!("{tool}.stderr"));
    let err_file = std::fs::File::create(&err_path).map_err(|e| ToolError::Failed {
        tool,
        message: e.to_string(),
    })?;
    let out = match stdout {
        Some(p) => Stdio::from(std::fs::File::create(p).map_err(|e| ToolError::Failed {
            tool,
            message: e.to_string(),
        })?),
        None => Stdio::null(),
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err_file)
        .spawn()
        .map_err(|e| ToolError::Failed {
            tool,
            message: e.to_string(),
        })?;
    let start = Instant::now();
    // Polled from every millisecond up to every 20: a quick program is not kept waiting.
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > TOOL_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ToolError::Timeout {
                    tool,
                    secs: TOOL_TIMEOUT.as_secs(),
                });
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => {
                return Err(ToolError::Failed {
                    tool,
                    message: e.to_string(),
                })
            }
        }
    };
    if !status.success() {
        let msg = std::fs::read_to_string(&err_path).unwrap_or_default();
        return Err(ToolError::Failed {
            tool,
            message: msg
                .trim()
                .lines()
                .last()
                .unwrap_or("no message")
                .to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zip_that_expands_without_bound_is_refused() {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut z = zip::ZipWriter::new(&mut buf);
            let o = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            z.start_file("word/document.xml", o).unwrap();
            let zeros = vec![0u8; 1 << 20];
            for _ in 0..(MAX_EXPANDED >> 20) + 1 {
                std::io::Write::write_all(&mut z, &zeros).unwrap();
            }
            z.finish().unwrap();
        }
        let bytes = buf.into_inner();
        assert!(bytes.len() < 2 << 20, "the bomb is small: {}", bytes.len());
        let e = check_zip(&bytes, "Word document").unwrap_err().to_string();
        assert!(e.contains("expands past"), "{e}");
    }
}
