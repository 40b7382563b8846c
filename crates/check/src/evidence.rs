//! Evidence: `sources` declarations, their file patterns and Bates settings, and the rule that
//! lexrun's own outputs can never be read back as evidence. What is proven against them is
//! `verify_rules`; what a run writes is `outputs`.

use globset::{GlobBuilder, GlobMatcher};

use super::context::{Cx, Decl, Kind};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{Bates, Sources};
use crate::syntax::ast;

/// Folders lexrun writes into, relative to the matter: the store and the default output.
pub const OWN_FOLDERS: &[&str] = &[".lexrun", "out"];

pub(crate) fn glob(pattern: &str) -> Result<GlobMatcher, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
}

/// A file name the glob's last component would match: `*.pdf` → `x.pdf`.
pub(crate) fn sample_name(pattern: &str) -> String {
    let last = pattern.rsplit('/').next().unwrap_or(pattern);
    let mut out = String::new();
    let mut chars = last.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                if chars.peek() != Some(&'*') {
                    out.push('x');
                }
            }
            '?' => out.push('x'),
            '[' => {
                let mut first = None;
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    if first.is_none() && d != '!' && d != '^' {
                        first = Some(d);
                    }
                }
                out.push(first.unwrap_or('x'));
            }
            '{' => {
                let mut alt = String::new();
                let mut taking = true;
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                    if d == ',' {
                        taking = false;
                    } else if taking {
                        alt.push(d);
                    }
                }
                out.push_str(&alt);
            }
            c => out.push(c),
        }
    }
    if out.is_empty() {
        "x".into()
    } else {
        out
    }
}

