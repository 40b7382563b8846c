//! HTTP plumbing shared by the backends: one client per server, plain http only, its API
//! key kept out of every message; and what a server sent, clipped and read for its error.

use std::time::Duration;

use serde_json::Value;

use super::types::{CallError, Health, Limits};

/// Why a backend could not be set up for an endpoint.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("`{}` is not a URL: {source}", crate::credentials::url(base))]
    NotAUrl {
        base: String,
        #[source]
        source: url::ParseError,
    },
    #[error("`{}`: lexrun talks to model servers on the firm's own network over plain http", crate::credentials::url(.0))]
    NotHttp(String),
    #[error("`{}` carries credentials in its address; lexrun never sends or keeps them: write it without `user:password@` and give the pool `api_key env \"VAR\"`", crate::credentials::url(.0))]
    Credentials(String),
    #[error("the environment variable `{0}` that holds the pool's API key is not set (or empty); set it where lexrun runs")]
    NoKey(String),
    #[error("{0}")]
    Client(#[source] reqwest::Error),
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
        let shown = crate::credentials::url(base);
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

    /// Ready when `path` answers at all.
    pub async fn ready(&self, path: &str) -> Result<Health, CallError> {
        self.get(&self.url(path)).await?;
        Ok(Health::Ready)
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
