//! `production` blocks: the volume's numbering, its designations (each used one declared),
//! redaction rules (known patterns, expressions that compile and cannot match nothing, boxes
//! on real pages), withholding with what the privilege log needs, the image format and the
//! load file's fields.

use std::collections::BTreeMap;

use super::context::{Cx, Decl};
use super::step_info::Info;
use crate::diagnostic::{Code, Diagnostic, FileId};
use crate::plan::production::{
    Designate, ImageFormat, Production, Redact, RedactWhat, Withhold, DEFAULT_FIELDS, FIELDS,
    KNOWN_PATTERNS,
};
use crate::plan::workflow::{Bates, StepKind, ToolStage};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

/// Checks a `production` tool stage, in the order its diagnostics are reported: what it
/// reads, its numbering and volume, designations, natives, redactions, withholding, the
/// image format and the load file's fields.
pub(crate) fn stage(
    cx: &mut Cx,
    f: FileId,
    t: &ast::ToolDecl,
    p: &ast::ProductionDecl,
    infos: &BTreeMap<String, Info>,
    matter_files: Option<&[String]>,
) -> Option<StepKind> {
    let mut ck = Block {
        cx,
        f,
        ok: true,
        matter_files,
    };
    reads(&mut ck, t, infos);
    let start_given = p.bates.as_ref().is_some_and(|b| b.start.is_some());
    let bates = numbering(&mut ck, t, p);
    if bates.is_none() {
        ck.ok = false;
    }
    let volume = volume(&mut ck, t, p);
    let legends = legends(&mut ck, p);
    let designate = designations(&mut ck, p);
    for g in &p.natives {
        ck.pattern(g, "natives");
    }
    let redact = p
        .redact
        .iter()
        .filter_map(|r| redaction(&mut ck, r))
        .collect();
    let withhold = p.withhold.iter().map(|w| withheld(&mut ck, w)).collect();
    let images = images(&mut ck, p);
    let fields = fields(&mut ck, p);
    if !t.options.is_empty() {
        ck.ok = false;
    }
    let bates = bates?;
    ck.ok.then(|| {
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

/// One production block being checked: where its diagnostics go, whether any was an error,
/// and the matter's files its document patterns are matched against.
struct Block<'c, 'a> {
    cx: &'c mut Cx<'a>,
    f: FileId,
    ok: bool,
    matter_files: Option<&'c [String]>,
}

impl Block<'_, '_> {
    /// Reports an error in the block's file.
    fn err(&mut self, d: Diagnostic) {
        self.cx.error(d.in_file(self.f));
        self.ok = false;
    }

    /// Checks one document pattern (see [`pattern`]).
    fn pattern(&mut self, g: &ast::Spanned<String>, what: &str) {
        self.ok &= pattern(self.cx, self.f, g, what, self.matter_files);
    }
}

/// A production reads something, and only collected documents: never another step's output.
fn reads(ck: &mut Block, t: &ast::ToolDecl, infos: &BTreeMap<String, Info>) {
    if t.reads.is_empty() && !ast::is_broken(&t.broken, "reads") {
        ck.err(
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
            ck.err(
                Diagnostic::new(
                    Code::SelfPoisoning,
                    format!(
                        "production `{}` would hand over `{}`'s output as documents",
                        t.name.node, r.node
                    ),
                )
                .label(r.span, "an output, not a collected document")
                .help(
                    "a production reads only `sources` (the documents collected from the client)",
                ),
            );
        }
    }
}

/// The numbering: the production's own `bates`, or that of the sources it reads; one of them
/// is there and valid.
fn numbering(ck: &mut Block, t: &ast::ToolDecl, p: &ast::ProductionDecl) -> Option<Bates> {
    if let Some(b) = &p.bates {
        return super::evidence::bates(ck.cx, ck.f, b);
    }
    let from_sources =
        t.reads
            .iter()
            .find_map(|r| match ck.cx.names.get(&r.node).map(|e| e.decl) {
                Some(Decl::Sources(s)) => s.bates.clone(),
                _ => None,
            });
    if let Some(b) = from_sources {
        return super::evidence::bates(ck.cx, ck.f, &b);
    }
    if !ast::is_broken(&t.broken, "bates") {
        ck.err(
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

/// The volume's name, the stage's unless given, which must make a folder name.
fn volume(ck: &mut Block, t: &ast::ToolDecl, p: &ast::ProductionDecl) -> String {
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
            ck.err(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("`{}` cannot name a volume folder", v.node),
                )
                .label(v.span, "")
                .help("a volume is 1–32 letters, digits, `_` or `-`, e.g. \"VOL001\""),
            );
        }
    }
    volume
}

/// Each legend has one line of words to stamp.
fn legends(ck: &mut Block, p: &ast::ProductionDecl) -> Vec<(String, String)> {
    let mut legends = Vec::new();
    for (n, words) in &p.legends {
        if words.node.trim().is_empty() || words.node.contains(['\n', '\r']) {
            ck.err(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("legend `{}` has no words to stamp", n.node),
                )
                .label(words.span, "")
                .help("give the legend as one line: `legend confidential \"CONFIDENTIAL\"`"),
            );
        }
        legends.push((n.node.clone(), words.node.clone()));
    }
    legends
}

/// Each designation names a declared legend, and its document patterns are sound.
fn designations(ck: &mut Block, p: &ast::ProductionDecl) -> Vec<Designate> {
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
            ck.err(d);
        }
        for g in globs {
            ck.pattern(g, "designate");
        }
        designate.push(Designate {
            legend: n.node.clone(),
            files: globs.iter().map(|g| g.node.clone()).collect(),
        });
    }
    designate
}

