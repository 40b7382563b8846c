//! `production` blocks: the volume's numbering, its designations (each used one declared),
//! redaction rules (known patterns, expressions that compile and cannot match nothing, boxes
//! on real pages), withholding with what the privilege log needs, the image format and the
//! load file's fields.

use std::collections::BTreeMap;

use super::context::{Cx, Decl};
use super::step_info::Info;
use crate::diagnostic::{Code, Diagnostic, FileId};
use crate::plan::production::{
    Designate, ImageFormat, Production, Redact, RedactWhat, Withhold, FIELDS, KNOWN_PATTERNS,
};
use crate::plan::workflow::{StepKind, ToolStage};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

pub(crate) fn stage(
    cx: &mut Cx,
    f: FileId,
    t: &ast::ToolDecl,
    p: &ast::ProductionDecl,
    infos: &BTreeMap<String, Info>,
    matter_files: Option<&[String]>,
) -> Option<StepKind> {
    let mut ok = true;
    macro_rules! err {
        ($cx:expr, $d:expr $(,)?) => {{
            $cx.error($d.in_file(f));
            ok = false;
        }};
    }
    if t.reads.is_empty() && !ast::is_broken(&t.broken, "reads") {
        err!(
            cx,
            Diagnostic::new(
                Code::MissingSetting,
                format!("production `{}` reads nothing", t.name.node),
            )
            .label(t.name.span, "")
            .help("add `reads SOURCES` naming the collected documents it produces"),
        );
    }
    for r in &t.reads {
        let info = infos.get(&r.node);
        if info.is_some_and(|i| {
            !i.is_tool || matches!(i.tool_kind, Some("index" | "verify-draft" | "production"))
        }) {
            err!(
                cx,
                Diagnostic::new(
                    Code::SelfPoisoning,
                    format!(
                        "production `{}` would hand over `{}`'s output as documents",
                        t.name.node, r.node
                    ),
                )
                .label(r.span, "an output, not a collected document")
                .help(
                    "a production reads only `sources` (the documents collected from the client)"
                ),
            );
        }
    }
    let start_given = p.bates.as_ref().is_some_and(|b| b.start.is_some());
    // Numbering: the production's own `bates`, or that of the sources it reads.
    let bates = match &p.bates {
        Some(b) => super::evidence::bates(cx, f, b),
        None => {
            let from_sources =
                t.reads
                    .iter()
                    .find_map(|r| match cx.names.get(&r.node).map(|e| e.decl) {
                        Some(Decl::Sources(s)) => s.bates.clone(),
                        _ => None,
                    });
            match from_sources {
                Some(b) => super::evidence::bates(cx, f, &b),
                None => {
                    if !ast::is_broken(&t.broken, "bates") {
                        err!(
                            cx,
                            Diagnostic::new(
                                Code::MissingSetting,
                                format!("production `{}` has no Bates numbering", t.name.node),
                            )
                            .label(t.name.span, "")
                            .help("add `bates \"HARBOR\" start 1 width 7`"),
                        );
                    }
                    None
                }
            }
        }
    };
    if bates.is_none() {
        ok = false;
    }
    let volume = p
        .volume
        .as_ref()
        .map_or_else(|| t.name.node.clone(), |v| v.node.clone());
    if let Some(v) = &p.volume {
        let good = !v.node.is_empty()
            && v.node.len() <= 32
            && v.node
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !good {
            err!(
                cx,
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("`{}` cannot name a volume folder", v.node)
                )
                .label(v.span, "")
                .help("a volume is 1–32 letters, digits, `_` or `-`, e.g. \"VOL001\""),
            );
        }
    }
    // Designations.
    let mut legends = Vec::new();
    for (n, words) in &p.legends {
        if words.node.trim().is_empty() || words.node.contains(['\n', '\r']) {
            err!(
                cx,
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("legend `{}` has no words to stamp", n.node)
                )
                .label(words.span, "")
                .help("give the legend as one line: `legend confidential \"CONFIDENTIAL\"`"),
            );
        }
        legends.push((n.node.clone(), words.node.clone()));
    }
    let legend_names: Vec<&str> = p.legends.iter().map(|(n, _)| n.node.as_str()).collect();
    let mut designate = Vec::new();
    for (n, globs) in &p.designate {
        if !legend_names.contains(&n.node.as_str()) {
            let d = Diagnostic::new(
                Code::UndefinedDesignation,
                format!("there is no designation `{}`", n.node),
            )
            .label(n.span, "not declared");
            let d = match did_you_mean(&n.node, legend_names.iter().copied()) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None if legend_names.is_empty() => d.help(format!(
                    "declare it first: `legend {} \"CONFIDENTIAL\"`",
                    n.node
                )),
                None => d.help(format!(
                    "declared designations: {}",
                    legend_names.join(", ")
                )),
            };
            err!(cx, d);
        }
        for g in globs {
            ok &= pattern(cx, f, g, "designate", matter_files);
        }
        designate.push(Designate {
            legend: n.node.clone(),
            files: globs.iter().map(|g| g.node.clone()).collect(),
        });
    }
    for g in &p.natives {
        ok &= pattern(cx, f, g, "natives", matter_files);
    }
    // Redactions.
    let mut redact = Vec::new();
    for r in &p.redact {
        if r.reason.node.trim().is_empty() || r.reason.node.contains(['\n', '\r']) {
            err!(
                cx,
                Diagnostic::new(
                    Code::BadRedaction,
                    "a redaction needs a reason to label its box with"
                )
                .label(r.reason.span, "")
                .help("write `as \"PII\"` or `as \"PRIVILEGE\"`: the box reads `REDACTED – PII`"),
            );
            continue;
        }
        let what = match &r.what {
            ast::RedactWhat::Kind(k) => {
                match KNOWN_PATTERNS.iter().find(|(n, _, _)| *n == k.node) {
                    Some((n, re, _)) => RedactWhat::Pattern {
                        name: n.to_string(),
                        regex: re.to_string(),
                    },
                    None => {
                        let names: Vec<&str> = KNOWN_PATTERNS.iter().map(|(n, _, _)| *n).collect();
                        let d = Diagnostic::new(
                            Code::BadRedaction,
                            format!("lexrun knows no pattern `{}`", k.node),
                        )
                        .label(k.span, "");
                        err!(
                        cx,
                        match did_you_mean(&k.node, names.iter().copied()) {
                            Some(s) => d.help(format!("did you mean `{s}`?")),
                            None => d.help(format!(
                                "known patterns: {}; or declare one: `redact pattern \"ACCT-[0-9]+\" as \"PII\"`",
                                names.join(", ")
                            )),
                        },
                    );
                        continue;
                    }
                }
            }
            ast::RedactWhat::Pattern(re) => {
                match regex::RegexBuilder::new(&re.node)
                    .size_limit(1 << 20)
                    .build()
                {
                    Err(e) => {
                        let why = e.to_string();
                        let why = why.lines().last().unwrap_or("").trim().to_string();
                        err!(
                            cx,
                            Diagnostic::new(
                                Code::BadRedaction,
                                format!("`{}` is not a regular expression: {why}", re.node)
                            )
                            .label(re.span, "")
                            .help("write e.g. `redact pattern \"ACCT-[0-9]{6}\" as \"PII\"`"),
                        );
                        continue;
                    }
                    Ok(rx) if rx.is_match("") => {
                        err!(
                            cx,
                            Diagnostic::new(Code::BadRedaction, format!("`{}` matches empty text, so it would redact everything", re.node))
                                .label(re.span, "matches nothing at all, everywhere")
                                .help("make the pattern need at least one character, e.g. `[0-9]+` rather than `[0-9]*`"),
                        );
                        continue;
                    }
                    Ok(_) => RedactWhat::Pattern {
                        name: "pattern".into(),
                        regex: re.node.clone(),
                    },
                }
            }
            ast::RedactWhat::Box { file, page, rect } => {
                let [x, y, w, h] = rect.node;
                if page.node == 0 {
                    err!(
                        cx,
                        Diagnostic::new(Code::BadRedaction, "pages are counted from 1")
                            .label(page.span, "")
                            .help("write `page 1` for the first page"),
                    );
                    continue;
                }
                if x < 0.0 || y < 0.0 || w <= 0.0 || h <= 0.0 {
                    err!(
                        cx,
                        Diagnostic::new(Code::BadRedaction, "a redaction box lies outside the page or has no size")
                            .label(rect.span, "x, y, width, height")
                            .help("give the box in points from the page's top-left corner: `at 72, 90, 200, 14` (x and y at least 0, width and height above 0)"),
                    );
                    continue;
                }
                ok &= pattern(cx, f, file, "redact box", matter_files);
                RedactWhat::Box {
                    file: file.node.clone(),
                    page: page.node,
                    rect: rect.node,
                }
            }
        };
        redact.push(Redact {
            what,
            reason: r.reason.node.clone(),
        });
    }
    // Withholding, for the privilege log.
    let mut withhold = Vec::new();
    for w in &p.withhold {
        if w.privilege.node.trim().is_empty() {
            err!(
                cx,
                Diagnostic::new(Code::InvalidValue, "a withheld document needs the privilege asserted")
                    .label(w.privilege.span, "")
                    .help("write `withhold \"memo/**\" as \"Attorney-Client Privilege\" because \"Advice on the lease\"`"),
            );
        }
        for g in &w.files {
            ok &= pattern(cx, f, g, "withhold", matter_files);
        }
        withhold.push(Withhold {
            files: w.files.iter().map(|g| g.node.clone()).collect(),
            privilege: w.privilege.node.clone(),
            description: w.because.as_ref().map(|b| b.node.clone()),
        });
    }
    let images = match p.images.as_ref().map(|i| i.node.as_str()) {
        None | Some("pdf") => ImageFormat::Pdf,
        Some("tiff") => ImageFormat::Tiff,
        Some(other) => {
            let span = p.images.as_ref().map(|i| i.span).unwrap_or_default();
            let formats = "`images pdf` (one PDF a page) or `images tiff` (one single-page Group IV TIFF a page at 300 dpi)";
            let d = Diagnostic::new(
                Code::InvalidValue,
                format!("`{other}` is not an image format lexrun produces"),
            )
            .label(span, "");
            err!(
                cx,
                match did_you_mean(other, ["pdf", "tiff"]) {
                    Some(s) => d.help(format!(
                        "did you mean `images {s}`? lexrun writes {formats}"
                    )),
                    None => d.help(format!("write {formats}")),
                },
            );
            ImageFormat::Pdf
        }
    };
    let mut fields = Vec::new();
    for n in &p.fields {
        if !FIELDS.contains(&n.node.as_str()) {
            let d = Diagnostic::new(
                Code::BadField,
                format!("the load file has no field `{}`", n.node),
            )
            .label(n.span, "");
            let upper = n.node.to_ascii_uppercase();
            let d = if FIELDS.contains(&upper.as_str()) {
                d.help(format!("fields are written in capitals: `{upper}`"))
            } else {
                match did_you_mean(&upper, FIELDS.iter().copied()) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!("fields: {}", FIELDS.join(", "))),
                }
            };
            err!(cx, d);
        } else if fields.contains(&n.node) {
            err!(
                cx,
                Diagnostic::new(
                    Code::BadField,
                    format!("the field `{}` is listed twice", n.node)
                )
                .label(n.span, "")
                .help("list each field once"),
            );
        } else {
            fields.push(n.node.clone());
        }
    }
    if fields.is_empty() {
        fields = FIELDS.iter().map(|s| s.to_string()).collect();
    } else {
        // The numbers a load file is keyed by always lead.
        for (i, k) in ["BEGBATES", "ENDBATES"].iter().enumerate() {
            if !fields.iter().any(|x| x == k) {
                fields.insert(i, k.to_string());
            }
        }
    }
    if !t.options.is_empty() {
        ok = false;
    }
    let bates = bates?;
    ok.then(|| {
        StepKind::Tool(ToolStage {
            tool: "production".into(),
            options: BTreeMap::new(),
            production: Some(Box::new(Production {
                volume,
                bates,
                start_given,
                legends,
                designate,
                redact,
                withhold,
                natives: p.natives.iter().map(|g| g.node.clone()).collect(),
                images,
                fields,
            })),
        })
    })
}

