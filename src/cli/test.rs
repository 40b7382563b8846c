//! `test`: `.test.lex` suites, replayed from their cassettes.

use super::output::{exit, runtime};
use std::io::IsTerminal;

/// `accept` stores every differing snapshot of a run whose steps all ran; `accept_failures`
/// also one in which a step failed (a test of that failure). A run that missed its cassette
/// is never stored.
pub(super) fn cmd_test(
    paths: &[std::path::PathBuf],
    accept: bool,
    accept_failures: bool,
    review: bool,
) -> u8 {
    use crate::testing;
    let roots = if paths.is_empty() {
        vec![std::path::PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    for p in &roots {
        if !p.exists() {
            eprintln!("error: `{}` does not exist", p.display());
            return exit::USAGE;
        }
    }
    let files = testing::discover(&roots);
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut tests = Vec::new();
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", f.display());
                failed += 1;
                continue;
            }
        };
        match testing::parse(f, &text) {
            Ok(t) => tests.extend(t),
            Err(errors) => {
                eprint!("{}", testing::render_errors(f, &text, &errors));
                failed += 1;
            }
        }
    }
    if tests.is_empty() && failed == 0 {
        eprintln!(
            "no tests: no `*.test.lex` files under {}",
            roots
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return exit::USAGE;
    }
    let rt = match runtime(None) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let outcomes = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (i, t) in tests.into_iter().enumerate() {
            set.spawn(async move { (i, testing::run_test(t).await) });
        }
        let mut all = Vec::new();
        while let Some(r) = set.join_next().await {
            if let Ok(x) = r {
                all.push(x);
            }
        }
        all.sort_by_key(|x| x.0);
        all.into_iter().map(|x| x.1).collect::<Vec<_>>()
    });
    let tty = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    for o in outcomes {
        let label = format!("{} :: {}", o.test.file.display(), o.test.name);
        let mut ok = o.failures.is_empty();
        for f in &o.failures {
            eprintln!("FAIL {label}: {f}");
        }
        if let Some((path, stored, new)) = &o.snapshot {
            let shown = match stored {
                Some(old) => testing::diff(old, new),
                None => format!("new snapshot:\n{new}"),
            };
            // A run that missed its cassette is never stored; one in which a step failed
            // only when the test is about that failure.
            let refused = if !o.misses.is_empty() {
                Some("its cassette does not hold what the workflow asks (see above): record the cassette again, then run the test".to_string())
            } else if !o.failed_steps.is_empty() && !accept_failures {
                Some(format!(
                    "in this run {}; fix the workflow or record the cassette again (a test written to show that failure stores it with `lexrun test --accept-failures`)",
                    o.failed_steps.join(", ")
                ))
            } else {
                None
            };
            let take = if refused.is_some() {
                false
            } else if accept || accept_failures {
                true
            } else if review && tty {
                eprintln!("---- {label}: snapshot {}\n{shown}", path.display());
                eprint!("accept this snapshot? [y/N] ");
                let mut answer = String::new();
                let _ = std::io::stdin().read_line(&mut answer);
                answer.trim().eq_ignore_ascii_case("y")
            } else {
                false
            };
            if take {
                if let Err(e) = testing::write_snapshot(path, &o.test, new) {
                    eprintln!("FAIL {label}: cannot write `{}`: {e}", path.display());
                    ok = false;
                } else {
                    eprintln!("     {label}: snapshot stored in {}", path.display());
                }
            } else if let Some(why) = refused {
                let _ = std::fs::remove_file(path.with_extension("snap.new"));
                eprintln!(
                    "FAIL {label}: the run differs from its snapshot {}, and is not stored: {why}\n{shown}",
                    path.display(),
                );
                ok = false;
            } else {
                if let Some(problem) = &o.unreadable {
                    eprintln!("FAIL {label}: {problem}");
                }
                let pending = path.with_extension("snap.new");
                let _ = testing::write_snapshot(&pending, &o.test, new);
                eprintln!(
                    "FAIL {label}: the run differs from its snapshot {} (new one in {}; `lexrun test --accept` stores it once you have read it)\n{shown}",
                    path.display(),
                    pending.display()
                );
                ok = false;
            }
        }
        if ok {
            // A pending snapshot from an earlier failing run is stale now.
            let _ =
                std::fs::remove_file(testing::snapshot_path(&o.test).with_extension("snap.new"));
            eprintln!("ok   {label}");
            passed += 1;
        } else {
            failed += 1;
        }
    }
    eprintln!("{passed} passed, {failed} failed");
    if failed > 0 {
        exit::ERRORS
    } else {
        exit::OK
    }
}
