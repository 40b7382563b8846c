//! Where a pool's calls go, and what answers there. The workflow declares each pool's server
//! kind and URL; `--endpoint POOL=URL` replaces the URL and `--endpoint POOL=KIND:URL` the
//! kind too, so one local llama.cpp server can stand in for every pool; `--endpoint '*=URL'`
//! (or `'*=KIND:URL'`) stands in for every pool at once, and a pool named too keeps its own. When a server answers
//! a request with "not found", [`detect`] asks it which protocol it does speak, so the error
//! can say "this endpoint answers like llama.cpp, not Ollama" instead of a bare HTTP 404.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::http::Http;
use super::types::Limits;
use lexrun_base::server_kind::{MinBuild, ServerKind};

/// A pool's server as given on the command line: its URL, and its kind when named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub server: Option<ServerKind>,
    pub url: String,
}

/// What stands in for the workflow's servers: per pool by name, and `*` for every pool not
/// named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    named: BTreeMap<String, Override>,
    every: Option<Override>,
}

/// The pool name that stands for every pool.
pub const EVERY: &str = "*";

impl Overrides {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the server for `pool`, or for every pool when `pool` is `*`.
    pub fn insert(&mut self, pool: String, o: Override) {
        if pool == EVERY {
            self.every = Some(o);
        } else {
            self.named.insert(pool, o);
        }
    }

    /// The server standing in for `pool`: its own, else the one for every pool.
    pub fn get(&self, pool: &str) -> Option<&Override> {
        self.named.get(pool).or(self.every.as_ref())
    }

    /// The pools named on the command line (not `*`), to check they exist.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.named.keys()
    }
}

/// Parses `POOL=URL` or `POOL=KIND:URL` (`rtx=llama_cpp:http://127.0.0.1:8090`); `POOL` may be
/// `*`, every pool.
pub fn parse_override(arg: &str) -> Result<(String, Override), String> {
    let usage = "should be POOL=URL or POOL=KIND:URL, e.g. board_a=http://127.0.0.1:8081 or rtx=llama_cpp:http://127.0.0.1:8090, or '*=URL' for every pool";
    let Some((pool, rest)) = arg.split_once('=') else {
        return Err(format!("--endpoint `{arg}` {usage}"));
    };
    if pool.is_empty() || rest.is_empty() {
        return Err(format!("--endpoint `{arg}` {usage}"));
    }
    let (server, url) = match rest.split_once(':') {
        Some((kind, url)) if !kind.contains('/') && !matches!(kind, "http" | "https") => {
            let Some(k) = ServerKind::parse(kind) else {
                let kinds: Vec<&str> = ServerKind::ALL.iter().map(|k| k.as_str()).collect();
                return Err(format!(
                    "--endpoint `{arg}`: `{kind}` is not a server kind; kinds: {}",
                    kinds.join(", ")
                ));
            };
            (Some(k), url)
        }
        _ => (None, rest),
    };
    if url.is_empty() {
        return Err(format!("--endpoint `{arg}` {usage}"));
    }
    Ok((
        pool.to_string(),
        Override {
            server,
            url: url.to_string(),
        },
    ))
}

/// The kind and URL a pool's calls go to: the command line's, else the workflow's.
pub fn resolve(
    overrides: &Overrides,
    pool: &str,
    declared: ServerKind,
    url: &str,
) -> (ServerKind, String) {
    match overrides.get(pool) {
        Some(o) => (o.server.unwrap_or(declared), o.url.clone()),
        None => (declared, url.to_string()),
    }
}

/// Which protocol the server at `base` answers, asked by the one request each family alone
/// answers: llama.cpp's `/props` (with `build_info` or generation settings), Ollama's
/// `/api/version`, an OpenAI-compatible `/v1/models` list. `None` when nothing answers so.
pub async fn detect(base: &str, limits: &Limits) -> Option<ServerKind> {
    let quick = Limits {
        connect: limits.connect.min(Duration::from_secs(2)),
        ..limits.clone()
    };
    let http = Http::new(base, &quick).ok()?;
    let origin = http.origin();
    let get = |path: &'static str| {
        let url = format!("{origin}{path}");
        let http = &http;
        async move { http.get_json(&url).await.ok() }
    };
    if let Some(p) = get("/props").await {
        if is_llama_props(&p) {
            return Some(ServerKind::LlamaCpp);
        }
    }
    if let Some(v) = get("/api/version").await {
        if v["version"].is_string() {
            return Some(ServerKind::Ollama);
        }
    }
    if let Some(m) = get("/v1/models").await {
        if m["data"].is_array() {
            return Some(ServerKind::Openai);
        }
    }
    None
}

fn is_llama_props(p: &Value) -> bool {
    p["build_info"].is_string() || p["default_generation_settings"].is_object()
}

/// What to tell someone whose pool is declared as `declared` but whose server answers like
/// `answers`.
pub fn mismatch(pool: &str, url: &str, declared: ServerKind, answers: ServerKind) -> String {
    let url = crate::credentials::url(url);
    format!(
        "this endpoint answers like {}, not {}; if that server is meant to stand in for pool `{pool}`, say so: --endpoint {pool}={}:{url}",
        answers.label(),
        declared.label(),
        answers.as_str()
    )
}

/// The build number in llama.cpp's `build_info` (`b6123-1a2b3c4d` → 6123). A server built
/// outside a git checkout reports `b0-unknown`: its build is not known.
pub fn build_number(build_info: &str) -> Option<u64> {
    let digits = build_info.strip_prefix('b')?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok().filter(|n| *n > 0)
}

