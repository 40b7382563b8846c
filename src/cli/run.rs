//! `run`: a workflow against its servers (or a cassette), with the store.

use std::io::IsTerminal;

use super::args::RunArgs;
use super::compile::checked_plan;
use super::failure::fail;
use super::open::{ledger_file, ledger_url, open_at, store_dir};
use super::output::{exit, runtime};

pub(super) fn cmd_run(args: &RunArgs, color: bool) -> u8 {
    let plan = match checked_plan(&args.file, color, "not run") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let dir = args
        .file
        .parent()
        .map(|d| d.as_std_path().to_path_buf())
        .unwrap_or_default();
    let Some(endpoints) = parse_endpoints(&args.endpoint) else {
        return exit::USAGE;
    };
    // The store is opened once before the run: an old store beside the workflow is adopted,
    // and a shared ledger that cannot be reached stops the run before any model call.
    if let Err(e) = open_at(args.store.as_deref(), &dir, ledger_url(Some(&plan))) {
        return fail(&e);
    }
    let opts = run_options(args, &plan, &dir, endpoints);
    for r in &opts.refresh {
        if !plan.steps.iter().any(|s| &s.name == r) {
            eprintln!("error: --refresh {r}: the workflow has no stage `{r}`");
            return exit::USAGE;
        }
    }
    // One worker is plenty for a handful of streams; CPU work runs on blocking threads.
    let rt = match runtime(Some(1)) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    match rt.block_on(crate::run::run(&plan, &dir, &opts)) {
        Ok(rec) => {
            let code = rec.exit_code();
            report_run(args, &opts, &rec, code);
            code
        }
        Err(e) => fail(&e),
    }
}

/// The run's options from the command line: how events are shown, the limits, a cassette,
/// the store and the ledger.
pub(super) fn run_options(
    args: &RunArgs,
    plan: &crate::plan::Plan,
    dir: &std::path::Path,
    endpoints: crate::backend::endpoint::Overrides,
) -> crate::run::Options {
    use crate::backend::Limits;
    use crate::run::{events::Mode, Options};
    let events = if args.json {
        Mode::Json
    } else if std::io::stderr().is_terminal() {
        Mode::Live
    } else {
        Mode::Plain
    };
    Options {
        matters: args.matter.clone(),
        out: args.out.clone().unwrap_or_else(|| dir.join("out")),
        endpoints,
        limits: Limits {
            retries: args.retries,
            idle: std::time::Duration::from_secs(args.idle_timeout.max(1)),
            load: std::time::Duration::from_secs(args.load_timeout),
            backoff: std::time::Duration::from_millis(args.backoff_ms),
            ..Limits::default()
        },
        events,
        cassette: args
            .record
            .clone()
            .map(|p| (p, crate::backend::cassette::Mode::Record))
            .or_else(|| {
                args.replay
                    .clone()
                    .map(|p| (p, crate::backend::cassette::Mode::Replay))
            })
            .or_else(|| {
                args.replay_or_record
                    .clone()
                    .map(|p| (p, crate::backend::cassette::Mode::ReplayOrRecord))
            }),
        store: Some(store_dir(args.store.as_deref(), dir)),
        ledger: ledger_url(Some(plan)),
        cache: !args.no_cache,
        refresh: args.refresh.clone(),
        offline: args.offline,
        workflow_file: ledger_file(&args.file),
        watch: None,
    }
}
/// After a run: the older run folders pruned (all but the last `--keep-runs`), then, unless
/// the output is JSON, why it stopped, what is missing or failed, and a one-line summary.
fn report_run(args: &RunArgs, opts: &crate::run::Options, rec: &crate::run::RunRecord, code: u8) {
    let pruned = crate::run::prune_runs(&opts.out, &rec.workflow, args.keep_runs.max(1));
    if !pruned.is_empty() && !args.json {
        eprintln!(
            "removed {} older run folder{} of {} (keeping the last {}; --keep-runs N): {}",
            pruned.len(),
            if pruned.len() == 1 { "" } else { "s" },
            rec.workflow,
            args.keep_runs.max(1),
            pruned
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if args.json {
        return;
    }
    for m in &rec.matters {
        if let Some(by) = &m.stopped_by {
            eprintln!("stopped: {by}");
        }
        for o in m.outputs.iter().filter(|o| o.missing) {
            eprintln!("error: output `{}` {}", o.path, o.status);
        }
        // A gate's stop is said once, above, as a stop: neither the gate nor the steps it
        // stopped failed.
        for s in m.incomplete_steps() {
            eprintln!(
                "incomplete: step `{}` (round {}): {}",
                s.name,
                s.round,
                s.why.as_deref().unwrap_or("")
            );
        }
        for s in m.steps.iter().filter(|s| {
            s.why.is_some()
                && !matches!(
                    s.status,
                    Some(
                        crate::run::Status::Skipped
                            | crate::run::Status::Stopped
                            | crate::run::Status::Incomplete
                    )
                )
        }) {
            eprintln!(
                "error: step `{}` {}: {}",
                s.name,
                match s.status {
                    Some(crate::run::Status::Blocked) => "blocked",
                    _ => "failed",
                },
                s.why.as_deref().unwrap_or("")
            );
        }
    }
    eprintln!(
        "run {} of {}: {}; record in {}",
        rec.run_id,
        rec.workflow,
        match code {
            0 => "every output written",
            3 => "stopped by a gate",
            crate::run::INCOMPLETE_EXIT =>
                "an answer is incomplete: what was made of it was written only as marked drafts",
            130 => "interrupted; finished steps kept",
            _ => "not every step succeeded",
        },
        opts.out.join(&rec.run_id).join("run.json").display()
    );
}

pub(super) fn parse_endpoints(list: &[String]) -> Option<crate::backend::endpoint::Overrides> {
    let mut endpoints = crate::backend::endpoint::Overrides::new();
    for e in list {
        match crate::backend::endpoint::parse_override(e) {
            Ok((pool, o)) => {
                endpoints.insert(pool, o);
            }
            Err(why) => {
                eprintln!("error: {why}");
                return None;
            }
        }
    }
    Some(endpoints)
}
