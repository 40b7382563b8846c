//! Model servers behind one trait: llama.cpp's `llama-server`, Ollama and OpenAI-compatible
//! servers (vLLM and others), one module each. Every call streams; every call has a connect
//! timeout, an idle timeout (no bytes for too long is a hung server) and a total timeout;
//! [`call`] retries what can be retried with exponential backoff and waits out a server that
//! is still loading its model.

pub mod cassette;
pub mod endpoint;
mod kind;
pub mod llama;
pub mod ollama;
pub mod openai;
pub mod stream;

pub use kind::{MinBuild, ServerKind};

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One model call.
#[derive(Clone, Debug)]
pub struct Call {
    pub stage: String,
    /// The model's name as the server knows it (an Ollama tag; informational for llama.cpp).
    pub model: String,
    /// The user message: evidence packet first, then instructions.
    pub prompt: String,
    /// A JSON schema the answer must follow (the stage's `returns`).
    pub schema: Option<Value>,
    /// temperature, top_p, top_k, min_p, seed, max_tokens — whichever are set.
    pub sampling: BTreeMap<String, f64>,
    /// The context the model was declared with.
    pub num_ctx: u64,
    /// The server slot this model keeps, so its prompt cache survives between stages.
    pub slot: Option<u32>,
    /// How long the whole answer may take.
    pub timeout: Duration,
    /// A speed measurement: the server's prompt cache is not used and, where the server
    /// allows, decoding runs to `max_tokens` whatever the model would stop at.
    pub measure: bool,
}

/// Token counts and speeds, as the server measured them.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Timings {
    /// Prompt tokens evaluated in this call (not counting the cached prefix).
    pub prompt_n: u64,
    /// Prompt tokens served from the server's cache.
    pub cache_n: u64,
    pub predicted_n: u64,
    pub prompt_ms: f64,
    pub predicted_ms: f64,
    pub prompt_per_second: f64,
    pub predicted_per_second: f64,
}

#[derive(Clone, Debug)]
pub struct Reply {
    pub text: String,
    pub timings: Timings,
    /// Why decoding stopped: `stop`, `length`, …
    pub finish: Option<String>,
}

/// What a server says about itself and the model it serves.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Identity {
    /// The loaded model: a file path, an alias, or an Ollama tag with its digest.
    pub model: String,
    /// Context per slot, when the server tells it.
    pub n_ctx: Option<u64>,
    pub slots: Option<u32>,
    /// The server's build, as it reports it (llama.cpp's `build_info`, e.g. `b6123-1a2b3c4d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

#[derive(Debug, PartialEq)]
pub enum Health {
    Ready,
    Loading(String),
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    #[error("cannot connect: {0}")]
    Refused(String),
    #[error("the server answered HTTP {code}: {message}")]
    Status { code: u16, message: String },
    #[error("the server is still loading its model ({0})")]
    Loading(String),
    #[error("the answer stream was cut off: {0}")]
    Cut(String),
    #[error("the server sent nothing for {}s", .0.as_secs())]
    Hang(Duration),
    #[error("the answer took longer than the stage's timeout of {}s", .0.as_secs())]
    Timeout(Duration),
    #[error("the server sent something that is not its protocol: {0}")]
    Malformed(String),
    #[error("the server reported an error: {0}")]
    Failed(String),
    /// An answer past lexrun's own bounds: asking again would get the same.
    #[error("{0}")]
    TooLarge(String),
    /// Replaying a cassette that does not hold this request.
    #[error("{0}")]
    NotRecorded(String),
}

impl CallError {
    /// Whether trying again could help. Client errors (4xx other than 429) and timeouts of
    /// the whole stage cannot.
    pub fn retryable(&self) -> bool {
        match self {
            CallError::Status { code, .. } => *code == 429 || *code >= 500,
            CallError::Timeout(_) | CallError::NotRecorded(_) | CallError::TooLarge(_) => false,
            _ => true,
        }
    }
}

/// A model server.
pub trait Backend: Send + Sync {
    /// Streams one answer; `on_token` is told the number of tokens so far.
    fn chat<'a>(
        &'a self,
        call: &'a Call,
        on_token: &'a (dyn Fn(u64) + Send + Sync),
    ) -> BoxFuture<'a, Result<Reply, CallError>>;
    fn health(&self) -> BoxFuture<'_, Result<Health, CallError>>;
    /// The server's identity for `model` (for Ollama, also whether the model exists).
    fn identity<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Result<Identity, CallError>>;
    /// Tokens in `text` by the served model's own tokenizer, when the server can count them.
    fn count_tokens<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<u64>, CallError>>;
}

