//! `init`: a starter workflow library that passes `lexrun check` and `lexrun test` as written.

use std::path::{Path, PathBuf};

use super::output::exit;

/// The starter library: each file's path in it, and its text.
const FILES: &[(&str, &str)] = &[
    ("lexrun.toml", include_str!("init/lexrun.toml")),
    (".gitignore", include_str!("init/gitignore")),
    ("starter.lex", include_str!("init/starter.lex")),
    ("starter.test.lex", include_str!("init/starter.test.lex")),
    (
        "cassettes/starter.jsonl",
        include_str!("init/cassettes/starter.jsonl"),
    ),
    (
        "snapshots/starter__starter-the-sample-matter-drafted-and-verified.snap",
        include_str!("init/snapshots/starter__starter-the-sample-matter-drafted-and-verified.snap"),
    ),
    (
        "matters/sample/matter.txt",
        include_str!("init/matters/sample/matter.txt"),
    ),
    (
        "matters/sample/matter.json",
        include_str!("init/matters/sample/matter.json"),
    ),
    (
        "matters/sample/request.txt",
        include_str!("init/matters/sample/request.txt"),
    ),
    (
        "matters/sample/record/01-client-letter.txt",
        include_str!("init/matters/sample/record/01-client-letter.txt"),
    ),
    (
        "matters/sample/record/02-lease.txt",
        include_str!("init/matters/sample/record/02-lease.txt"),
    ),
];

/// Writes the starter library into `dir` (created if needed). Nothing is overwritten: if any
/// of its files exists already, nothing is written.
pub(super) fn cmd_init(dir: &Path) -> u8 {
    let taken: Vec<PathBuf> = FILES
        .iter()
        .map(|(p, _)| dir.join(p))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    if !taken.is_empty() {
        eprintln!(
            "error: {} already exist{} in `{}`; nothing was written\n  help: run `lexrun init` in an empty folder, e.g. `lexrun init my-library`",
            taken
                .iter()
                .map(|p| format!("`{}`", p.strip_prefix(dir).unwrap_or(p).display()))
                .collect::<Vec<_>>()
                .join(", "),
            if taken.len() == 1 { "s" } else { "" },
            dir.display()
        );
        return exit::USAGE;
    }
    for (path, text) in FILES {
        let to = dir.join(path);
        let written = to
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&to, text));
        if let Err(e) = written {
            eprintln!("error: cannot write `{}`: {e}", to.display());
            return exit::USAGE;
        }
    }
    let shown = dir.display();
    eprintln!(
        "wrote a starter library in `{shown}`: starter.lex (one pool, one model, a gate, a draft, strict verification), the sample matter matters/sample, and starter.test.lex with its cassette\n\
         next:\n  \
         lexrun check {shown}/starter.lex\n  \
         lexrun test {shown}\n  \
         lexrun plan {shown}/starter.lex\n  \
         then set the pool's `serve` URL (or pass --endpoint local=http://HOST:PORT) and `lexrun run {shown}/starter.lex`"
    );
    exit::OK
}
