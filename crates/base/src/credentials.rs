//! URL passwords kept out of everything lexrun prints or stores: one rule for finding the
//! password in `scheme://user:password@host…`, used by every message, record, report, log,
//! ledger name and diagnostic excerpt that may show a URL.
//!
//! People type passwords unescaped, so the password runs from the first `:` after the user to
//! the last `@` before the host: it may hold `?`, `/`, `#` and `@` (`http://u:pa/ss@h`). A `:`
//! that starts a port (`host:5432/db?opt=a@b`) is no password's. When in doubt a password is
//! assumed: hiding a few characters too many costs a reader little, showing a password is
//! not undone.

use std::borrow::Cow;
use std::ops::Range;

/// Where the password is in what follows a URL's `scheme://` (`user:password@host/…`), as a
/// byte range, if it holds one.
pub fn password(rest: &str) -> Option<Range<usize>> {
    let at = host_at(rest)?;
    let userinfo = &rest[..at];
    let colon = userinfo.find(':')?;
    // A user name ends at the first `/`, `?` or `#`: a `:` past one is in a path or query.
    if userinfo[..colon].contains(['/', '?', '#']) {
        return None;
    }
    let after = &userinfo[colon + 1..];
    // `host:5432/db?x=a@b`: digits up to a `/` or `?` are a port when what follows holds a
    // query (`?` or `=`), so the `@` is a parameter's, not the end of a password.
    let port = after.split(['/', '?', '#']).next().unwrap_or("");
    let rest_of_it = &after[port.len()..];
    if !rest_of_it.is_empty()
        && !port.is_empty()
        && port.bytes().all(|b| b.is_ascii_digit())
        && rest_of_it.contains(['?', '='])
    {
        return None;
    }
    Some(colon + 1..at)
}

/// The `@` that ends a URL's user information: the last one followed by a host name (an
/// `@` in a query, `?x=@`, is followed by none), else the last one.
fn host_at(rest: &str) -> Option<usize> {
    let hostlike = |s: &str| {
        let host = s.split(['/', '?', '#']).next().unwrap_or("");
        !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-_[]:%".contains(&b))
    };
    let mut last = None;
    for (i, _) in rest.match_indices('@').rev() {
        last.get_or_insert(i);
        if hostlike(&rest[i + 1..]) {
            return Some(i);
        }
    }
    last
}

/// Every URL in `text` with its password replaced by `***`; a user name alone is kept, as
/// libpq and git show it. For messages, records, reports and ledger names.
pub fn urls(text: &str) -> Cow<'_, str> {
    replace(text, |_| "***".into())
}

/// One URL as it may be shown: its password replaced by `***`.
pub fn url(u: &str) -> String {
    urls(u).into_owned()
}

/// Every URL in `text` with each byte of its password replaced by `*`, so that byte offsets
/// into the text (a diagnostic's spans) still hold.
pub fn urls_in_place(text: &str) -> Cow<'_, str> {
    replace(text, |n| "*".repeat(n))
}

fn replace<'a>(text: &'a str, with: impl Fn(usize) -> String) -> Cow<'a, str> {
    if !text.contains("://") {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find("://") {
        let start = from + at + 3;
        // A URL in a message ends at white space or a quote.
        let end = text[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`'))
            .map_or(text.len(), |n| start + n);
        if let Some(r) = password(&text[start..end]) {
            if !r.is_empty() {
                out.push_str(&text[done..start + r.start]);
                out.push_str(&with(text[start + r.start..start + r.end].len()));
                done = start + r.end;
            }
        }
        from = end.max(start);
    }
    if done == 0 {
        return text.into();
    }
    out.push_str(&text[done..]);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_holding_url_punctuation_are_hidden() {
        for (given, shown) in [
            ("http://u:pa/ss@h", "http://u:***@h"),
            ("http://u:pa/ss@h:8081/v1", "http://u:***@h:8081/v1"),
            ("http://u:pa?ss@h/v1?x=1", "http://u:***@h/v1?x=1"),
            ("http://u:pa#ss@h", "http://u:***@h"),
            ("http://u:p@ss@h/", "http://u:***@h/"),
            ("postgres://u:a/b#c?d@db/x", "postgres://u:***@db/x"),
            ("http://u:12/34@h", "http://u:***@h"),
            (
                "postgres://lexrun:s3cret@db.firm.example:5432/ledger",
                "postgres://lexrun:***@db.firm.example:5432/ledger",
            ),
            (
                "http://user:pa55@10.0.0.2:8081/v1?x=@",
                "http://user:***@10.0.0.2:8081/v1?x=@",
            ),
            ("http://u:pw@", "http://u:***@"),
        ] {
            assert_eq!(url(given), shown, "{given}");
        }
    }

    #[test]
    fn addresses_without_a_password_are_shown_whole() {
        for u in [
            "http://10.0.0.2:8081",
            "postgres://lexrun@127.0.0.1/ledger",
            "postgres://db:5432/x?application_name=a@b",
            "postgres://db:5432/x?user=a@b",
            "http://h/v1?x=@",
            "http://h/a:b@c",
            "not a url",
            "",
        ] {
            assert_eq!(url(u), u);
        }
    }

    #[test]
    fn every_url_in_a_message_and_only_its_password() {
        let m =
            "cannot reach `postgres://u:se/cr?et@db:5432/l` (then http://a:b@h/ and http://plain/)";
        assert_eq!(
            urls(m),
            "cannot reach `postgres://u:***@db:5432/l` (then http://a:***@h/ and http://plain/)"
        );
    }

    #[test]
    fn in_place_keeps_every_offset() {
        let t = "ledger \"postgres://lexrun:hünter2@db:5432/x\"\nserve llama_cpp at \"http://a:b@h/\" // http://plain/";
        let m = urls_in_place(t);
        assert_eq!(m.len(), t.len());
        assert!(
            m.contains("postgres://lexrun:********@db:5432/x") && m.contains("http://a:*@h/"),
            "{m}"
        );
        assert!(m.ends_with("// http://plain/"));
    }
}
