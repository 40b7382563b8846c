//! `verify`: a draft checked against sources from the command line.

use super::draft::read_draft;
use super::open::{ledger_url, store_dir};
use super::output::{exit, print_out};

use std::collections::HashMap;

// The allocator `release_freed_memory_soon` configures, linked into every binary.
use mimalloc as _;

/// A draft verified against its sources: what `lexrun verify` and the MCP `verify` tool
/// report.
pub(super) struct Verified {
    pub(super) draft: String,
    pub(super) evidence: crate::verify::evidence::Evidence,
    pub(super) v: crate::verify::Verification,
    /// The matter whose standing decisions were applied.
    pub(super) matter: String,
}

/// Why a draft could not be verified: the message (each line as printed after `error: `)
/// and the exit code.
pub(super) struct NotVerified {
    pub(super) message: String,
    pub(super) code: u8,
}

impl NotVerified {
    fn from(e: &dyn super::failure::Failure) -> NotVerified {
        tracing::debug!(error = ?e, "command failed");
        NotVerified {
            message: e.to_string(),
            code: e.exit_code(),
        }
    }
}

pub(super) fn cmd_verify(
    sources: &[std::path::PathBuf],
    (prefixes, ignored): (Vec<String>, Vec<String>),
    allow_reporters: &[String],
    json: bool,
    html: bool,
    matter: Option<&str>,
    draft_path: &std::path::Path,
) -> u8 {
    let Verified {
        draft,
        evidence,
        v,
        matter,
    } = match verify_draft(
        sources,
        (prefixes, ignored),
        allow_reporters,
        matter,
        draft_path,
    ) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {}", e.message);
            return e.code;
        }
    };
    let name = draft_path.display().to_string();
    let out = if json {
        crate::verify::report::json(&v) + "\n"
    } else if html {
        crate::review::page(&crate::review::Review {
            title: &name,
            draft: &draft,
            outcomes: &v.outcomes,
            files: &v.files,
            evidence: &evidence,
            provenance: vec![
                ("command".into(), "lexrun verify".into()),
                ("matter".into(), matter.clone()),
                ("draft".into(), name.clone()),
                (
                    "draft blake3".into(),
                    blake3::hash(draft.as_bytes()).to_hex().to_string(),
                ),
                (
                    "sources".into(),
                    sources
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            ],
            images: true,
            ids: &v.ids,
        })
    } else {
        crate::verify::report::markdown(&name, &draft, &v)
    };
    if print_out(&out) != exit::OK {
        return exit::USAGE;
    }
    verdict_code(&v)
}

