//! The workflow's own `matter` folder, looked at while checking: a default folder that does
//! not exist, or `sources` whose patterns find nothing in it, would otherwise pass unnoticed
//! until a run went ahead without evidence. Both are warnings, not errors: a run may name
//! other folders with `--matter`, and a matter's files arrive over time.

use globset::GlobSetBuilder;

use super::context::{Cx, Decl, Kind};
use super::load::Origin;
use crate::diagnostic::{Code, Diagnostic};
use crate::syntax::ast;

/// Folders under a matter that are not evidence (lexrun's own, hidden ones).
fn skipped(name: &str) -> bool {
    name.starts_with('.') || name == "out"
}

/// At most this many entries are looked at, so a huge folder cannot slow a check down.
const MAX_ENTRIES: usize = 50_000;

/// The files of the workflow's own matter folder, when it has one on disk.
pub(crate) fn own_files(cx: &Cx) -> Option<Vec<String>> {
    let entry = cx.modules.first()?;
    let Origin::Disk { dir } = &entry.origin else {
        return None;
    };
    let m = entry.ast.items.iter().find_map(|i| match i {
        ast::Item::Matter(m) => Some(m),
        _ => None,
    })?;
    let folder = dir.join(&m.node);
    folder.is_dir().then(|| list(folder.as_std_path()))
}

pub(crate) fn matter(cx: &mut Cx) {
    let Some(entry) = cx.modules.first() else {
        return;
    };
    let Origin::Disk { dir } = &entry.origin else {
        return;
    };
    let Some(m) = entry.ast.items.iter().find_map(|i| match i {
        ast::Item::Matter(m) => Some(m),
        _ => None,
    }) else {
        return;
    };
    let folder = dir.join(&m.node);
    let file = entry.file;
    if !folder.is_dir() {
        cx.error(
            Diagnostic::new(
                Code::NoMatter,
                format!("the matter folder `{}` does not exist", m.node),
            )
            .in_file(file)
            .label(m.span, format!("looked for {folder}"))
            .help("fix the path (it is relative to this .lex file), create the folder, or give the folder when running: `lexrun run FILE --matter FOLDER`"),
        );
        return;
    }
    let files = list(folder.as_std_path());
    for e in cx.decls(Kind::Sources) {
        let Decl::Sources(s) = e.decl else { continue };
        let mut set = GlobSetBuilder::new();
        for p in &s.files {
            if let Ok(g) = super::evidence::glob(&p.node) {
                set.add(g.glob().clone());
            }
        }
        let Ok(set) = set.build() else { continue };
        if s.files.is_empty() || files.iter().any(|f| set.is_match(f)) {
            continue;
        }
        let mut d = Diagnostic::new(
            Code::NoMatchingFiles,
            format!(
                "sources `{}` find no file in the matter folder `{}`",
                s.name.node, m.node
            ),
        )
        .in_file(e.file);
        for p in &s.files {
            d = d.label(p.span, "matches nothing");
        }
        let sample: Vec<&str> = files.iter().take(4).map(String::as_str).collect();
        let help = if sample.is_empty() {
            format!(
                "the folder `{}` holds no files yet; a run would have no evidence",
                m.node
            )
        } else {
            format!(
                "a run would have no evidence; patterns are relative to the matter folder, which holds e.g. {}",
                sample.join(", ")
            )
        };
        cx.error(d.help(help));
    }
}

/// The files under `root`, as `/`-separated paths relative to it, sorted.
pub(crate) fn list(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                break;
            }
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !skipped(&name) {
                    stack.push(p);
                }
            } else if let Ok(rel) = p.strip_prefix(root) {
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(rel.join("/"));
            }
        }
    }
    out.sort();
    out
}
