//! What the benchmarks against PyMuPDF share: timing a whole command, the median of runs, and
//! the PyMuPDF side of the comparison with its ratio.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a command to completion and returns its wall time; a failure stops the bench with the
/// command's error output.
pub fn time(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let out = cmd.stdout(Stdio::null()).output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed()
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs `benches/SCRIPT` with `args` `runs` times when PyMuPDF is installed, and prints its
/// median and lexrun's time as a ratio to it (`what` names lexrun's side).
pub fn compare(what: &str, lex: Duration, runs: usize, script: &str, args: &[&std::ffi::OsStr]) {
    let has_fitz = Command::new("python3")
        .args(["-c", "import fitz"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_fitz {
        println!("PyMuPDF is not installed: `pip install pymupdf` for the comparison");
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches")
        .join(script);
    let py = median(
        (0..runs)
            .map(|_| time(Command::new("python3").arg(&script).args(args)))
            .collect(),
    );
    println!(
        "PyMuPDF script (median of {runs}): {:.1} ms",
        py.as_secs_f64() * 1e3
    );
    println!(
        "ratio: {what} = {:.2} × PyMuPDF (target ≤ 1.00)",
        lex.as_secs_f64() / py.as_secs_f64()
    );
}
