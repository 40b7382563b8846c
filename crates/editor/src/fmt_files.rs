//! `lexrun fmt [FILE…] [--check]`: rewrites `.lex` and `.test.lex` files in their canonical
//! layout, or with `--check` prints a diff for each file that is not and exits 1.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::diagnostic::{self, SourceMap};

use super::format::format_lex;
use super::testfile::format_test_lex;

/// Exit codes, as every lexrun command uses them.
const OK: u8 = 0;
const ERRORS: u8 = 1;
const USAGE: u8 = 2;

/// Why a text could not be formatted: its rendered errors.
#[derive(Debug)]
pub struct Unformattable(pub String);

/// Formats a file's text by its kind (`.test.lex` or `.lex`), naming it `name` in errors.
///
/// A byte-order mark and CRLF line ends are the file's own and are kept: the text is laid out
/// with plain `\n` and given them back.
pub fn format_file(path: &Path, text: &str, color: bool) -> Result<String, Unformattable> {
    let bom = text.starts_with('\u{FEFF}');
    let body = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let crlf = body.find('\n').is_some_and(|i| body[..i].ends_with('\r'));
    if !bom && !body.contains('\r') {
        return format_plain(path, body, color);
    }
    let plain = body.replace("\r\n", "\n");
    let mut out = format_plain(path, &plain, color)?;
    if crlf {
        out = out.replace('\n', "\r\n");
    }
    if bom {
        out.insert(0, '\u{FEFF}');
    }
    Ok(out)
}

fn format_plain(path: &Path, text: &str, color: bool) -> Result<String, Unformattable> {
    let name = path.display().to_string();
    if name.ends_with(".test.lex") {
        format_test_lex(path, text)
            .map_err(|e| Unformattable(crate::syntax::test_file::render_problems(path, text, &e)))
    } else {
        format_lex(text).map_err(|diags| {
            let mut sources = SourceMap::default();
            sources.add(name, text.to_string());
            Unformattable(diagnostic::render(&diags, &sources, color))
        })
    }
}

/// The `.lex` and `.test.lex` files under `paths` (files as given, folders searched; hidden
/// folders, `target` and `out` skipped), sorted.
pub fn discover(paths: &[PathBuf]) -> Vec<PathBuf> {
    crate::check::discover(paths, ".lex", true)
}

/// Runs `lexrun fmt`. `-` formats standard input to standard output.
pub fn run(paths: &[PathBuf], check: bool, color: bool) -> u8 {
    if paths.len() == 1 && paths[0].as_os_str() == "-" {
        return stdin(check, color);
    }
    let paths = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut worst = OK;
    let mut changed = 0;
    let files = discover(&paths);
    for f in &files {
        let text = match std::fs::read(f).map(String::from_utf8) {
            Ok(Ok(t)) => t,
            Ok(Err(_)) => {
                eprintln!("error: {} is not UTF-8 text; not formatted", f.display());
                worst = worst.max(ERRORS);
                continue;
            }
            Err(e) => {
                eprintln!(
                    "error: cannot read {}: {e}\n  help: check the path; `lexrun fmt` takes .lex files and folders",
                    f.display()
                );
                worst = worst.max(USAGE);
                continue;
            }
        };
        let formatted = match format_file(f, &text, color) {
            Ok(t) => t,
            Err(Unformattable(errors)) => {
                let _ = std::io::stderr().write_all(errors.as_bytes());
                eprintln!(
                    "not formatted: {} has syntax errors (fix them, then run `lexrun fmt` again)",
                    f.display()
                );
                worst = worst.max(ERRORS);
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        changed += 1;
        if check {
            let name = f.display().to_string();
            print!("{}", diff(&name, &text, &formatted));
            worst = worst.max(ERRORS);
        } else if let Err(e) = write_atomically(f, &formatted) {
            eprintln!("error: cannot write {}: {e}", f.display());
            worst = worst.max(USAGE);
        } else {
            eprintln!("formatted {}", f.display());
        }
    }
    if check && changed > 0 {
        eprintln!(
            "{changed} of {} file{} not formatted; run `lexrun fmt` to fix",
            files.len(),
            if files.len() == 1 { " is" } else { "s are" }
        );
    }
    worst
}

fn stdin(check: bool, color: bool) -> u8 {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("error: cannot read standard input as UTF-8 text: {e}");
        return USAGE;
    }
    match format_file(Path::new("<stdin>.lex"), &text, color) {
        Ok(f) if check => {
            if f == text {
                OK
            } else {
                print!("{}", diff("<stdin>", &text, &f));
                ERRORS
            }
        }
        Ok(f) => {
            print!("{f}");
            OK
        }
        Err(Unformattable(errors)) => {
            let _ = std::io::stderr().write_all(errors.as_bytes());
            ERRORS
        }
    }
}

/// A unified diff from the file as it is to the file as `fmt` writes it.
pub fn diff(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(name, &format!("{name} (formatted)"))
        .to_string()
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let mut tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))?;
    tmp.write_all(text.as_bytes())?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
