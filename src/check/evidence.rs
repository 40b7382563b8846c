//! Evidence and what is proven against it: `sources`, `verify` blocks and `output`s, and the
//! rule that lexrun's own outputs can never be read back as evidence.

use globset::{GlobBuilder, GlobMatcher};

use super::{Cx, Decl, Kind};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{Bates, Output, Policy, Sources, Step, StepKind, Verify, VerifyRule};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

/// Folders lexrun writes into, relative to the matter: the store and the default output.
pub const OWN_FOLDERS: &[&str] = &[".lexrun", "out"];

fn glob(pattern: &str) -> Result<GlobMatcher, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
}

/// A file name the glob's last component would match: `*.pdf` → `x.pdf`.
fn sample_name(pattern: &str) -> String {
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
        if s.files.is_empty() && !s.broken.iter().any(|b| b == "files") {
            cx.error(
                Diagnostic::new(
                    Code::NoFiles,
                    format!("sources `{}` lists no files", s.name.node),
                )
                .in_file(f)
                .label(s.name.span, "")
                .help(
                    "add `files \"intake/**/*.pdf\"` with patterns relative to the matter folder",
                ),
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
                cx.error(
                    Diagnostic::new(
                        Code::BadAdmit,
                        format!("`admit` in sources `{}` needs {what}", s.name.node),
                    )
                    .in_file(f)
                    .label(span, "")
                    .help("write `admit \"intake/annotated-draft.txt\" because \"the client's own corrections\"`: the file relative to the matter, and why it may be used although lexrun wrote it"),
                );
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
            });
        }
    }
    out
}

