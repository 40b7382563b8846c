//! Helpers shared by integration tests and benchmarks.
pub mod browser;
pub mod corpus;
pub mod lsp;
pub mod pdf;
pub mod postgres;
pub mod raw;
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

/// One invocation of the lexrun binary, built like its command line: a fresh store (through
/// `LEXRUN_STORE`, so no test shares a cache or writes one into the repository), a data
/// folder of its own (`XDG_DATA_HOME`, so no test touches the user's), no shared ledger, and
/// no colours, unless the test says otherwise.
#[allow(dead_code)]
pub struct Lexrun {
    command: std::process::Command,
}

#[allow(dead_code)]
impl Lexrun {
    pub fn new() -> Self {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lexrun"));
        let store = fresh_store();
        // The data folder too, so that nothing a test runs can reach the real user's store,
        // and no shared ledger from the environment.
        command
            .env("LEXRUN_STORE", &store)
            .env("XDG_DATA_HOME", store.with_extension("data"))
            .env_remove("LEXRUN_LEDGER")
            .env("NO_COLOR", "1");
        Lexrun { command }
    }

    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn args<S: AsRef<std::ffi::OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.command.args(args);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Runs in `dir`, as a person would from that folder.
    pub fn current_dir(mut self, dir: impl AsRef<std::path::Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    pub fn stdout(mut self, to: std::process::Stdio) -> Self {
        self.command.stdout(to);
        self
    }

    pub fn stderr(mut self, to: std::process::Stdio) -> Self {
        self.command.stderr(to);
        self
    }

    pub fn output(mut self) -> std::process::Output {
        self.command.output().expect("lexrun runs")
    }

    /// Starts lexrun without waiting, for tests that signal or race it.
    pub fn spawn(mut self) -> std::process::Child {
        self.command.spawn().expect("lexrun starts")
    }
}

/// Runs lexrun with `args`, a fresh store and no colours.
#[allow(dead_code)]
pub fn lexrun(args: &[&str]) -> std::process::Output {
    Lexrun::new().args(args).output()
}

/// What a lexrun run printed on standard output.
#[allow(dead_code)]
pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The one run folder under `out`, and its `run.json`.
#[allow(dead_code)]
pub fn run_record(out: &std::path::Path) -> (std::path::PathBuf, lexrun::run::RunRecord) {
    let run = std::fs::read_dir(out)
        .expect("the output folder exists")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .expect("a run folder");
    let rec = lexrun::run::RunRecord::read(&run.join("run.json")).expect("a run record");
    (run, rec)
}

/// Copies the folder `from` into `to`, recursively, so a test can run over a private copy
/// of a sample and never write into the repository.
#[allow(dead_code)]
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// What a lexrun run printed on standard error.
#[allow(dead_code)]
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every paragraph of the document, its tables' rows, its footer and its title, as python-docx
/// reads them.
#[allow(dead_code)]
pub fn read_docx(path: &std::path::Path) -> serde_json::Value {
    let script = r#"
import json, sys, docx
d = docx.Document(sys.argv[1])
print(json.dumps({
    "paragraphs": [p.text for p in d.paragraphs],
    "tables": [[[c.text for c in r.cells] for r in t.rows] for t in d.tables],
    "footer": [p.text for s in d.sections for p in s.footer.paragraphs],
    "title": d.core_properties.title,
}))
"#;
    let o = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3 with python-docx (scripts/install-tools installs python3-docx)");
    assert!(
        o.status.success(),
        "python-docx could not open {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}