/// Timeouts and retry limits for every call.
#[derive(Clone, Debug)]
pub struct Limits {
    pub connect: Duration,
    /// No bytes for this long: the server is hung.
    pub idle: Duration,
    /// Attempts after the first.
    pub retries: u32,
    /// First backoff; doubles each retry, capped at 30 s.
    pub backoff: Duration,
    /// How long to wait for a server that answers "loading".
    pub load: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect: Duration::from_secs(5),
            idle: Duration::from_secs(300),
            retries: 4,
            backoff: Duration::from_millis(500),
            load: Duration::from_secs(1800),
        }
    }
}

/// Why a backend could not be set up for an endpoint.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("`{}` is not a URL: {source}", crate::redact::url(base))]
    NotAUrl {
        base: String,
        #[source]
        source: url::ParseError,
    },
    #[error("`{}`: lexrun talks to model servers on the firm's own network over plain http", crate::redact::url(.0))]
    NotHttp(String),
    #[error("`{}` carries credentials in its address; lexrun never sends or keeps them: write it without `user:password@` and give the pool `api_key env \"VAR\"`", crate::redact::url(.0))]
    Credentials(String),
    #[error("the environment variable `{0}` that holds the pool's API key is not set (or empty); set it where lexrun runs")]
    NoKey(String),
    #[error("{0}")]
    Client(#[source] reqwest::Error),
}

/// Builds the backend for a server family at `base`.
pub fn connect(
    kind: ServerKind,
    base: &str,
    limits: &Limits,
) -> Result<Box<dyn Backend>, ConnectError> {
    connect_with_key(kind, base, limits, None)
}

/// Builds the backend for a server family at `base`, sending `api_key_env`'s value (read from
/// the environment now) as a bearer token on every request to this server and no other.
pub fn connect_with_key(
    kind: ServerKind,
    base: &str,
    limits: &Limits,
    api_key_env: Option<&str>,
) -> Result<Box<dyn Backend>, ConnectError> {
    let key = match api_key_env {
        Some(var) => Some(
            std::env::var(var)
                .ok()
                .filter(|k| !k.trim().is_empty())
                .ok_or_else(|| ConnectError::NoKey(var.to_string()))?,
        ),
        None => None,
    };
    let http = Http::new_with_key(base, limits, key)?;
    Ok(match kind {
        ServerKind::LlamaCpp => Box::new(llama::Llama::new(http)),
        ServerKind::Ollama => Box::new(ollama::Ollama::new(http)),
        ServerKind::Openai => Box::new(openai::OpenAi::new(http)),
    })
}

/// What happened on the way to an answer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Attempts {
    /// Failed attempts before the answer, each with why.
    pub retries: Vec<String>,
    /// Time spent waiting for the server to load its model.
    pub waited_for_load_ms: u64,
}