fn check_glob(cx: &mut Cx, f: FileId, pat: &ast::Spanned<String>, outputs: &[String]) -> bool {
    let m = match glob(&pat.node) {
        Ok(m) => m,
        Err(e) => {
            cx.error(
                Diagnostic::new(Code::BadGlob, format!("`{}` is not a file pattern: {}", pat.node, e.kind()))
                    .in_file(f)
                    .label(pat.span, "")
                    .help("patterns use `*` (any name), `**` (any folders), `?` and `[abc]`, e.g. \"intake/**/*.pdf\""),
            );
            return false;
        }
    };
    if pat.node.starts_with('/') || pat.node.split('/').any(|c| c == "..") {
        cx.error(
            Diagnostic::new(Code::BadGlob, format!("`{}` reaches outside the matter folder", pat.node))
                .in_file(f)
                .label(pat.span, "")
                .help("source patterns are relative to the matter folder; pass other folders with `--matter`"),
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

fn bates(cx: &mut Cx, f: FileId, b: &ast::BatesDecl) -> Option<Bates> {
    let p = &b.prefix.node;
    let bad = |cx: &mut Cx, span: Span, msg: String, help: &str| {
        cx.error(
            Diagnostic::new(Code::BadBates, msg)
                .in_file(f)
                .label(span, "")
                .help(help.to_string()),
        );
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

use crate::syntax::CLAIM_KINDS as CLAIMS;

fn requirement_ok(kind: &str, req: &str) -> bool {
    match kind {
        "bates" => req == "exist",
        "quotes" => req == "match" || req.starts_with("match") && req.ends_with("exactly"),
        _ => req == "appear",
    }
}

fn requirement_help(kind: &str) -> &'static str {
    match kind {
        "bates" => "write `bates must exist`: a Bates number is supported when it was stamped on a page of the sources",
        "quotes" => "write `quotes must match exactly` (or `must match`, which allows ellipses and bracketed changes)",
        _ => "write e.g. `citations must appear`: the claim must appear in the sources",
    }
}

fn policy(cx: &mut Cx, f: FileId, n: &ast::Name) -> Option<Policy> {
    Some(match n.node.as_str() {
        "block" => Policy::Block,
        "revise" => Policy::Revise,
        "flag" => Policy::Flag,
        _ => {
            cx.error(
                Diagnostic::new(
                    Code::BadRule,
                    format!("`{}` is not a failure policy", n.node),
                )
                .in_file(f)
                .label(n.span, "")
                .help("policies: block, revise, flag"),
            );
            return None;
        }
    })
}

/// A rule and its own policy (`or flag`), if it names one.
type RuleDraft = (VerifyRule, Option<Policy>);

/// `on failure POLICY, at most N rounds`.
type OnFailure = (Policy, Option<u32>);

/// Rules of a body, rule sets it includes first so the body's own rules override them. A rule
/// without `or POLICY` follows the nearest `on failure`: the body's, else its rule set's.
fn rules(
    cx: &mut Cx,
    f: FileId,
    body: &ast::VerifyBody,
    depth: usize,
) -> Option<(Vec<RuleDraft>, Option<OnFailure>)> {
    let mut out: Vec<RuleDraft> = Vec::new();
    let mut on_failure = None;
    let mut ok = true;
    for inc in &body.includes {
        let Some(entry) = cx.lookup(inc, f, &[Kind::Ruleset]) else {
            ok = false;
            continue;
        };
        let Decl::Ruleset(r) = entry.decl else {
            continue;
        };
        if depth > 8 {
            ok = false;
            continue;
        }
        let Some((inner, inner_fail)) = rules(cx, entry.file, &r.body, depth + 1) else {
            ok = false;
            continue;
        };
        for (mut rule, own) in inner {
            rule.from = inc.node.clone();
            out.retain(|x| x.0.claims != rule.claims);
            out.push((rule, own));
        }
        on_failure = inner_fail.or(on_failure);
    }
    let default_policy = match &body.on_failure {
        Some(of) => {
            let p = policy(cx, f, &of.policy);
            if p.is_none() {
                ok = false;
            }
            if let Some(n) = of
                .max_rounds
                .as_ref()
                .filter(|n| n.node == 0 || n.node > 20)
            {
                cx.error(
                    Diagnostic::new(
                        Code::BadRule,
                        format!("{} rounds is not a usable limit", n.node),
                    )
                    .in_file(f)
                    .label(n.span, "")
                    .help("allow between 1 and 20 rounds of revision; 2 is usual"),
                );
                ok = false;
            }
            p.map(|p| (p, of.max_rounds.as_ref().map(|n| n.node)))
        }
        None => None,
    };
    if default_policy.is_some() {
        on_failure = default_policy;
    }
    for r in &body.rules {
        let kind = r.kind.node.as_str();
        if !CLAIMS.contains(&kind) {
            let d = Diagnostic::new(Code::BadRule, format!("lexrun cannot check `{kind}`"))
                .in_file(f)
                .label(r.kind.span, "");
            cx.error(match did_you_mean(kind, CLAIMS.iter().copied()) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help(format!("claims lexrun checks: {}", CLAIMS.join(", "))),
            });
            ok = false;
            continue;
        }
        let req = r
            .requirement
            .node
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if !requirement_ok(kind, &req) {
            cx.error(
                Diagnostic::new(
                    Code::BadRule,
                    format!("`{kind} must {req}` is not a rule lexrun applies"),
                )
                .in_file(f)
                .label(r.requirement.span, "")
                .help(requirement_help(kind)),
            );
            ok = false;
            continue;
        }
        let p = match &r.policy {
            Some(p) => match policy(cx, f, p) {
                Some(p) => Some(p),
                None => {
                    ok = false;
                    continue;
                }
            },
            None => None,
        };
        out.retain(|x| x.0.claims != kind);
        out.push((
            VerifyRule {
                claims: kind.to_string(),
                must: req,
                policy: p.unwrap_or(Policy::Block),
                from: "inline".into(),
            },
            p,
        ));
    }
    ok.then_some((out, on_failure))
}

pub(crate) fn verify(cx: &mut Cx, steps: &[Step]) -> Vec<Verify> {
    let mut out = Vec::new();
    let decls: Vec<(FileId, &ast::VerifyDecl)> = cx
        .modules
        .iter()
        .flat_map(|m| {
            m.ast.items.iter().filter_map(move |i| match i {
                ast::Item::Verify(v) => Some((m.file, &**v)),
                _ => None,
            })
        })
        .collect();
    for (f, v) in decls {
        let mut ok = true;
        match cx.lookup(&v.target, f, &[Kind::Stage, Kind::Tool]) {
            Some(e) if matches!(e.decl, Decl::Tool(_)) => {
                cx.error(
                    Diagnostic::new(
                        Code::WrongKind,
                        format!(
                            "`{}` is a tool; `verify` checks what a model wrote",
                            v.target.node
                        ),
                    )
                    .in_file(f)
                    .label(v.target.span, "")
                    .help("verify a model stage; to check a draft file use a `verify-draft` tool"),
                );
                ok = false;
            }
            Some(_) => {}
            None => ok = false,
        }
        if out.iter().any(|x: &Verify| x.stage == v.target.node) {
            cx.error(
                Diagnostic::new(
                    Code::DuplicateName,
                    format!("`{}` is verified twice", v.target.node),
                )
                .in_file(f)
                .label(v.target.span, "")
                .help("put all rules for one stage in one `verify` block"),
            );
            ok = false;
        }
        for a in &v.against {
            let Some(e) = cx.lookup(a, f, &[Kind::Sources, Kind::Stage, Kind::Tool]) else {
                ok = false;
                continue;
            };
            let is_evidence = match e.decl {
                Decl::Sources(_) => true,
                _ => steps.iter().any(|s| s.name == a.node && s.evidence),
            };
            if !is_evidence {
                cx.error(
                    Diagnostic::new(
                        Code::VerifyAgainstOutput,
                        format!("`{}` would be checked against `{}`, which is an output, not evidence", v.target.node, a.node),
                    )
                    .in_file(f)
                    .label(a.span, "an output")
                    .help("verify against `sources` (or a bates/ocr/merge tool reading them); a model's own text can never prove a claim"),
                );
                ok = false;
            }
        }
        let Some((drafts, fail)) = rules(cx, f, &v.body, 0) else {
            continue;
        };
        if drafts.is_empty() {
            cx.error(
                Diagnostic::new(
                    Code::BadRule,
                    format!("the `verify` block for `{}` checks nothing", v.target.node),
                )
                .in_file(f)
                .label(v.span, "")
                .help("add rules such as `citations must appear`, or `rules std.verify.strict`"),
            );
            continue;
        }
        let (on_failure, rounds) = fail.unwrap_or((Policy::Block, None));
        let rs: Vec<VerifyRule> = drafts
            .into_iter()
            .map(|(mut r, own)| {
                r.policy = own.unwrap_or(on_failure);
                r
            })
            .collect();
        if ok {
            out.push(Verify {
                stage: v.target.node.clone(),
                against: v.against.iter().map(|a| a.node.clone()).collect(),
                rules: rs,
                on_failure,
                max_rounds: rounds.unwrap_or(2),
            });
        }
    }
    out
}

const FORMATS: &[&str] = &["md", "txt", "json", "docx", "pdf"];

pub(crate) fn outputs(cx: &mut Cx, steps: &[Step], verify: &[Verify]) -> Vec<Output> {
    let decls: Vec<(FileId, &ast::OutputDecl)> = cx
        .modules
        .iter()
        .flat_map(|m| {
            m.ast.items.iter().filter_map(move |i| match i {
                ast::Item::Output(o) => Some((m.file, o)),
                _ => None,
            })
        })
        .collect();
    let mut out: Vec<(Output, Span)> = Vec::new();
    for (f, o) in decls {
        let path = &o.path.node;
        let mut ok = cx.lookup(&o.from, f, &[Kind::Stage, Kind::Tool]).is_some();
        let ext = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        if !FORMATS.contains(&ext.as_str()) {
            cx.error(
                Diagnostic::new(
                    Code::BadOutput,
                    format!("lexrun cannot write `{path}`: unknown format"),
                )
                .in_file(f)
                .label(o.path.span, "")
                .help(format!(
                    "the extension picks the format: {}",
                    FORMATS
                        .iter()
                        .map(|e| format!(".{e}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            ok = false;
        }
        if path.starts_with('/') || path.split(['/', '\\']).any(|c| c == "..") || path.contains(':')
        {
            cx.error(
                Diagnostic::new(Code::BadOutput, format!("`{path}` points outside the output folder"))
                    .in_file(f)
                    .label(o.path.span, "")
                    .help("output paths are relative to the output folder (`--out`); drop the leading `/` or `..`"),
            );
            ok = false;
        }
        if let Some((_, first)) = out.iter().find(|(x, _)| x.path == *path) {
            let first = *first;
            cx.error(
                Diagnostic::new(
                    Code::DuplicateOutput,
                    format!("two outputs are written to `{path}`"),
                )
                .in_file(f)
                .label(o.path.span, "second")
                .label(first, "first")
                .help("give each output its own file name"),
            );
            ok = false;
        }
        let appendix = match &o.appendix {
            Some(a) if a.node == "verification" => {
                if !verify.iter().any(|v| v.stage == o.from.node)
                    && steps.iter().any(|s| s.name == o.from.node)
                {
                    cx.error(
                        Diagnostic::new(Code::BadOutput, format!("`{}` is not verified, so there is no verification report to append", o.from.node))
                            .in_file(f)
                            .label(a.span, "")
                            .help(format!("add `verify {} against SOURCES {{ … }}`, or drop the appendix", o.from.node)),
                    );
                    ok = false;
                }
                Some(a.node.clone())
            }
            Some(a) => {
                cx.error(
                    Diagnostic::new(
                        Code::BadOutput,
                        format!("`{}` is not an appendix lexrun writes", a.node),
                    )
                    .in_file(f)
                    .label(a.span, "")
                    .help("write `appendix verification`"),
                );
                ok = false;
                None
            }
            None => None,
        };
        if let Some(s) = steps.iter().find(|s| s.name == o.from.node) {
            if let StepKind::Tool(t) = &s.kind {
                if ext != "pdf" && matches!(t.tool.as_str(), "bates" | "merge") {
                    cx.error(
                        Diagnostic::new(
                            Code::BadOutput,
                            format!("`{}` produces PDF files", o.from.node),
                        )
                        .in_file(f)
                        .label(o.path.span, "")
                        .help("write it to a `.pdf` path"),
                    );
                    ok = false;
                }
            }
        }
        if ok {
            out.push((
                Output {
                    path: path.clone(),
                    from: o.from.node.clone(),
                    format: ext,
                    appendix,
                },
                o.path.span,
            ));
        }
    }
    out.into_iter().map(|(o, _)| o).collect()
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
