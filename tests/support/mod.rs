//! Helpers shared by integration tests and benchmarks.
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
