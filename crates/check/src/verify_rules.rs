//! `verify` blocks and rule sets: which claims must be proven against which sources, and
//! what happens when they are not.

use super::context::{Cx, Decl, Kind};
use crate::claim_kind::{self, Kind as ClaimKind, Must};
use crate::diagnostic::{Code, Diagnostic, FileId};
use crate::plan::workflow::{Policy, Step, Verify, VerifyRule};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

pub(crate) fn policy(cx: &mut Cx, f: FileId, n: &ast::Name) -> Option<Policy> {
    Some(match n.node.as_str() {
        "block" => Policy::Block,
        "revise" => Policy::Revise,
        "flag" => Policy::Flag,
        _ => {
            cx.error_at(
                Code::BadRule,
                f,
                n.span,
                format!("`{}` is not a failure policy", n.node),
                "policies: block, revise, flag",
            );
            return None;
        }
    })
}

/// A rule and its own policy (`or flag`), if it names one.
pub(crate) type RuleDraft = (VerifyRule, Option<Policy>);

/// `on failure POLICY, at most N rounds`.
pub(crate) type OnFailure = (Policy, Option<u32>);

/// Rules of a body, rule sets it includes first so the body's own rules override them. A rule
/// without `or POLICY` follows the nearest `on failure`: the body's, else its rule set's.
pub(crate) fn rules(
    cx: &mut Cx,
    f: FileId,
    body: &ast::VerifyBody,
    depth: usize,
    allowed: &mut Accepted,
) -> Option<(Vec<RuleDraft>, Option<OnFailure>)> {
    let mut out: Vec<RuleDraft> = Vec::new();
    let mut on_failure = None;
    let mut ok = true;
    if let (Some(j), true) = (&body.judge, depth > 0) {
        cx.error_at(Code::BadRule, f, j.span, "a rule set cannot name a judge", "name the judge in each `verify` block that uses this rule set: `judge MODEL`, a model of that workflow");
        ok = false;
    }
    ok &= allow(cx, f, body, &mut allowed.reporters);
    ok &= ignore(cx, f, body, &mut allowed.ignored);
    for inc in &body.includes {
        let Some((inner, inner_fail)) = included(cx, f, inc, depth, allowed) else {
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
    if let Some(of) = &body.on_failure {
        let default_policy = on_failure_of(cx, f, of);
        ok &= default_policy.is_some();
        if default_policy.is_some() {
            on_failure = default_policy;
        }
    }
    for r in &body.rules {
        let Some((rule, p)) = rule(cx, f, r) else {
            ok = false;
            continue;
        };
        out.retain(|x| x.0.claims != rule.claims);
        out.push((rule, p));
    }
    ok.then_some((out, on_failure))
}

/// What a block accepts beyond its rules: reporter abbreviations (`allow reporter`) and the
/// prefixes of identifiers that are not Bates numbers (`ignore prefixes`).
#[derive(Default)]
pub(crate) struct Accepted {
    reporters: Vec<String>,
    ignored: Vec<String>,
}

/// `ignore prefixes "BD", "INV"`: only prefixes are ignored, each a run of letters (and
/// digits) as it stands before an invoice, order or account number.
fn ignore(cx: &mut Cx, f: FileId, body: &ast::VerifyBody, ignored: &mut Vec<String>) -> bool {
    let mut ok = true;
    for (what, names) in &body.ignore {
        if !matches!(what.node.as_str(), "prefix" | "prefixes") {
            cx.error_at(Code::BadRule, f, what.span, format!("lexrun cannot ignore `{}`", what.node), "write `ignore prefixes \"BD\", \"INV\"` to say that numbers with these prefixes (invoice, order, account numbers) are not Bates numbers");
            ok = false;
            continue;
        }
        for n in names {
            let p = n.node.trim().trim_end_matches(['-', ' ', '_']);
            if p.is_empty()
                || !p.chars().all(|c| c.is_ascii_alphanumeric())
                || !p.chars().any(|c| c.is_ascii_alphabetic())
            {
                cx.error_at(Code::BadRule, f, n.span, format!("`{}` is not a prefix of a number", n.node), "write the letters before the number as they are printed, e.g. `ignore prefixes \"BD\"` for BD-1073");
                ok = false;
            } else if !ignored.iter().any(|x| x.eq_ignore_ascii_case(p)) {
                ignored.push(p.to_string());
            }
        }
    }
    ok
}

/// `allow reporter "ABBREVIATION"`: only reporters are allowed, each by an abbreviation,
/// gathered once into `allowed`. True when every one is usable.
fn allow(cx: &mut Cx, f: FileId, body: &ast::VerifyBody, allowed: &mut Vec<String>) -> bool {
    let mut ok = true;
    for (what, names) in &body.allow {
        if !matches!(what.node.as_str(), "reporter" | "reporters") {
            cx.error_at(Code::BadRule, f, what.span, format!("lexrun cannot allow `{}`", what.node), "write `allow reporter \"ABBREVIATION\"` to accept a reporter abbreviation lexrun's catalogue does not list");
            ok = false;
            continue;
        }
        for n in names {
            if n.node.trim().is_empty() || !n.node.chars().any(char::is_alphabetic) {
                cx.error_at(Code::BadRule, f, n.span, "an allowed reporter needs its abbreviation", "write the abbreviation as it appears in citations, e.g. `allow reporter \"Betts' Dec.\"`");
                ok = false;
            } else if !allowed.contains(&n.node) {
                allowed.push(n.node.clone());
            }
        }
    }
    ok
}

/// `rules NAME`: a declared rule set, included at most 8 deep, whose own rules check. An
/// included name that is no rule set adds nothing.
fn included(
    cx: &mut Cx,
    f: FileId,
    inc: &ast::Name,
    depth: usize,
    allowed: &mut Accepted,
) -> Option<(Vec<RuleDraft>, Option<OnFailure>)> {
    let entry = cx.lookup(inc, f, &[Kind::Ruleset])?;
    let Decl::Ruleset(r) = entry.decl else {
        return Some((Vec::new(), None));
    };
    if depth > 8 {
        return None;
    }
    rules(cx, entry.file, &r.body, depth + 1, allowed)
}

/// `on failure POLICY, at most N rounds`: a known policy and a usable number of rounds;
/// `None` when either is not.
fn on_failure_of(cx: &mut Cx, f: FileId, of: &ast::OnFailure) -> Option<OnFailure> {
    let p = policy(cx, f, &of.policy);
    let mut ok = p.is_some();
    if let Some(n) = of
        .max_rounds
        .as_ref()
        .filter(|n| n.node == 0 || n.node > 20)
    {
        cx.error_at(
            Code::BadRule,
            f,
            n.span,
            format!("{} rounds is not a usable limit", n.node),
            "allow between 1 and 20 rounds of revision; 2 is usual",
        );
        ok = false;
    }
    p.map(|p| (p, of.max_rounds.as_ref().map(|n| n.node)))
        .filter(|_| ok)
}

/// One rule, `CLAIMS must REQUIREMENT [or POLICY]`: claims lexrun checks, a requirement
/// that kind of claim allows, and a known policy.
fn rule(cx: &mut Cx, f: FileId, r: &ast::Rule) -> Option<RuleDraft> {
    let word = r.kind.node.as_str();
    let Some(kind) = ClaimKind::from_plural(word) else {
        let d = Diagnostic::new(Code::BadRule, format!("lexrun cannot check `{word}`"))
            .in_file(f)
            .label(r.kind.span, "");
        cx.error(match did_you_mean(word, claim_kind::plurals()) {
            Some(s) => d.help(format!("did you mean `{s}`?")),
            None => d.help(format!(
                "claims lexrun checks: {}",
                claim_kind::PLURALS.join(", ")
            )),
        });
        return None;
    };
    let req = r
        .requirement
        .node
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let must = Must::parse(&req).filter(|m| kind.allows(*m));
    let Some(must) = must else {
        cx.error(
            Diagnostic::new(
                Code::BadRule,
                format!("`{word} must {req}` is not a rule lexrun applies"),
            )
            .in_file(f)
            .label(r.requirement.span, "")
            .help(kind.row().help),
        );
        return None;
    };
    let p = match &r.policy {
        Some(p) => Some(policy(cx, f, p)?),
        None => None,
    };
    Some((
        VerifyRule {
            claims: kind,
            must,
            policy: p.unwrap_or(Policy::Block),
            from: "inline".into(),
        },
        p,
    ))
}

/// Every `verify` block, in file order; the blocks that checked.
pub(crate) fn verify(cx: &mut Cx, steps: &[Step]) -> Vec<Verify> {
    let mut out = Vec::new();
    let decls = cx.verify_decls();
    for (f, v) in decls {
        if let Some(block) = block(cx, f, v, steps, &out) {
            out.push(block);
        }
    }
    out
}

/// Checks one `verify` block: its stage, what it is checked against, its judge and its
/// rules; `None` when any is wrong (reported). `seen` are the blocks before it.
fn block(
    cx: &mut Cx,
    f: FileId,
    v: &ast::VerifyDecl,
    steps: &[Step],
    seen: &[Verify],
) -> Option<Verify> {
    let mut ok = target(cx, f, v, seen);
    ok &= against(cx, f, v, steps);
    let mut accepted = Accepted::default();
    let judge = v.body.judge.as_ref();
    if let Some(j) = judge {
        ok &= cx.lookup(j, f, &[Kind::Model]).is_some();
    }
    let (drafts, fail) = rules(cx, f, &v.body, 0, &mut accepted)?;
    ok &= judge_needed(cx, f, v, &drafts, judge);
    if drafts.is_empty() {
        cx.error_at(
            Code::BadRule,
            f,
            v.span,
            format!("the `verify` block for `{}` checks nothing", v.target.node),
            "add rules such as `citations must appear`, or `rules std.verify.strict`",
        );
        return None;
    }
    let (on_failure, rounds) = fail.unwrap_or((Policy::Block, None));
    let rs: Vec<VerifyRule> = drafts
        .into_iter()
        .map(|(mut r, own)| {
            r.policy = own.unwrap_or(on_failure);
            r
        })
        .collect();
    ok.then(|| Verify {
        stage: v.target.node.clone(),
        against: v.against.iter().map(|a| a.node.clone()).collect(),
        rules: rs,
        on_failure,
        max_rounds: rounds.unwrap_or(2),
        allow_reporters: accepted.reporters,
        ignore_prefixes: accepted.ignored,
        judge: judge.map(|j| j.node.clone()),
    })
}

/// The block verifies a model stage, one no block before it verifies.
fn target(cx: &mut Cx, f: FileId, v: &ast::VerifyDecl, seen: &[Verify]) -> bool {
    let mut ok = true;
    match cx.lookup(&v.target, f, &[Kind::Stage, Kind::Tool]) {
        Some(e) if matches!(e.decl, Decl::Tool(_)) => {
            cx.error_at(
                Code::WrongKind,
                f,
                v.target.span,
                format!(
                    "`{}` is a tool; `verify` checks what a model wrote",
                    v.target.node
                ),
                "verify a model stage; to check a draft file use a `verify-draft` tool",
            );
            ok = false;
        }
        Some(_) => {}
        None => ok = false,
    }
    if seen.iter().any(|x| x.stage == v.target.node) {
        cx.error_at(
            Code::DuplicateName,
            f,
            v.target.span,
            format!("`{}` is verified twice", v.target.node),
            "put all rules for one stage in one `verify` block",
        );
        ok = false;
    }
    ok
}

/// What the block checks against is evidence: sources, or steps that carry them.
fn against(cx: &mut Cx, f: FileId, v: &ast::VerifyDecl, steps: &[Step]) -> bool {
    let mut ok = true;
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
    ok
}

/// A block names a judge exactly when its rules judge propositions.
fn judge_needed(
    cx: &mut Cx,
    f: FileId,
    v: &ast::VerifyDecl,
    drafts: &[RuleDraft],
    judge: Option<&ast::Name>,
) -> bool {
    let judged = drafts
        .iter()
        .find(|(r, _)| r.claims == ClaimKind::Proposition);
    match (judged, judge) {
        (Some((r, _)), None) => {
            cx.error_at(Code::BadRule, f, v.span, format!(
                        "`propositions must hold`{} needs a judge, and the `verify` block for `{}` names none",
                        if r.from == "inline" { String::new() } else { format!(" (from {})", r.from) },
                        v.target.node
                    ), "add `judge MODEL` to the block: the model that reads the cited pages and judges each sentence citing them");
            false
        }
        (None, Some(j)) => {
            cx.error_at(Code::BadRule, f, j.span, format!("the judge `{}` has nothing to judge", j.node), "add `propositions must hold` (or `rules std.verify.filing`), or remove the `judge`");
            false
        }
        _ => true,
    }
}
