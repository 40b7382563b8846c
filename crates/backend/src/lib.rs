//! Model servers behind one trait: llama.cpp's `llama-server`, Ollama and OpenAI-compatible
//! servers (vLLM and others), one module each. Every call streams; every call has a connect
//! timeout, an idle timeout (no bytes for too long is a hung server) and a total timeout;
//! [`call`] retries what can be retried with exponential backoff and waits out a server that
//! is still loading its model.

use lexrun_base::{atomic, credentials};

pub mod cassette;
pub mod endpoint;
mod http;
mod llama;
mod ollama;
mod openai;
pub mod stream;
mod types;

pub use http::{clip, error_message, sampling_value, ConnectError, Http};
pub use lexrun_base::server_kind::{MinBuild, ServerKind};
pub use types::{
    Answer, Backend, BoxFuture, Call, CallError, Health, Identity, Limits, OnToken, Reply, Timings,
};

use std::time::{Duration, Instant};

use serde::Serialize;

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