/// A document pattern: it must parse, stay inside the matter, and (when the matter folder is
/// there to look in) match a file; matching nothing is a warning.
fn pattern(
    cx: &mut Cx,
    f: FileId,
    g: &ast::Spanned<String>,
    what: &str,
    matter_files: Option<&[String]>,
) -> bool {
    // These patterns choose among documents the sources already read, so only their form
    // matters here: they parse and stay inside the matter.
    let parsed = super::evidence::glob(&g.node);
    let outside = g.node.starts_with('/') || g.node.split('/').any(|c| c == "..");
    if let Err(e) = &parsed {
        cx.error(
            Diagnostic::new(Code::BadGlob, format!("`{}` is not a file pattern: {}", g.node, e.kind()))
                .in_file(f)
                .label(g.span, "")
                .help("patterns use `*` (any name), `**` (any folders), `?` and `[abc]`, e.g. \"finance/**/*.xlsx\""),
        );
        return false;
    }
    if outside {
        cx.error(
            Diagnostic::new(
                Code::BadGlob,
                format!("`{}` reaches outside the matter folder", g.node),
            )
            .in_file(f)
            .label(g.span, "")
            .help("document patterns are relative to the matter folder"),
        );
        return false;
    }
    if let (Some(files), Ok(m)) = (matter_files, parsed) {
        if !files.iter().any(|x| m.is_match(x)) {
            let sample: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
            cx.error(
                Diagnostic::new(
                    Code::ProductionPatternUnmatched,
                    format!("`{what} \"{}\"` matches no document in the matter", g.node),
                )
                .in_file(f)
                .label(g.span, "matches nothing")
                .help(if sample.is_empty() {
                    "the matter folder holds no files yet".to_string()
                } else {
                    format!(
                        "patterns are relative to the matter folder, which holds e.g. {}",
                        sample.join(", ")
                    )
                }),
            );
        }
    }
    true
}
