//! `ledger "postgres://…"`: the firm's shared ledger, named in a workflow or in the cluster
//! file every workflow imports. One ledger per workflow; the URL must be PostgreSQL's and must
//! carry no password, which would then sit in every copy of the file (lexrun reads it from
//! `PGPASSWORD` or `~/.pgpass`, as `psql` does).

use super::context::Cx;
use crate::diagnostic::{Code, Diagnostic, FileId};
use crate::syntax::ast;

/// The workflow's shared ledger, if one of its files names one.
pub(crate) fn ledger(cx: &mut Cx) -> Option<String> {
    let mut found: Option<(&ast::Spanned<String>, FileId)> = None;
    for m in cx.modules {
        for item in &m.ast.items {
            let ast::Item::Ledger(url) = item else {
                continue;
            };
            if let Some(why) = unusable(&url.node) {
                cx.error(
                    Diagnostic::new(
                        Code::BadLedger,
                        format!("lexrun cannot use this ledger: {why}"),
                    )
                    .in_file(m.file)
                    .label(url.span, why)
                    .help(HELP),
                );
                continue;
            }
            match found {
                Some((first, file)) if first.node != url.node => cx.error(
                    Diagnostic::new(Code::BadLedger, "two different ledgers for one workflow")
                        .in_file(m.file)
                        .label(url.span, "this ledger")
                        .note(file, first.span, "the other ledger")
                        .help("a workflow's runs go into one ledger; keep one `ledger` line, usually in the cluster file every workflow imports"),
                ),
                Some(_) => {}
                None => found = Some((url, m.file)),
            }
        }
    }
    found.map(|(u, _)| u.node.clone())
}

const HELP: &str = "write `ledger \"postgres://USER@HOST:PORT/DATABASE\"`; give the password in `PGPASSWORD` or `~/.pgpass`, never in the file";

/// Why a ledger URL cannot be used, if it cannot.
fn unusable(url: &str) -> Option<&'static str> {
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        return Some("a shared ledger is a PostgreSQL database, named by a `postgres://` URL");
    };
    if crate::credentials::password(rest).is_some() {
        return Some("the URL holds a password, which every copy of this file would carry");
    }
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    if authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .is_empty()
    {
        return Some("the URL names no server");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::unusable;

    #[test]
    fn only_a_postgres_url_without_a_password_is_a_ledger() {
        assert_eq!(
            unusable("postgres://lexrun@ledger.firm.internal:5432/lexrun"),
            None
        );
        assert_eq!(unusable("postgresql://db/lexrun?sslmode=disable"), None);
        assert!(unusable("postgres://lexrun:hunter2@db/lexrun")
            .unwrap()
            .contains("password"));
        assert!(unusable("postgres://u:hun?ter2@db/x")
            .unwrap()
            .contains("password"));
        assert_eq!(unusable("postgres://db:5432/x?application_name=a@b"), None);
        assert!(unusable("mysql://db/lexrun")
            .unwrap()
            .contains("PostgreSQL"));
        assert!(unusable("postgres:///lexrun")
            .unwrap()
            .contains("no server"));
    }
}
