//! `decide`: a reviewer's decision on a claim the verifier did not support — confirmed by a
//! page, struck, or waived — checked and recorded in the ledger in one statement, and the
//! verification it was made on, which `review` serves too.

use std::path::{Path, PathBuf};

use crate::store::{Decision, DecisionPage, Store, Verdict};
use crate::verify::decisions::{self, Context};
use crate::verify::{Evidence, Status, Verification};

use super::output::exit;

/// What a decision is made on: a verification of a draft in a matter, with the standing
/// decisions applied, and where its sources are.
pub(super) struct Subject {
    pub ctx: Context,
    pub evidence: Evidence,
    pub v: Verification,
    /// The folders a page a reviewer names must be inside.
    pub roots: Vec<PathBuf>,
}

/// The beginning of a refusal because the ledger could not be read.
pub(super) const LEDGER_DOWN: &str = "the ledger cannot be read";

/// Why a decision cannot be made: the message says what to do instead.
#[derive(Debug)]
pub(super) struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A run's verification, by its folder (`out/RUN/verify-STAGE`), a file in it, or the run's
/// folder when it verified one stage.
pub(super) fn context_of(report: &Path) -> Result<(Context, PathBuf), Refusal> {
    let mut dir = if report.is_dir() {
        report.to_path_buf()
    } else {
        report.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    if !dir.join("review.json").is_file() {
        let inner: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("review.json").is_file())
            .collect();
        match inner.as_slice() {
            [one] => dir = one.clone(),
            [] => {
                return Err(Refusal(format!(
                    "`{}` is not a run's verification: give its folder (`out/RUN/verify-STAGE`) or its report",
                    report.display()
                )))
            }
            many => {
                return Err(Refusal(format!(
                    "the run verified {} stages; name one: {}",
                    many.len(),
                    many.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
    }
    let path = dir.join("review.json");
    let ctx: Context = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| {
            Refusal(format!(
                "`{}` cannot be read; run the workflow again to write it",
                path.display()
            ))
        })?;
    Ok((ctx, dir))
}

/// The context of a draft verified from the command line, as `lexrun verify` checks it.
pub(super) fn context_of_draft(
    draft: &Path,
    sources: &[PathBuf],
    prefixes: Vec<String>,
    allow_reporters: &[String],
    matter: Option<&str>,
) -> Result<Context, Refusal> {
    let text = super::draft::read_draft(draft).map_err(|e| Refusal(e.to_string()))?;
    let ev = crate::verify::evidence::load(sources, prefixes.clone())
        .map_err(|e| Refusal(e.to_string()))?;
    let files: Vec<(String, String)> = ev
        .sources
        .iter()
        .filter_map(|s| match s {
            crate::verify::DocSource::File(p) => {
                Some((p.display().to_string(), p.display().to_string()))
            }
            _ => None,
        })
        .collect();
    let on_disk: Vec<(String, PathBuf)> = files
        .iter()
        .map(|(n, d)| (n.clone(), PathBuf::from(d)))
        .collect();
    let names = ledger_names(sources, &on_disk);
    Ok(Context {
        decision_matter: decision_matter(sources, matter),
        matter: matter.map_or_else(|| matter_of(sources), str::to_string),
        matter_dir: String::new(),
        run_id: String::new(),
        stage: String::new(),
        draft: text,
        sources: files,
        prefixes,
        allow_reporters: allow_reporters.to_vec(),
        exactly: false,
        judged: Vec::new(),
        ledger_names: names,
    })
}

/// The matter `lexrun verify` decides in without `--matter`: the folder the sources are in
/// (`matters/smith-v-acme/intake` is the matter `smith-v-acme`).
pub(super) fn matter_of(sources: &[PathBuf]) -> String {
    matter_folder(sources).map_or_else(
        || "matter".into(),
        |f| {
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "matter".into())
        },
    )
}

/// The matter `lexrun verify` keeps decisions under: the one `--matter` names; else the
/// matter's folder (see [`decisions::matter_key`]), so a folder of another of the same name
/// never shares them.
pub(super) fn decision_matter(sources: &[PathBuf], matter: Option<&str>) -> String {
    match matter {
        Some(m) => m.to_string(),
        None => decisions::matter_key(&matter_of(sources), matter_folder(sources).as_deref()),
    }
}

/// Each source file's name relative to the matter's folder, as a run names it: the name
/// decisions record, so that a decision made from the command line holds in a run too.
pub(super) fn ledger_names(
    sources: &[PathBuf],
    files: &[(String, PathBuf)],
) -> Vec<(String, String)> {
    let Some(folder) = matter_folder(sources) else {
        return Vec::new();
    };
    files
        .iter()
        .filter_map(|(name, disk)| {
            let abs = disk.canonicalize().ok()?;
            let rel = abs.strip_prefix(&folder).ok()?;
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            (!rel.is_empty() && rel != *name).then(|| (name.clone(), rel))
        })
        .collect()
}

/// The matter's folder: the one the sources are in, or its parent when it is an `intake`.
fn matter_folder(sources: &[PathBuf]) -> Option<PathBuf> {
    let first = sources.first()?;
    let abs = first.canonicalize().unwrap_or_else(|_| first.clone());
    let folder = if abs.is_dir() {
        abs.clone()
    } else {
        abs.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "matter".into())
    };
    let generic = [
        "intake",
        "sources",
        "evidence",
        "record",
        "documents",
        "exhibits",
    ];
    if generic.contains(&name(&folder).to_lowercase().as_str()) {
        Some(folder.parent().map_or(folder.clone(), Path::to_path_buf))
    } else {
        Some(folder)
    }
}

impl Subject {
    /// Verifies the context's draft against its sources again (no model is asked) and applies
    /// the matter's standing decisions.
    pub(super) fn load(ctx: Context, store: &Store) -> Result<Subject, Refusal> {
        let mut ev = Evidence::new(ctx.prefixes.clone());
        ev.ledger_names = ctx.ledger_names.clone();
        ev.allowed_reporters = crate::verify::Allowed::new(&ctx.allow_reporters);
        let mut roots = Vec::new();
        let mut seen = std::collections::HashMap::new();
        for (name, disk) in &ctx.sources {
            let disk = Path::new(disk);
            if ctx.matter_dir.is_empty() {
                // From the command line: the files given are the matter.
                roots.push(disk.to_path_buf());
            }
            match crate::sources::read_pages(disk) {
                Ok(pages) => {
                    seen.insert(
                        name.clone(),
                        crate::store::shingles::text_hash_pages(&pages),
                    );
                    ev.add_pages(name.clone(), pages);
                }
                Err(e) => {
                    return Err(Refusal(format!(
                        "source `{name}` cannot be read now ({e}); restore it and try again"
                    )))
                }
            }
        }
        if !ctx.matter_dir.is_empty() {
            roots.push(PathBuf::from(&ctx.matter_dir));
        }
        // As `lexrun verify` checks it: support only files that came after a model wrote the
        // claim give does not count.
        let taint = crate::verify::taint::from_ledger(&crate::run::LedgerFacts(store), &ev, &seen);
        let mut v = crate::verify::verify_with(&ctx.draft, &ev, &taint);
        if ctx.exactly {
            crate::verify::hold_quotes_exactly(&mut v.outcomes, &ev);
        }
        // The judge's verdicts, as the run recorded them, in the order the run kept.
        if !ctx.judged.is_empty() {
            v.outcomes
                .extend(ctx.judged.iter().map(decisions::Judged::outcome));
            v.outcomes.sort_by_key(|o| (o.claim.start, o.claim.kind));
        }
        let standing = store
            .standing_decisions(ctx.decisions_key())
            .map_err(|e| Refusal(format!("{LEDGER_DOWN}: {e}; try again when it is back")))?;
        let key = ctx.decisions_key().to_string();
        decisions::apply(&mut v, &ctx.draft, &ev, &key, &standing);
        Ok(Subject {
            ctx,
            evidence: ev,
            v,
            roots,
        })
    }

    /// The flagged claims' ids, for a message.
    pub(super) fn flagged_ids(&self) -> Vec<&str> {
        self.v
            .outcomes
            .iter()
            .zip(&self.v.ids)
            .filter(|(o, _)| o.status != Status::Supported)
            .map(|(_, id)| id.as_str())
            .collect()
    }

    /// The claim `id` and its place among the outcomes, or where it went.
    fn find(&self, id: &str) -> Result<Found, Refusal> {
        if let Some(i) = self.v.ids.iter().position(|x| x == id) {
            return Ok(Found::Outcome(i));
        }
        if let Some(j) = self.v.unchecked_ids.iter().position(|x| x == id) {
            return Ok(Found::Unchecked(j));
        }
        // A waived claim is no longer among the outcomes.
        if self
            .v
            .reviewed
            .iter()
            .any(|r| r.id == id && r.decision.verdict == Verdict::Waived && r.applies())
        {
            return Ok(Found::Waived);
        }
        let flagged = self.flagged_ids();
        let hint = match crate::suggest::did_you_mean(id, flagged.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None if flagged.is_empty() => "no claim of this verification is flagged".into(),
            None => format!("the flagged claims are {}", flagged.join(", ")),
        };
        Err(Refusal(format!(
            "no claim `{id}` in this verification; {hint} (ids are in the report's `id` column)"
        )))
    }

    /// Checks a decision on claim `id` and makes its record; nothing is written.
    pub(super) fn decision(&self, store: &Store, ask: &Ask) -> Result<Decision, Refusal> {
        let i = self.find(&ask.claim)?;
        // The ids apply() gave, waived claims included: numbering them again without the
        // waived ones would give a repeated claim another's id.
        let sentence_of = |id: &str| {
            self.v
                .refs
                .iter()
                .find(|r| r.id == id)
                .cloned()
                .or_else(|| {
                    self.v
                        .reviewed
                        .iter()
                        .find(|r| r.id == id)
                        .map(|r| r.at.clone())
                })
                .ok_or_else(|| Refusal(format!("claim `{id}` has no sentence in the draft")))
        };
        let (claim, sentence) = match i {
            Found::Unchecked(j) => (self.v.unchecked[j].0.clone(), sentence_of(&ask.claim)?),
            Found::Outcome(i) => {
                let o = &self.v.outcomes[i];
                let by_hand = self
                    .v
                    .reviewed
                    .iter()
                    .any(|r| r.id == ask.claim && r.applies());
                if o.status == Status::Supported && !by_hand {
                    return Err(Refusal(format!(
                        "claim `{}` (“{}”) is supported by {}: there is nothing to decide",
                        ask.claim,
                        o.claim.text,
                        o.source.as_ref().map_or("the sources".to_string(), |l| {
                            decisions::page_name(&l.file, l.page, l.bates.as_deref())
                        })
                    )));
                }
                (o.claim.clone(), sentence_of(&ask.claim)?)
            }
            Found::Waived => {
                // A waived claim, decided again: it is back among the claims only after.
                let r = self
                    .v
                    .reviewed
                    .iter()
                    .find(|r| r.id == ask.claim)
                    .ok_or_else(|| Refusal(format!("no claim `{}`", ask.claim)))?;
                (r.claim.clone(), r.at.clone())
            }
        };
        let page = match (ask.verdict, &ask.page) {
            (Verdict::Confirmed, Some(p)) => Some(self.page(store, p, &claim)?),
            (Verdict::Confirmed, None) => {
                return Err(Refusal(
                    "a confirmation names the page that supports the claim: --page FILE:PAGE or --page BATES".into(),
                ))
            }
            (_, Some(_)) => {
                return Err(Refusal(
                    "only a confirmation names a page; leave out --page".into(),
                ))
            }
            (_, None) => None,
        };
        let reason = ask
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty());
        if ask.verdict == Verdict::Waived && reason.is_none() {
            return Err(Refusal(
                "a waiver says why the claim is not a claim: --reason \"a defined term\"".into(),
            ));
        }
        let reviewer = ask.reviewer.trim();
        if reviewer.is_empty() {
            return Err(Refusal(
                "the reviewer has no name: give --reviewer NAME".into(),
            ));
        }
        Ok(Decision {
            seq: 0,
            matter: self.ctx.decisions_key().to_string(),
            claim_id: ask.claim.clone(),
            kind: claim.kind.as_str().into(),
            claim: claim.text.clone(),
            sentence: sentence.sentence,
            sentence_hash: sentence.sentence_hash,
            draft_hash: blake3::hash(self.ctx.draft.as_bytes()).to_hex().to_string(),
            run_id: self.ctx.run_id.clone(),
            stage: self.ctx.stage.clone(),
            verdict: ask.verdict,
            page,
            note: ask
                .note
                .as_deref()
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            reason: reason.map(str::to_string),
            reviewer: reviewer.to_string(),
            created: crate::store::now_ms(),
            superseded_by: None,
        })
    }

    /// The page a reviewer names (`FILE:PAGE`, or a Bates number), checked: a source of this
    /// matter, a page it has, and not a model's output or a file tainted by one.
    fn page(
        &self,
        store: &Store,
        named: &str,
        claim: &crate::verify::Claim,
    ) -> Result<DecisionPage, Refusal> {
        let named = named.trim();
        let (name, page) = match named.rsplit_once(':') {
            Some((f, n)) if n.trim().parse::<u32>().is_ok() => {
                let n: u32 = n.trim().parse().unwrap_or(0);
                (self.source_named(f.trim())?, n)
            }
            _ => self.bates_page(named)?,
        };
        let disk = self
            .ctx
            .sources
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| PathBuf::from(d))
            .unwrap_or_default();
        let texts = self.evidence.page_texts(&[(name.clone(), 1)]);
        let pages = match &texts[0] {
            Some(_) => self.page_count(&name),
            None => 0,
        };
        if page == 0 || page > pages {
            return Err(Refusal(format!(
                "`{name}` has {pages} page{}: page {page} is not one of them",
                if pages == 1 { "" } else { "s" }
            )));
        }
        let text = self.evidence.page_texts(&[(name.clone(), page)])[0]
            .clone()
            .unwrap_or_default();
        guard(store, &self.ctx.matter, &name, &disk, claim)?;
        let bates = bates_on(&text, &self.ctx.prefixes);
        Ok(DecisionPage {
            file: self.evidence.ledger_name(&name),
            page,
            bates,
            hash: decisions::page_hash(&text),
        })
    }

    fn page_count(&self, name: &str) -> u32 {
        let mut n = 0;
        self.evidence.find_page(|f, p, _| {
            if f == name {
                n = n.max(p);
            }
            None::<()>
        });
        n
    }

    /// The source a reviewer names: as the report names it, by a path to it, or by its file
    /// name when only one source has it.
    pub(super) fn source_named(&self, f: &str) -> Result<String, Refusal> {
        if let Some((n, _)) = self.ctx.sources.iter().find(|(n, _)| n == f) {
            return Ok(n.clone());
        }
        let abs = Path::new(f).canonicalize().ok();
        if let Some(abs) = &abs {
            if let Some((n, _)) = self
                .ctx
                .sources
                .iter()
                .find(|(_, d)| Path::new(d).canonicalize().ok().as_ref() == Some(abs))
            {
                return Ok(n.clone());
            }
            let inside = self
                .roots
                .iter()
                .filter_map(|r| r.canonicalize().ok())
                .any(|r| abs.starts_with(&r));
            if !inside {
                return Err(Refusal(format!(
                    "`{f}` is outside matter `{}`: a decision names a page of the matter's own sources",
                    self.ctx.matter
                )));
            }
            // A file of the matter that is not among the sources verified: never another
            // source that happens to share its name.
            return Err(Refusal(format!(
                "`{f}` is in matter `{}` but is not one of the sources verified; its sources are {}",
                self.ctx.matter,
                self.ctx
                    .sources
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let by_name: Vec<&String> = self
            .ctx
            .sources
            .iter()
            .filter(|(n, _)| Path::new(n).file_name() == Path::new(f).file_name() || n.ends_with(f))
            .map(|(n, _)| n)
            .collect();
        match by_name.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(Refusal(format!(
                "`{f}` is not a source of matter `{}`; its sources are {}",
                self.ctx.matter,
                self.ctx
                    .sources
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            many => Err(Refusal(format!(
                "`{f}` could be any of {}; give the path as the report names it",
                many.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// The page stamped with a Bates number.
    fn bates_page(&self, bates: &str) -> Result<(String, u32), Refusal> {
        let want: String = bates.split_whitespace().collect();
        // A Bates number is letters and digits; a path or a file name without a page is not.
        if want.is_empty()
            || !want.chars().any(|c| c.is_ascii_digit())
            || want.contains(['/', '.', '\\'])
        {
            return Err(Refusal(format!(
                "`{bates}` names no page: give FILE:PAGE (`lease.pdf:3`) or a Bates number (`SMITH000003`)"
            )));
        }
        let prefixes = &self.ctx.prefixes;
        // The page whose stamp is exactly this number; never a page whose text merely ends in it.
        let mut found: Vec<(String, u32)> = Vec::new();
        self.evidence.find_page(|f, p, t| {
            if bates_on(t, prefixes).is_some_and(|b| b.eq_ignore_ascii_case(&want)) {
                found.push((f.to_string(), p));
            }
            None::<()>
        });
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(Refusal(format!(
                "no page of matter `{}`'s sources is stamped {bates}; give the full Bates number (`SMITH000003`) or FILE:PAGE (`lease.pdf:3`)",
                self.ctx.matter
            ))),
            _ => Err(Refusal(format!(
                "{bates} is stamped on more than one page ({}); name the page as FILE:PAGE",
                found
                    .iter()
                    .map(|(f, p)| format!("{f} p. {p}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// The Bates number stamped at the foot of a page, if any.
fn bates_on(text: &str, prefixes: &[String]) -> Option<String> {
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let squashed: String = last.split_whitespace().collect();
    let digits = squashed
        .bytes()
        .rev()
        .take_while(u8::is_ascii_digit)
        .count();
    let prefix = &squashed[..squashed.len() - digits];
    let ok = digits >= 4
        && !prefix.is_empty()
        && prefix.len() <= 12
        && prefix
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '-' || c == '_')
        && (prefixes.is_empty() || prefixes.iter().any(|p| p == prefix));
    ok.then_some(squashed)
}

/// The intake guard's rules for a page a reviewer names: not lexrun's own output or a copy
/// of one, no provenance marker, and not a file that entered the matter only after a model
/// wrote the claim (unless the workflow admitted it).
fn guard(
    store: &Store,
    matter: &str,
    name: &str,
    disk: &Path,
    claim: &crate::verify::Claim,
) -> Result<(), Refusal> {
    let unreadable = |e: String| {
        Refusal(format!(
            "`{name}` cannot be read now ({e}); restore it and try again"
        ))
    };
    let bytes = std::fs::read(disk).map_err(|e| unreadable(e.to_string()))?;
    let pages = crate::sources::read_pages(disk).map_err(|e| unreadable(e.to_string()))?;
    // The pages checked are of the bytes hashed: a file that changed while it was read is
    // checked again by the reviewer's next try.
    let again = std::fs::read(disk).map_err(|e| unreadable(e.to_string()))?;
    if blake3::hash(&again) != blake3::hash(&bytes) {
        return Err(unreadable("it changed while it was being checked".into()));
    }
    let text = pages.join("\u{c}");
    let th = crate::store::shingles::text_hash_pages(&pages);
    let raw = blake3::hash(&bytes).to_hex().to_string();
    let refuse = |why: String| {
        Err(Refusal(format!(
            "`{name}` cannot support a claim: {why}; name a page of the client's own evidence"
        )))
    };
    match store.artifact_by_hash(&raw, &[th.as_str()]) {
        Ok(Some(a)) => {
            return refuse(format!(
                "it is lexrun's own output of stage `{}` (run {})",
                a.stage, a.run_id
            ))
        }
        Ok(None) => {}
        Err(e) => {
            return Err(Refusal(format!(
                "{LEDGER_DOWN}: {e}; try again when it is back"
            )))
        }
    }
    if crate::run::intake::has_marker(&bytes) {
        return refuse("it carries lexrun's provenance marker: lexrun wrote it".into());
    }
    let fps = crate::store::shingles::fingerprints(&text);
    let n = fps.len();
    let rank = |shared: usize, total: usize| {
        crate::run::intake::refuses(shared, n, total).then_some(shared as f64 / total.max(1) as f64)
    };
    if let Ok(Some(o)) = store.overlap(&fps, rank) {
        return refuse(format!(
            "its text is a copy of lexrun's output of stage `{}` (run {})",
            o.artifact.stage, o.artifact.run_id
        ));
    }
    if store.admitted_text(&th).is_some() {
        return Ok(());
    }
    let identity = claim.identity();
    let written = store
        .model_claims(Some(matter))
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.ident == identity);
    if let Some(c) = written {
        let seen = store.first_seen(Some(matter), &th);
        if seen.is_none_or(|t| t > c.created) {
            return refuse(format!(
                "it entered matter `{matter}` after lexrun generated this claim in run {}, stage {}",
                c.run_id, c.stage
            ));
        }
    }
    Ok(())
}

/// Where a claim id is in a verification.
enum Found {
    Outcome(usize),
    /// A record cite not checked.
    Unchecked(usize),
    /// A claim a standing decision waived.
    Waived,
}

/// A decision as asked for.
pub(super) struct Ask {
    pub claim: String,
    pub verdict: Verdict,
    pub page: Option<String>,
    pub note: Option<String>,
    pub reason: Option<String>,
    pub reviewer: String,
}

/// The OS user, the reviewer when none is named.
pub(super) fn os_user() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Ok(u) = std::env::var(var) {
            if !u.trim().is_empty() {
                return u;
            }
        }
    }
    // SAFETY: getpwuid returns a pointer into static storage or null; read at once.
    unsafe {
        let pw = libc::getpwuid(libc::getuid());
        if !pw.is_null() && !(*pw).pw_name.is_null() {
            return std::ffi::CStr::from_ptr((*pw).pw_name)
                .to_string_lossy()
                .into_owned();
        }
    }
    "unknown".into()
}

/// The arguments of `lexrun decide`.
pub(super) struct DecideArgs<'a> {
    pub ask: Ask,
    pub report: Option<&'a Path>,
    pub draft: Option<&'a Path>,
    pub sources: &'a [PathBuf],
    pub prefixes: Vec<String>,
    pub allow_reporters: &'a [String],
    pub matter: Option<&'a str>,
    pub store: Option<&'a Path>,
}

pub(super) fn cmd_decide(a: DecideArgs) -> u8 {
    let ctx = match (a.report, a.draft) {
        (Some(r), _) => context_of(r).map(|(c, _)| c),
        (None, Some(d)) if !a.sources.is_empty() => {
            context_of_draft(d, a.sources, a.prefixes, a.allow_reporters, a.matter)
        }
        _ => Err(Refusal(
            "name what the claim is in: --report out/RUN/verify-STAGE, or --draft FILE --sources PATH as for `lexrun verify`".into(),
        )),
    };
    let ctx = match ctx {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let store = match super::open::open_at(a.store, Path::new("."), super::open::ledger_url(None)) {
        Ok(s) => s,
        Err(e) => return super::failure::fail(&e),
    };
    let subject = match Subject::load(ctx, &store) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let d = match subject.decision(&store, &a.ask) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    if let Err(e) = store.add_decision(&d) {
        eprintln!("error: the decision was not recorded: {e}");
        return exit::USAGE;
    }
    println!("{}", describe(&d));
    exit::OK
}

/// One line on a recorded decision.
pub(super) fn describe(d: &Decision) -> String {
    let what = match (d.verdict, &d.page, &d.reason) {
        (Verdict::Confirmed, Some(p), _) => format!(
            "confirmed by {}",
            decisions::page_name(&p.file, p.page, p.bates.as_deref())
        ),
        (Verdict::Waived, _, Some(r)) => format!("waived ({r})"),
        (v, _, _) => v.as_str().to_string(),
    };
    format!(
        "{} “{}” {what}, by {}, in matter {}; it applies at the next verification while its sentence{} unchanged",
        d.claim_id,
        d.claim,
        decisions::by(d),
        d.matter,
        if d.page.is_some() { " and the page stay" } else { " stays" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(dir: &Path, files: &[(&str, &str)]) -> Subject {
        let matter = dir.join("smith");
        let mut sources = Vec::new();
        for (name, text) in files {
            let disk = matter.join(name);
            std::fs::create_dir_all(disk.parent().unwrap()).unwrap();
            std::fs::write(&disk, text).unwrap();
            sources.push((name.to_string(), disk.display().to_string()));
        }
        let ctx = Context {
            matter: "smith".into(),
            matter_dir: matter.display().to_string(),
            draft: "Paid on March 3, 2023.".into(),
            sources,
            ..Context::default()
        };
        let store = Store::open(&dir.join("store")).unwrap();
        Subject::load(ctx, &store).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn decisions_name_a_matter_file_that_is_no_source_or_an_inexact_bates_number_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = subject(
            dir.path(),
            &[
                (
                    "intake/lease.txt",
                    "Rent.\n\nSMITH000013\u{c}More.\n\nSMITH000014\n",
                ),
                ("intake/copy.txt", "A copy.\n\nSMITH000014\n"),
            ],
        );
        // A file of the matter that was not verified is not the source that shares its name.
        let stray = dir.path().join("smith/notes/lease.txt");
        std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
        std::fs::write(&stray, "Something else.\n").unwrap();
        let err = s.source_named(&stray.display().to_string()).unwrap_err();
        assert!(err.0.contains("not one of the sources verified"), "{err}");
        assert_eq!(s.source_named("lease.txt").unwrap(), "intake/lease.txt");
        // A Bates number names the page stamped with exactly it.
        assert_eq!(
            s.bates_page("SMITH000013").unwrap(),
            ("intake/lease.txt".to_string(), 1)
        );
        let err = s.bates_page("3").unwrap_err();
        assert!(err.0.contains("no page"), "{err}");
        let err = s.bates_page("SMITH000014").unwrap_err();
        assert!(err.0.contains("more than one page"), "{err}");
    }

    #[test]
    fn decisions_refuse_a_page_whose_file_cannot_be_read() {
        let dir = tempfile::tempdir().unwrap();
        let s = subject(
            dir.path(),
            &[("intake/lease.txt", "Rent.\n\nSMITH000001\n")],
        );
        let store = Store::open(&dir.path().join("store")).unwrap();
        let claims = crate::verify::claims(&s.ctx.draft, &[]);
        let gone = dir.path().join("smith/intake/gone.txt");
        let err = guard(&store, "smith", "intake/gone.txt", &gone, &claims[0]).unwrap_err();
        assert!(err.0.contains("cannot be read now"), "{err}");
        let here = dir.path().join("smith/intake/lease.txt");
        assert!(guard(&store, "smith", "intake/lease.txt", &here, &claims[0]).is_ok());
    }
}
