//! Helpers shared by integration tests and benchmarks.
pub mod browser;
pub mod corpus;
pub mod pdf;
pub mod servers;

/// A new, empty store folder for one lexrun invocation, so tests never share a cache.
#[allow(dead_code)]
pub fn fresh_store() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "lexrun-test-store-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs lexrun with `args`, a fresh store and no colours.
#[allow(dead_code)]
pub fn lexrun(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lexrun"))
        .env("LEXRUN_STORE", fresh_store())
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("lexrun runs")
}

/// What a lexrun run printed on standard error.
#[allow(dead_code)]
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