pub(crate) fn sources(cx: &mut Cx) -> Vec<Sources> {
    let outputs: Vec<String> = cx
        .modules
        .iter()
        .flat_map(|m| m.ast.items.iter())
        .filter_map(|i| match i {
            ast::Item::Output(o) => Some(o.path.node.clone()),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for e in cx.decls(Kind::Sources) {
        let Decl::Sources(s) = e.decl else { continue };
        let f = e.file;
        let mut ok = true;
        if s.files.is_empty() && !ast::is_broken(&s.broken, "files") {
            cx.error_at(
                Code::NoFiles,
                f,
                s.name.span,
                format!("sources `{}` lists no files", s.name.node),
                "add `files \"intake/**/*.pdf\"` with patterns relative to the matter folder",
            );
            ok = false;
        }
        for pat in &s.files {
            ok &= check_glob(cx, f, pat, &outputs);
        }
        for (file, reason) in &s.admit {
            let outside = file.node.starts_with('/') || file.node.split('/').any(|p| p == "..");
            if reason.node.trim().is_empty() || file.node.trim().is_empty() || outside {
                let (span, what) = if outside || file.node.trim().is_empty() {
                    (file.span, "a file inside the matter folder")
                } else {
                    (reason.span, "the reason a person admits it")
                };
                cx.error_at(Code::BadAdmit, f, span, format!("`admit` in sources `{}` needs {what}", s.name.node), "write `admit \"intake/annotated-draft.txt\" because \"the client's own corrections\"`: the file relative to the matter, and why it may be used although lexrun wrote it");
                ok = false;
            }
        }
        let bates = s.bates.as_ref().and_then(|b| bates(cx, f, b));
        if s.bates.is_some() && bates.is_none() {
            ok = false;
        }
        if ok {
            out.push(Sources {
                name: s.name.node.clone(),
                files: s.files.iter().map(|p| p.node.clone()).collect(),
                bates,
                description: s.description.as_ref().map(|d| d.node.clone()),
                admit: s
                    .admit
                    .iter()
                    .map(|(f, r)| crate::plan::workflow::Admit {
                        file: f.node.clone(),
                        reason: r.node.clone(),
                    })
                    .collect(),
                ocr_optional: s.ocr_optional,
            });
        }
    }
    out
}

pub(crate) fn check_glob(
    cx: &mut Cx,
    f: FileId,
    pat: &ast::Spanned<String>,
    outputs: &[String],
) -> bool {
    let m = match glob(&pat.node) {
        Ok(m) => m,
        Err(e) => {
            cx.error_at(Code::BadGlob, f, pat.span, format!("`{}` is not a file pattern: {}", pat.node, e.kind()), "patterns use `*` (any name), `**` (any folders), `?` and `[abc]`, e.g. \"intake/**/*.pdf\"");
            return false;
        }
    };
    if pat.node.starts_with('/') || pat.node.split('/').any(|c| c == "..") {
        cx.error_at(
            Code::BadGlob,
            f,
            pat.span,
            format!("`{}` reaches outside the matter folder", pat.node),
            "source patterns are relative to the matter folder; pass other folders with `--matter`",
        );
        return false;
    }
    let name = sample_name(&pat.node);
    let own = OWN_FOLDERS.iter().find(|dir| {
        [
            format!("{dir}/{name}"),
            format!("{dir}/runs/{name}"),
            format!("{dir}/objects/ab/{name}"),
            format!("{dir}/run-1/{name}"),
        ]
        .iter()
        .any(|p| m.is_match(p))
    });
    let output = outputs.iter().find(|o| m.is_match(o.as_str()));
    if own.is_some() || output.is_some() {
        let what = match (own, output) {
            (Some(d), _) => format!("lexrun's own `{d}/` folder"),
            (None, Some(o)) => format!("this workflow's output `{o}`"),
            _ => unreachable!(),
        };
        cx.error(
            Diagnostic::new(Code::SelfPoisoning, format!("`{}` can match {what}", pat.node))
                .in_file(f)
                .label(pat.span, "could read lexrun's outputs as evidence")
                .help("outputs must never re-enter as evidence; anchor the pattern in an evidence folder, e.g. \"intake/**/*.pdf\""),
        );
        return false;
    }
    true
}

pub(crate) fn bates(cx: &mut Cx, f: FileId, b: &ast::BatesDecl) -> Option<Bates> {
    let p = &b.prefix.node;
    let bad = |cx: &mut Cx, span: Span, msg: String, help: &str| {
        cx.error_at(Code::BadBates, f, span, msg, help.to_string());
    };
    if p.is_empty()
        || p.len() > 16
        || !p
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        bad(
            cx,
            b.prefix.span,
            format!("`{p}` is not a usable Bates prefix"),
            "a prefix is 1–16 letters, digits, `_` or `-`, e.g. \"SMITH\"",
        );
        return None;
    }
    let width = b.width.as_ref().map_or(6, |w| w.node);
    if let Some(w) = b.width.as_ref().filter(|w| !(1..=12).contains(&w.node)) {
        bad(
            cx,
            w.span,
            format!("a Bates width of {} digits", w.node),
            "use between 1 and 12 digits; 6 is usual",
        );
        return None;
    }
    let start = b.start.as_ref().map_or(1, |s| s.node);
    if let Some(s) = &b.start {
        if s.node.to_string().len() > width as usize {
            bad(
                cx,
                s.span,
                format!("Bates start {} has more than {width} digits", s.node),
                "raise `width` or lower `start`",
            );
            return None;
        }
    }
    Some(Bates {
        prefix: p.clone(),
        start,
        width,
        suffix: b
            .suffix
            .as_ref()
            .map(|s| s.node.clone())
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_names_follow_the_last_component() {
        assert_eq!(sample_name("intake/**/*.pdf"), "x.pdf");
        assert_eq!(sample_name("**"), "x");
        assert_eq!(sample_name("*.{md,txt}"), "x.md");
        assert_eq!(sample_name("[a-z]?.txt"), "ax.txt");
    }

    #[test]
    fn own_folders_are_caught() {
        let m = glob("**/*.md").unwrap();
        assert!(m.is_match("out/run-1/x.md"));
        let m = glob("intake/**/*.md").unwrap();
        assert!(!m.is_match("out/run-1/x.md"));
    }
}