/// Reads the draft and the evidence, and checks every claim of the draft against it (with
/// the ledger's taint when there is a ledger).
pub(super) fn verify_draft(
    sources: &[std::path::PathBuf],
    (prefixes, ignored): (Vec<String>, Vec<String>),
    allow_reporters: &[String],
    matter: Option<&str>,
    draft_path: &std::path::Path,
) -> Result<Verified, NotVerified> {
    // The evidence pass allocates and frees a file's pages at a time; transparent huge pages
    // would keep each thread's freed memory resident in 2 MiB blocks.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_THP_DISABLE only changes this process's page policy.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    release_freed_memory_soon();
    let draft = read_draft(draft_path).map_err(|e| NotVerified::from(&e))?;
    let evidence = match crate::verify::evidence::load(sources, prefixes) {
        Ok(mut ev) => {
            ev.allowed_reporters = crate::verify::Allowed::new(allow_reporters);
            ev.ignored_prefixes = ignored;
            ev
        }
        Err(e) => return Err(NotVerified::from(&e)),
    };
    if evidence.sources.is_empty() {
        return Err(NotVerified {
            message: "the sources hold no files; check the paths given to --sources".into(),
            code: exit::USAGE,
        });
    }
    // With a ledger, each file's text is fingerprinted as the evidence pass reads it, and the
    // ledger is asked about the files once they are read: no file is read twice.
    let ledger = ledger_at();
    let seen: std::sync::Arc<std::sync::Mutex<HashMap<String, String>>> = Default::default();
    let mut evidence = evidence;
    if ledger.is_some() {
        let seen = seen.clone();
        evidence.observer = crate::verify::evidence::Observer::new(move |path, pages| {
            let th = crate::store::shingles::text_hash_pages(pages);
            if let Ok(mut m) = seen.lock() {
                m.insert(path.to_string(), th);
            }
        });
    }
    // The reviewers' standing decisions on this matter's claims, read with the taint.
    let mut standing = Vec::new();
    let shown = matter.map_or_else(|| super::decide::matter_of(sources), str::to_string);
    let matter = super::decide::decision_matter(sources, matter);
    let mut v = match crate::verify::verify_then(&draft, &evidence, || match &ledger {
        Some((dir, url)) => {
            let seen = seen.lock().map(|m| m.clone()).unwrap_or_default();
            crate::store::Store::open_with(dir, url.as_deref()).and_then(|store| {
                standing = store.standing_decisions(&matter)?;
                Ok(crate::verify::taint::from_ledger(
                    &crate::run::LedgerFacts(&store),
                    &evidence,
                    &seen,
                ))
            })
        }
        None => Ok(Default::default()),
    }) {
        Ok(v) => v,
        Err(e) => return Err(NotVerified::from(&e)),
    };
    // Decisions name pages as a run does, relative to the matter's folder.
    let files: Vec<(String, std::path::PathBuf)> = evidence
        .sources
        .iter()
        .filter_map(|s| match s {
            crate::verify::DocSource::File(p) => Some((p.display().to_string(), p.clone())),
            _ => None,
        })
        .collect();
    evidence.ledger_names = super::decide::ledger_names(sources, &files);
    crate::verify::decisions::apply(&mut v, &draft, &evidence, &matter, &standing);
    if v.files.iter().all(|f| f.problem.is_some()) {
        let mut message = "none of the sources could be read:".to_string();
        for f in &v.files {
            message.push_str(&format!(
                "\n  {}: {}",
                f.path,
                f.problem.as_deref().unwrap_or("")
            ));
        }
        return Err(NotVerified {
            message,
            code: exit::USAGE,
        });
    }
    Ok(Verified {
        draft,
        evidence,
        v,
        matter: shown,
    })
}

/// 0 when every source was read and every claim is supported, else 1.
pub(super) fn verdict_code(v: &crate::verify::Verification) -> u8 {
    let all_read = v.files.iter().all(|f| f.problem.is_none());
    if all_read
        && v.outcomes
            .iter()
            .all(|o| o.status == crate::verify::Status::Supported)
    {
        exit::OK
    } else {
        exit::ERRORS
    }
}

/// mimalloc's `purge_delay` option: its place in `mi_option_t`, the same in mimalloc 2 and 3
/// (the Rust bindings do not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory waits before it is returned to the system (ms): a few files' time.
const PURGE_DELAY_MS: std::ffi::c_long = 3;

/// The evidence pass frees each file's text once it is scanned. mimalloc keeps freed pages
/// resident for a second before giving them back, which on 10,000 pages of evidence held about
/// 9 MB more than needed (`cargo bench --bench verify`: peak memory 1.69 → 1.18 × the evidence
/// text, in the same time); returned within a few milliseconds, the memory `verify` holds
/// stays near a few files per thread. The one place lexrun sets it, for `lexrun verify` and
/// the MCP `verify` tool alike.
fn release_freed_memory_soon() {
    // SAFETY: setting an option of the allocator linked in (its `mi_option_set` may be called
    // at any time, from any thread); the option only decides when freed memory is returned.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
}

/// The ledger to consult, if there is one: its store folder and shared URL. A ledger is never
/// created here.
fn ledger_at() -> Option<(std::path::PathBuf, Option<String>)> {
    let dir = store_dir(None, std::path::Path::new("."));
    let url = ledger_url(None);
    (url.is_some() || dir.join("ledger.sqlite").is_file()).then_some((dir, url))
}