/// Why a server's build is refused by a pool's `min_build`, or `None` when it is new enough.
/// A server that does not report a build number is refused too: it cannot show it is new
/// enough.
pub fn build_refusal(
    min: &MinBuild,
    pool: &str,
    url: &str,
    build_info: Option<&str>,
) -> Option<String> {
    let because = min
        .because
        .as_deref()
        .map(|b| format!(" ({b})"))
        .unwrap_or_default();
    let reports = match build_info {
        None => "does not report its build".to_string(),
        Some(b) => match build_number(b) {
            Some(n) if n >= min.build => return None,
            Some(_) => format!("runs build `{b}`"),
            None => format!("reports no build number (`{b}`: built outside a git checkout?)"),
        },
    };
    let url = crate::credentials::url(url);
    Some(format!(
        "pool `{pool}` needs llama.cpp build {} or newer{because}, but the server at {url} {reports}; update llama.cpp on that host, or point the pool at a newer server",
        min.build
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_with_and_without_a_kind() {
        assert_eq!(
            parse_override("board_a=http://127.0.0.1:8081").unwrap(),
            (
                "board_a".into(),
                Override {
                    server: None,
                    url: "http://127.0.0.1:8081".into()
                }
            )
        );
        assert_eq!(
            parse_override("rtx=llama_cpp:http://127.0.0.1:8090").unwrap(),
            (
                "rtx".into(),
                Override {
                    server: Some(ServerKind::LlamaCpp),
                    url: "http://127.0.0.1:8090".into()
                }
            )
        );
        let e = parse_override("rtx=llamacpp:http://x:1").unwrap_err();
        assert!(e.contains("`llamacpp` is not a server kind"), "{e}");
        assert!(parse_override("rtx").is_err());
        assert!(parse_override("=http://x").is_err());
        assert!(parse_override("rtx=ollama:").is_err());
    }

    #[test]
    fn resolving_keeps_the_declared_kind_unless_named() {
        let mut o = Overrides::new();
        o.insert(
            "rtx".into(),
            Override {
                server: Some(ServerKind::LlamaCpp),
                url: "http://a:1".into(),
            },
        );
        o.insert(
            "b".into(),
            Override {
                server: None,
                url: "http://b:1".into(),
            },
        );
        assert_eq!(
            resolve(&o, "rtx", ServerKind::Ollama, "http://x"),
            (ServerKind::LlamaCpp, "http://a:1".into())
        );
        assert_eq!(
            resolve(&o, "b", ServerKind::Ollama, "http://x"),
            (ServerKind::Ollama, "http://b:1".into())
        );
        assert_eq!(
            resolve(&o, "c", ServerKind::Openai, "http://x"),
            (ServerKind::Openai, "http://x".into())
        );
    }

    #[test]
    fn a_star_stands_in_for_every_pool_but_named_pools_keep_their_own() {
        let mut o = Overrides::new();
        let (p, every) = parse_override("*=llama_cpp:http://one:1").unwrap();
        assert_eq!(p, "*");
        o.insert(p, every);
        let (p, named) = parse_override("b=http://b:1").unwrap();
        o.insert(p, named);
        assert_eq!(
            resolve(&o, "rtx", ServerKind::Ollama, "http://x"),
            (ServerKind::LlamaCpp, "http://one:1".into())
        );
        assert_eq!(
            resolve(&o, "b", ServerKind::Openai, "http://x"),
            (ServerKind::Openai, "http://b:1".into())
        );
        // `*` is no pool's name: nothing checks it against the workflow's pools.
        assert_eq!(o.keys().collect::<Vec<_>>(), vec!["b"]);
        // Without a kind, each pool keeps its declared one.
        let mut o = Overrides::new();
        let (p, every) = parse_override("*=http://one:1").unwrap();
        o.insert(p, every);
        assert_eq!(
            resolve(&o, "rtx", ServerKind::Ollama, "http://x"),
            (ServerKind::Ollama, "http://one:1".into())
        );
    }

    #[test]
    fn build_numbers() {
        assert_eq!(build_number("b6123-1a2b3c4d"), Some(6123));
        assert_eq!(build_number("b0-unknown"), None);
        assert_eq!(build_number("unknown"), None);
        assert_eq!(build_number("b42"), Some(42));
    }

    #[test]
    fn builds_older_or_unknown_are_refused_with_the_reason() {
        let min = crate::MinBuild {
            build: 6123,
            because: Some("older builds garble long Gemma prompts".into()),
        };
        assert_eq!(build_refusal(&min, "p", "http://x", Some("b6123-ab")), None);
        assert_eq!(build_refusal(&min, "p", "http://x", Some("b7000-ab")), None);
        let old = build_refusal(&min, "p", "http://x", Some("b5000-ab")).unwrap();
        assert!(
            old.contains(
                "needs llama.cpp build 6123 or newer (older builds garble long Gemma prompts)"
            ),
            "{old}"
        );
        assert!(old.contains("runs build `b5000-ab`"), "{old}");
        let unknown = build_refusal(&min, "p", "http://x", Some("b0-unknown")).unwrap();
        assert!(unknown.contains("reports no build number"), "{unknown}");
        assert!(build_refusal(&min, "p", "http://x", None).is_some());
    }

    #[test]
    fn mismatch_names_both_and_the_fix() {
        let m = mismatch(
            "rtx",
            "http://127.0.0.1:8090",
            ServerKind::Ollama,
            ServerKind::LlamaCpp,
        );
        assert!(m.starts_with("this endpoint answers like llama.cpp, not Ollama"));
        assert!(m.contains("--endpoint rtx=llama_cpp:http://127.0.0.1:8090"));
    }
}