/// One redaction: a reason to label its box with, and what it redacts; `None` when it is
/// unusable (its error is reported).
fn redaction(ck: &mut Block, r: &ast::RedactDecl) -> Option<Redact> {
    if r.reason.node.trim().is_empty() || r.reason.node.contains(['\n', '\r']) {
        ck.err(
            Diagnostic::new(
                Code::BadRedaction,
                "a redaction needs a reason to label its box with",
            )
            .label(r.reason.span, "")
            .help("write `as \"PII\"` or `as \"PRIVILEGE\"`: the box reads `REDACTED – PII`"),
        );
        return None;
    }
    let what = match &r.what {
        ast::RedactWhat::Kind(k) => known_pattern(ck, k)?,
        ast::RedactWhat::Pattern(re) => own_pattern(ck, re)?,
        ast::RedactWhat::Box { file, page, rect } => redaction_box(ck, file, page, rect)?,
    };
    Some(Redact {
        what,
        reason: r.reason.node.clone(),
    })
}

/// `redact KIND`: one of the patterns lexrun knows.
fn known_pattern(ck: &mut Block, k: &ast::Name) -> Option<RedactWhat> {
    if let Some((n, re, _)) = KNOWN_PATTERNS.iter().find(|(n, _, _)| *n == k.node) {
        return Some(RedactWhat::Pattern {
            name: n.to_string(),
            regex: re.to_string(),
        });
    }
    let names: Vec<&str> = KNOWN_PATTERNS.iter().map(|(n, _, _)| *n).collect();
    let d = Diagnostic::new(
        Code::BadRedaction,
        format!("lexrun knows no pattern `{}`", k.node),
    )
    .label(k.span, "");
    ck.err(match did_you_mean(&k.node, names.iter().copied()) {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None => d.help(format!(
            "known patterns: {}; or declare one: `redact pattern \"ACCT-[0-9]+\" as \"PII\"`",
            names.join(", ")
        )),
    });
    None
}

/// `redact pattern "RE"`: a regular expression that compiles and cannot match empty text.
fn own_pattern(ck: &mut Block, re: &ast::Spanned<String>) -> Option<RedactWhat> {
    match regex::RegexBuilder::new(&re.node)
        .size_limit(1 << 20)
        .build()
    {
        Err(e) => {
            let why = e.to_string();
            let why = why.lines().last().unwrap_or("").trim().to_string();
            ck.err(
                Diagnostic::new(
                    Code::BadRedaction,
                    format!("`{}` is not a regular expression: {why}", re.node),
                )
                .label(re.span, "")
                .help("write e.g. `redact pattern \"ACCT-[0-9]{6}\" as \"PII\"`"),
            );
            None
        }
        Ok(rx) if rx.is_match("") => {
            ck.err(
                Diagnostic::new(Code::BadRedaction, format!("`{}` matches empty text, so it would redact everything", re.node))
                    .label(re.span, "matches nothing at all, everywhere")
                    .help("make the pattern need at least one character, e.g. `[0-9]+` rather than `[0-9]*`"),
            );
            None
        }
        Ok(_) => Some(RedactWhat::Pattern {
            name: "pattern".into(),
            regex: re.node.clone(),
        }),
    }
}

