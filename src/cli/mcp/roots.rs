//! Where a tool's paths may lead: the client's roots, or the folder the server started in.

use std::path::{Path, PathBuf};

use rmcp::{Peer, RoleServer};

use super::super::output::exit;
use super::{Lexrun, Refusal, MAX_PATH};

impl Lexrun {
    /// The folders paths must stay in: the client's roots when it declares the capability
    /// and lists some, else the folder the server started in.
    #[allow(deprecated)]
    pub(super) async fn roots(&self, peer: &Peer<RoleServer>) -> Vec<PathBuf> {
        let declared = peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if !declared {
            return vec![self.start.clone()];
        }
        if let Some(r) = self.roots.lock().ok().and_then(|r| r.clone()) {
            return r;
        }
        let listed = tokio::time::timeout(std::time::Duration::from_secs(10), peer.list_roots());
        let roots: Vec<PathBuf> = match listed.await {
            Ok(Ok(list)) => list
                .roots
                .iter()
                .filter_map(|r| url::Url::parse(&r.uri).ok())
                .filter(|u| u.scheme() == "file")
                .filter_map(|u| u.to_file_path().ok())
                .filter_map(|p| p.canonicalize().ok())
                .collect(),
            _ => Vec::new(),
        };
        let roots = if roots.is_empty() {
            vec![self.start.clone()]
        } else {
            roots
        };
        if let Ok(mut r) = self.roots.lock() {
            *r = Some(roots.clone());
        }
        roots
    }

    /// A path argument that must exist, resolved (links followed) and inside the roots.
    pub(super) fn input(
        &self,
        roots: &[PathBuf],
        arg: &str,
        given: &str,
    ) -> Result<PathBuf, Refusal> {
        let path = self.absolute(arg, given)?;
        let real = path.canonicalize().map_err(|e| {
            Refusal::new(
                "not_found",
                format!("{arg}: cannot read `{given}`: {e}"),
                exit::USAGE,
            )
        })?;
        inside(roots, arg, given, &real)?;
        Ok(path)
    }

    pub(super) fn inputs(
        &self,
        roots: &[PathBuf],
        arg: &str,
        given: &[String],
    ) -> Result<Vec<PathBuf>, Refusal> {
        given.iter().map(|g| self.input(roots, arg, g)).collect()
    }

    /// A path argument that may not exist yet (a folder to write): its nearest existing
    /// folder resolved, the rest plain names, inside the roots.
    pub(super) fn output(
        &self,
        roots: &[PathBuf],
        arg: &str,
        given: &str,
    ) -> Result<PathBuf, Refusal> {
        let path = self.absolute(arg, given)?;
        let mut existing = path.as_path();
        let mut rest = Vec::new();
        while !existing.exists() {
            match (existing.parent(), existing.file_name()) {
                (Some(p), Some(n)) => {
                    rest.push(n.to_os_string());
                    existing = p;
                }
                _ => break,
            }
        }
        if !crate::confine::lexically_inside(&rest.iter().rev().collect::<PathBuf>()) {
            return Err(outside(roots, arg, given, &path));
        }
        let mut real = existing.canonicalize().map_err(|e| {
            Refusal::new(
                "not_found",
                format!("{arg}: cannot resolve `{given}`: {e}"),
                exit::USAGE,
            )
        })?;
        real.extend(rest.iter().rev());
        inside(roots, arg, given, &real)?;
        Ok(path)
    }

    pub(super) fn optional(
        &self,
        roots: &[PathBuf],
        arg: &str,
        given: Option<&str>,
    ) -> Result<Option<PathBuf>, Refusal> {
        given.map(|g| self.output(roots, arg, g)).transpose()
    }

    /// The argument as a path, relative ones from the folder the server started in.
    pub(super) fn absolute(&self, arg: &str, given: &str) -> Result<PathBuf, Refusal> {
        if given.len() > MAX_PATH {
            return Err(Refusal::usage(format!(
                "{arg}: a path of {} bytes; a path is at most {MAX_PATH} bytes",
                given.len()
            )));
        }
        if given.is_empty() {
            return Err(Refusal::usage(format!("{arg}: the path is empty")));
        }
        let p = Path::new(given);
        Ok(crate::confine::lexical(&if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.start.join(p)
        }))
    }
}

/// `path` (resolved) must lie in one of the roots.
pub(super) fn inside(
    roots: &[PathBuf],
    arg: &str,
    given: &str,
    real: &Path,
) -> Result<(), Refusal> {
    if roots.iter().any(|r| real.starts_with(r)) {
        Ok(())
    } else {
        Err(outside(roots, arg, given, real))
    }
}

fn outside(roots: &[PathBuf], arg: &str, given: &str, real: &Path) -> Refusal {
    let shown: Vec<String> = roots.iter().map(|r| format!("`{}`", r.display())).collect();
    Refusal::new(
        "outside_roots",
        format!(
            "{arg}: `{given}` resolves to `{}`, outside the client's roots ({}): lexrun reads and writes nothing outside them; copy the file in, or add its folder to the roots",
            real.display(),
            shown.join(", ")
        ),
        exit::USAGE,
    )
}