/// Sends `call`, retrying with backoff what can be retried, and waiting (up to `limits.load`)
/// while the server loads its model. `on_note` hears about every retry and wait.
pub async fn call(
    backend: &dyn Backend,
    call: &Call,
    limits: &Limits,
    on_token: &(dyn Fn(u64) + Send + Sync),
    on_note: &(dyn Fn(String) + Send + Sync),
) -> Result<(Reply, Attempts), (CallError, Attempts)> {
    let mut attempts = Attempts::default();
    let mut backoff = limits.backoff;
    let mut tries = 0;
    loop {
        let started = Instant::now();
        tracing::debug!(stage = %call.stage, model = %call.model, prompt_bytes = call.prompt.len(), "model call");
        let result = match tokio::time::timeout(call.timeout, backend.chat(call, on_token)).await {
            Ok(r) => r,
            Err(_) => Err(CallError::Timeout(call.timeout)),
        };
        match result {
            Ok(reply) => {
                tracing::debug!(stage = %call.stage, tokens = reply.timings.predicted_n, ms = started.elapsed().as_millis() as u64, "answer");
                return Ok((reply, attempts));
            }
            Err(CallError::Loading(msg)) => {
                on_note(format!("waiting for the server to load its model ({msg})"));
                let waited = wait_ready(backend, limits, on_note).await;
                attempts.waited_for_load_ms += waited.as_millis() as u64;
                if waited >= limits.load {
                    return Err((CallError::Loading(msg), attempts));
                }
            }
            Err(e) if e.retryable() && tries < limits.retries => {
                tries += 1;
                let why = format!("{e} (after {} ms)", started.elapsed().as_millis());
                tracing::warn!(stage = %call.stage, attempt = tries, error = %e, "retrying");
                on_note(format!(
                    "attempt {tries} failed: {why}; retrying in {} ms",
                    backoff.as_millis()
                ));
                attempts.retries.push(why);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
            Err(e) => {
                attempts.retries.push(e.to_string());
                return Err((e, attempts));
            }
        }
    }
}

/// Polls the server's health until it is ready or `limits.load` has passed; returns the time
/// waited.
pub async fn wait_ready(
    backend: &dyn Backend,
    limits: &Limits,
    on_note: &(dyn Fn(String) + Send + Sync),
) -> Duration {
    let start = Instant::now();
    let mut last = String::new();
    let mut fails = 0;
    while start.elapsed() < limits.load {
        match backend.health().await {
            Ok(Health::Ready) => return start.elapsed(),
            Ok(Health::Loading(m)) => {
                if m != last {
                    on_note(format!("server: {m}"));
                    last = m;
                }
            }
            Err(e) => {
                // Not answering at all is not loading: give up after the retries, and let
                // the call report why.
                fails += 1;
                if fails > limits.retries {
                    return start.elapsed();
                }
                let m = e.to_string();
                if m != last {
                    on_note(format!("server: {m}"));
                    last = m;
                }
                tokio::time::sleep(limits.backoff * fails).await;
                continue;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    limits.load
}

/// HTTP plumbing shared by the backends.
pub struct Http {
    client: reqwest::Client,
    base: String,
    idle: Duration,
    /// The pool's API key, to keep out of every message.
    key: Option<String>,
}

impl Http {
    pub fn new(base: &str, limits: &Limits) -> Result<Http, ConnectError> {
        Http::new_with_key(base, limits, None)
    }

    /// A client for one server; `key`, when given, goes to it (and only it) as a bearer token,
    /// marked sensitive so that no debug output shows it. An address with `user:password@` is
    /// refused: such credentials would otherwise be sent as Basic auth and kept in records.
    pub fn new_with_key(
        base: &str,
        limits: &Limits,
        key: Option<String>,
    ) -> Result<Http, ConnectError> {
        // Errors carry the address redacted, so that no message, log or debug output of one
        // holds a password.
        let shown = crate::redact::url(base);
        let url = url::Url::parse(base).map_err(|source| ConnectError::NotAUrl {
            base: shown.clone(),
            source,
        })?;
        if url.scheme() != "http" {
            return Err(ConnectError::NotHttp(shown));
        }
        // `http://u:12/34@h` parses as host `u`, port 12: the password rule says otherwise.
        if !url.username().is_empty() || url.password().is_some() || shown != base {
            return Err(ConnectError::Credentials(shown));
        }
        let mut builder = reqwest::Client::builder()
            .connect_timeout(limits.connect)
            .pool_idle_timeout(Duration::from_secs(30))
            // A redirect would carry the key to another server.
            .redirect(reqwest::redirect::Policy::none());
        if let Some(k) = &key {
            let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", k.trim()))
                .map_err(|_| {
                    ConnectError::NoKey("(the key holds characters a header cannot)".into())
                })?;
            value.set_sensitive(true);
            let mut headers = reqwest::header::HeaderMap::new();
            headers.insert(reqwest::header::AUTHORIZATION, value);
            builder = builder.default_headers(headers);
        }
        let client = builder.build().map_err(ConnectError::Client)?;
        Ok(Http {
            client,
            base: base.trim_end_matches('/').to_string(),
            idle: limits.idle,
            key,
        })
    }

    /// `text` with the pool's key, should a server echo it, replaced by `***`.
    fn redact(&self, text: String) -> String {
        match &self.key {
            Some(k) if !k.trim().is_empty() => text.replace(k.trim(), "***"),
            _ => text,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The server's base URL's path, e.g. `/completion` for a llama.cpp native endpoint.
    pub fn base_path(&self) -> String {
        url::Url::parse(&self.base)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_default()
    }

    /// The scheme, host and port, without the path.
    pub fn origin(&self) -> String {
        match url::Url::parse(&self.base) {
            Ok(u) => u.origin().ascii_serialization(),
            Err(_) => self.base.clone(),
        }
    }

    /// POSTs JSON and returns the response once its status is known to be a success.
    pub async fn post(&self, url: &str, body: &Value) -> Result<reqwest::Response, CallError> {
        let resp = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(send_error)?;
        self.ok(resp).await
    }

    pub async fn get(&self, url: &str) -> Result<reqwest::Response, CallError> {
        let resp = self
            .client
            .get(url)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(send_error)?;
        self.ok(resp).await
    }

    pub async fn get_json(&self, url: &str) -> Result<Value, CallError> {
        let resp = self.get(url).await?;
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| CallError::Cut(e.to_string()))?;
        serde_json::from_slice(&bytes).map_err(|e| CallError::Malformed(format!("{url}: {e}")))
    }

    async fn ok(&self, resp: reqwest::Response) -> Result<reqwest::Response, CallError> {
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let body = tokio::time::timeout(self.idle, resp.bytes())
            .await
            .ok()
            .and_then(|r| r.ok())
            .unwrap_or_default();
        let message = self.redact(error_message(&body));
        if status.as_u16() == 503 && message.to_ascii_lowercase().contains("loading") {
            return Err(CallError::Loading(message));
        }
        Err(CallError::Status {
            code: status.as_u16(),
            message,
        })
    }

    /// The next piece of a streamed body; `None` at its end.
    pub async fn chunk(&self, resp: &mut reqwest::Response) -> Result<Option<Vec<u8>>, CallError> {
        match tokio::time::timeout(self.idle, resp.chunk()).await {
            Err(_) => Err(CallError::Hang(self.idle)),
            Ok(Err(e)) => Err(CallError::Cut(e.to_string())),
            Ok(Ok(c)) => Ok(c.map(|b| b.to_vec())),
        }
    }
}

fn send_error(e: reqwest::Error) -> CallError {
    if e.is_connect() {
        CallError::Refused(root_cause(&e))
    } else if e.is_timeout() {
        CallError::Hang(Duration::from_secs(30))
    } else {
        CallError::Cut(root_cause(&e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The first 120 characters of what a server sent, for an error message.
pub fn clip(s: &str) -> String {
    let mut t: String = s.chars().take(120).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t
}

/// The message in an error body: `{"error":{"message":…}}` (llama.cpp, OpenAI),
/// `{"error":"…"}` (Ollama), or the body itself.
pub fn error_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        if let Some(m) = v["error"]["message"].as_str() {
            return m.to_string();
        }
        if let Some(m) = v["error"].as_str() {
            return m.to_string();
        }
    }
    let text = String::from_utf8_lossy(body).trim().to_string();
    if text.is_empty() {
        "(no message)".into()
    } else {
        text.chars().take(300).collect()
    }
}

/// Sampling keys in the names a server family uses.
pub fn sampling_value(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_of_each_family() {
        assert_eq!(
            error_message(
                br#"{"error":{"code":400,"message":"bad","type":"invalid_request_error"}}"#
            ),
            "bad"
        );
        assert_eq!(
            error_message(br#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(error_message(b"  upstream down "), "upstream down");
        assert_eq!(error_message(b""), "(no message)");
    }

    #[test]
    fn what_is_retried() {
        let s = |code| CallError::Status {
            code,
            message: String::new(),
        };
        assert!(s(500).retryable() && s(503).retryable() && s(429).retryable());
        assert!(!s(400).retryable() && !s(404).retryable());
        assert!(CallError::Refused(String::new()).retryable());
        assert!(CallError::Cut(String::new()).retryable());
        assert!(!CallError::Timeout(Duration::from_secs(1)).retryable());
    }

    #[test]
    fn url_credentials_are_redacted_and_refused() {
        let Err(e) = Http::new("http://user:pa55@127.0.0.1:1", &Limits::default()) else {
            panic!("URL credentials accepted")
        };
        assert!(!e.to_string().contains("pa55"), "{e}");
    }

    #[test]
    fn only_plain_http() {
        assert!(Http::new("https://x:1", &Limits::default()).is_err());
        assert!(Http::new("not a url", &Limits::default()).is_err());
        assert!(Http::new("http://127.0.0.1:8081", &Limits::default()).is_ok());
    }
}