/// `redact box`: a page counted from 1, a box on the page with a size, and a sound document
/// pattern.
fn redaction_box(
    ck: &mut Block,
    file: &ast::Spanned<String>,
    page: &ast::Spanned<u32>,
    rect: &ast::Spanned<[f64; 4]>,
) -> Option<RedactWhat> {
    let [x, y, w, h] = rect.node;
    if page.node == 0 {
        ck.err(
            Diagnostic::new(Code::BadRedaction, "pages are counted from 1")
                .label(page.span, "")
                .help("write `page 1` for the first page"),
        );
        return None;
    }
    if x < 0.0 || y < 0.0 || w <= 0.0 || h <= 0.0 {
        ck.err(
            Diagnostic::new(Code::BadRedaction, "a redaction box lies outside the page or has no size")
                .label(rect.span, "x, y, width, height")
                .help("give the box in points from the page's top-left corner: `at 72, 90, 200, 14` (x and y at least 0, width and height above 0)"),
        );
        return None;
    }
    ck.pattern(file, "redact box");
    Some(RedactWhat::Box {
        file: file.node.clone(),
        page: page.node,
        rect: rect.node,
    })
}

/// A withheld document, for the privilege log: the privilege asserted and sound patterns.
fn withheld(ck: &mut Block, w: &ast::WithholdDecl) -> Withhold {
    if w.privilege.node.trim().is_empty() {
        ck.err(
            Diagnostic::new(Code::InvalidValue, "a withheld document needs the privilege asserted")
                .label(w.privilege.span, "")
                .help("write `withhold \"memo/**\" as \"Attorney-Client Privilege\" because \"Advice on the lease\"`"),
        );
    }
    for g in &w.files {
        ck.pattern(g, "withhold");
    }
    Withhold {
        files: w.files.iter().map(|g| g.node.clone()).collect(),
        privilege: w.privilege.node.clone(),
        description: w.because.as_ref().map(|b| b.node.clone()),
    }
}

/// The image format is one lexrun produces: PDF, unless TIFF is asked for.
fn images(ck: &mut Block, p: &ast::ProductionDecl) -> ImageFormat {
    match p.images.as_ref().map(|i| i.node.as_str()) {
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
            ck.err(match did_you_mean(other, ["pdf", "tiff"]) {
                Some(s) => d.help(format!(
                    "did you mean `images {s}`? lexrun writes {formats}"
                )),
                None => d.help(format!("write {formats}")),
            });
            ImageFormat::Pdf
        }
    }
}

/// The load file's fields: each one it has, listed once, with the Bates numbers leading; all
/// of them when none is listed.
fn fields(ck: &mut Block, p: &ast::ProductionDecl) -> Vec<String> {
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
            ck.err(d);
        } else if fields.contains(&n.node) {
            ck.err(
                Diagnostic::new(
                    Code::BadField,
                    format!("the field `{}` is listed twice", n.node),
                )
                .label(n.span, "")
                .help("list each field once"),
            );
        } else {
            fields.push(n.node.clone());
        }
    }
    if fields.is_empty() {
        fields = DEFAULT_FIELDS.iter().map(|s| s.to_string()).collect();
    } else {
        // The numbers a load file is keyed by always lead.
        for (i, k) in ["BEGBATES", "ENDBATES"].iter().enumerate() {
            if !fields.iter().any(|x| x == k) {
                fields.insert(i, k.to_string());
            }
        }
    }
    fields
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
        cx.error_at(Code::BadGlob, f, g.span, format!("`{}` is not a file pattern: {}", g.node, e.kind()), "patterns use `*` (any name), `**` (any folders), `?` and `[abc]`, e.g. \"finance/**/*.xlsx\"");
        return false;
    }
    if outside {
        cx.error_at(
            Code::BadGlob,
            f,
            g.span,
            format!("`{}` reaches outside the matter folder", g.node),
            "document patterns are relative to the matter folder",
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
