//! What every backend speaks: a model call and its reply with the server's timings and
//! identity, its health, why a call failed, the trait each server family implements, and the
//! limits every call keeps to.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a server's answer on its way is told with each token: the number of tokens so far.
pub type OnToken<'a> = &'a (dyn Fn(u64) + Send + Sync);

/// What a server is asked for, on its way.
pub type Answer<'a, T> = BoxFuture<'a, Result<T, CallError>>;

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
    fn chat<'a>(&'a self, call: &'a Call, on_token: OnToken<'a>) -> Answer<'a, Reply>;
    fn health(&self) -> Answer<'_, Health>;
    /// The server's identity for `model` (for Ollama, also whether the model exists).
    fn identity<'a>(&'a self, model: &'a str) -> Answer<'a, Identity>;
    /// Tokens in `text` by the served model's own tokenizer, when the server can count them.
    fn count_tokens<'a>(&'a self, text: &'a str) -> Answer<'a, Option<u64>>;
    /// `call` was answered without this backend (from lexrun's cache): a recording backend
    /// keeps the answer as if the server had given it.
    fn answered_elsewhere(&self, _call: &Call, _reply: &Reply) {}
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
