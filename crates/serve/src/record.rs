//! What `up` started: a record per model with the PID, the process's start time and its
//! command line. A process is signalled only while all three still match.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What `up` recorded about a server it started.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub model: String,
    pub pool: String,
    pub url: String,
    pub pid: u32,
    /// The process's start time in clock ticks since boot (`/proc/PID/stat`, field 22).
    pub start_ticks: u64,
    pub program: String,
    pub args: Vec<String>,
    pub log: PathBuf,
}

/// Where `up` keeps what it started.
pub fn servers_dir(store: &Path) -> PathBuf {
    store.join("servers")
}

pub(super) fn proc_start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces; fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

pub(super) fn proc_cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the recorded process is still the one `up` started.
pub fn is_ours(r: &Record) -> bool {
    proc_start_ticks(r.pid) == Some(r.start_ticks)
        && proc_cmdline(r.pid).get(1..) == Some(&r.args[..])
}

pub fn read_record(path: &Path) -> Option<Record> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

pub(super) fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
        .unwrap_or(true)
}
