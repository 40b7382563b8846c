//! llama.cpp's `llama-server`. Chat through `/v1/chat/completions` by default; the native
//! `/completion` when the pool's endpoint ends in `/completion`. Every request asks for
//! `cache_prompt` and keeps its model on one slot (`id_slot`), so the evidence packet that
//! starts every prompt is evaluated once per model. Timings come from the server's own
//! `timings` (with every piece: `timings_per_token`); `/health` says when the model is still loading; `/props` names the model and
//! its context; `/tokenize` counts a prompt before it is sent.

use serde_json::{json, Value};

use super::http::{clip, error_message, sampling_value, Http};
use super::openai::{chat_body, llama_timings, stream_chat};
use super::stream::{Budget, Sse, SseDecoder};
use super::types::{Answer, Backend, Call, CallError, Health, Identity, OnToken, Reply};

pub struct Llama {
    http: Http,
    native: bool,
}

/// What llama.cpp is asked besides the prompt: its prompt cache (not for a measurement),
/// timings with every piece (so that an answer lexrun ends early, at a loop or the stage's
/// cap, still has its prompt's), no end of text for a measurement, and the slot.
fn llama_options(body: &mut serde_json::Map<String, Value>, call: &Call) {
    body.insert("cache_prompt".into(), json!(!call.measure));
    body.insert("timings_per_token".into(), json!(true));
    if call.measure {
        body.insert("ignore_eos".into(), json!(true));
    }
    if let Some(slot) = call.slot {
        body.insert("id_slot".into(), json!(slot));
    }
}

impl Llama {
    pub fn new(http: Http) -> Self {
        let native = http.base_path().ends_with("/completion");
        Llama { http, native }
    }

    fn root(&self, path: &str) -> String {
        format!("{}{path}", self.http.origin())
    }

    async fn completion(&self, call: &Call, on_token: OnToken<'_>) -> Result<Reply, CallError> {
        let mut body = serde_json::Map::new();
        body.insert("prompt".into(), json!(call.prompt));
        body.insert("stream".into(), json!(true));
        llama_options(&mut body, call);
        for (k, v) in &call.sampling {
            let key = if k == "max_tokens" {
                "n_predict"
            } else {
                k.as_str()
            };
            body.insert(key.into(), sampling_value(*v));
        }
        if let Some(s) = &call.schema {
            body.insert("json_schema".into(), s.clone());
        }
        let mut resp = self
            .http
            .post(&self.root("/completion"), &Value::Object(body))
            .await?;
        let mut dec = SseDecoder::default();
        let mut events = Vec::new();
        let mut text = String::new();
        let mut tokens = 0;
        let mut budget = Budget::of(call);
        loop {
            let chunk = self.http.chunk(&mut resp).await?;
            match &chunk {
                Some(c) => dec.push(c, &mut events)?,
                None => dec.finish(&mut events)?,
            }
            for ev in events.drain(..) {
                let Sse::Data(data) = ev else { continue };
                let v: Value = serde_json::from_str(&data)
                    .map_err(|e| CallError::Malformed(format!("event `{}`: {e}", clip(&data))))?;
                if !v["error"].is_null() {
                    return Err(CallError::Failed(error_message(data.as_bytes())));
                }
                if v["stop"].as_bool() == Some(true) {
                    // The last event repeats nothing of the text; it carries the totals.
                    let finish = match v["stop_type"].as_str() {
                        Some("limit") => "length",
                        _ => "stop",
                    };
                    return Ok(Reply {
                        text,
                        timings: llama_timings(&v["timings"]),
                        finish: Some(finish.into()),
                    });
                }
                if v["timings"].is_object() {
                    budget.note_timings(llama_timings(&v["timings"]));
                }
                if let Some(piece) = v["content"].as_str() {
                    if let Some(r) = budget.piece(&mut text, piece, &mut tokens, on_token) {
                        return Ok(r);
                    }
                }
            }
            if chunk.is_none() {
                return Err(CallError::Cut(format!(
                    "the stream ended after {tokens} tokens without its final event"
                )));
            }
        }
    }
}

impl Backend for Llama {
    fn chat<'a>(&'a self, call: &'a Call, on_token: OnToken<'a>) -> Answer<'a, Reply> {
        Box::pin(async move {
            if self.native {
                return self.completion(call, on_token).await;
            }
            let mut body = chat_body(call);
            llama_options(&mut body, call);
            let url = self.root("/v1/chat/completions");
            stream_chat(&self.http, &url, body, on_token, call).await
        })
    }

    fn health(&self) -> Answer<'_, Health> {
        Box::pin(async move {
            match self.http.get(&self.root("/health")).await {
                Ok(_) => Ok(Health::Ready),
                Err(CallError::Loading(m)) => Ok(Health::Loading(m)),
                Err(CallError::Status { code: 503, message }) => Ok(Health::Loading(message)),
                Err(e) => Err(e),
            }
        })
    }

    fn identity<'a>(&'a self, _model: &'a str) -> Answer<'a, Identity> {
        Box::pin(async move {
            let props = self.http.get_json(&self.root("/props")).await?;
            let model = props["model_alias"]
                .as_str()
                .filter(|s| !s.is_empty())
                .or(props["model_path"].as_str())
                .unwrap_or("")
                .to_string();
            Ok(Identity {
                model,
                n_ctx: props["default_generation_settings"]["n_ctx"].as_u64(),
                slots: props["total_slots"].as_u64().map(|n| n as u32),
                build: props["build_info"].as_str().map(str::to_string),
            })
        })
    }

    fn count_tokens<'a>(&'a self, text: &'a str) -> Answer<'a, Option<u64>> {
        Box::pin(async move {
            let body = json!({"content": text, "add_special": true});
            let resp = self.http.post(&self.root("/tokenize"), &body).await?;
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| CallError::Cut(e.to_string()))?;
            let v: Value = serde_json::from_slice(&bytes)
                .map_err(|e| CallError::Malformed(format!("/tokenize: {e}")))?;
            Ok(v["tokens"].as_array().map(|t| t.len() as u64))
        })
    }
}
