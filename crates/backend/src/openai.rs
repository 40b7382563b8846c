//! OpenAI-compatible servers (vLLM, LM Studio, llama.cpp's `/v1`): `/v1/chat/completions`
//! streamed as server-sent events, `response_format` with a JSON schema, `/v1/models` for
//! presence. The chat streaming here is shared with the llama.cpp backend, which adds its own
//! fields to the same request and reads its `timings` from the same chunks.

use std::time::Instant;

use serde_json::{json, Map, Value};

use super::http::{clip, error_message, sampling_value, Http};
use super::stream::{Budget, Sse, SseDecoder};
use super::types::{Answer, Backend, Call, CallError, Health, Identity, OnToken, Reply, Timings};

pub struct OpenAi {
    http: Http,
}

impl OpenAi {
    pub fn new(http: Http) -> Self {
        OpenAi { http }
    }
}

/// The request body of a streamed chat completion.
pub fn chat_body(call: &Call) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), json!(call.model));
    body.insert(
        "messages".into(),
        json!([{"role": "user", "content": call.prompt}]),
    );
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    for (k, v) in &call.sampling {
        body.insert(k.clone(), sampling_value(*v));
    }
    if let Some(schema) = &call.schema {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": "answer", "strict": true, "schema": schema}}),
        );
    }
    body
}

/// Sends `call`'s chat completion (`body`) and reads its event stream to the end, within
/// the call's budget.
pub async fn stream_chat(
    http: &Http,
    url: &str,
    body: Map<String, Value>,
    on_token: OnToken<'_>,
    call: &Call,
) -> Result<Reply, CallError> {
    let mut budget = Budget::of(call);
    let body = &Value::Object(body);
    let started = Instant::now();
    let mut resp = http.post(url, body).await?;
    let mut dec = SseDecoder::default();
    let mut events = Vec::new();
    let mut text = String::new();
    let mut finish = None;
    let mut timings = None;
    let mut usage = None;
    let mut first_token = None;
    let mut tokens = 0u64;
    let mut done = false;
    loop {
        let chunk = http.chunk(&mut resp).await?;
        match &chunk {
            Some(c) => dec.push(c, &mut events)?,
            None => dec.finish(&mut events)?,
        }
        for ev in events.drain(..) {
            let data = match ev {
                Sse::Done => {
                    done = true;
                    continue;
                }
                Sse::Data(d) => d,
            };
            let v: Value = serde_json::from_str(&data)
                .map_err(|e| CallError::Malformed(format!("event `{}`: {e}", clip(&data))))?;
            if !v["error"].is_null() {
                return Err(CallError::Failed(error_message(data.as_bytes())));
            }
            // Before the piece: an answer cut at this piece keeps the prompt's timings.
            if v["timings"].is_object() {
                budget.note_timings(llama_timings(&v["timings"]));
            }
            if let Some(choice) = v["choices"].get(0) {
                if let Some(piece) = choice["delta"]["content"].as_str() {
                    if !piece.is_empty() {
                        first_token.get_or_insert_with(Instant::now);
                        if let Some(r) = budget.piece(&mut text, piece, &mut tokens, on_token) {
                            return Ok(r);
                        }
                    }
                }
                if let Some(f) = choice["finish_reason"].as_str() {
                    finish = Some(f.to_string());
                }
            }
            if v["timings"].is_object() {
                timings = Some(v["timings"].clone());
            }
            if v["usage"].is_object() {
                usage = Some(v["usage"].clone());
            }
        }
        if chunk.is_none() {
            break;
        }
    }
    if finish.is_none() {
        return Err(CallError::Cut(format!(
            "the stream ended after {tokens} tokens without a finish reason{}",
            if done { "" } else { " or [DONE]" }
        )));
    }
    let timings = match timings {
        Some(t) => llama_timings(&t),
        None => derived_timings(usage.as_ref(), tokens, started, first_token),
    };
    Ok(Reply {
        text,
        timings,
        finish,
    })
}

/// llama.cpp's `timings` object.
pub fn llama_timings(t: &Value) -> Timings {
    let n = |k: &str| t[k].as_f64().unwrap_or(0.0);
    Timings {
        prompt_n: n("prompt_n") as u64,
        cache_n: n("cache_n") as u64,
        predicted_n: n("predicted_n") as u64,
        prompt_ms: n("prompt_ms"),
        predicted_ms: n("predicted_ms"),
        prompt_per_second: n("prompt_per_second"),
        predicted_per_second: n("predicted_per_second"),
    }
}

/// Timings for servers that send none: token counts from `usage`, speeds from the clock.
fn derived_timings(
    usage: Option<&Value>,
    chunks: u64,
    started: Instant,
    first: Option<Instant>,
) -> Timings {
    let u = |k: &str| usage.and_then(|u| u[k].as_u64());
    let predicted_n = u("completion_tokens").unwrap_or(chunks);
    let cache_n = usage
        .and_then(|u| u["prompt_tokens_details"]["cached_tokens"].as_u64())
        .unwrap_or(0);
    let prompt_n = u("prompt_tokens").unwrap_or(0).saturating_sub(cache_n);
    let first = first.unwrap_or_else(Instant::now);
    let prompt_ms = first.duration_since(started).as_secs_f64() * 1000.0;
    let predicted_ms = first.elapsed().as_secs_f64() * 1000.0;
    let per_s = |n: u64, ms: f64| {
        if ms > 0.0 {
            n as f64 * 1000.0 / ms
        } else {
            0.0
        }
    };
    Timings {
        prompt_n,
        cache_n,
        predicted_n,
        prompt_ms,
        predicted_ms,
        prompt_per_second: per_s(prompt_n, prompt_ms),
        predicted_per_second: per_s(predicted_n, predicted_ms),
    }
}

impl Backend for OpenAi {
    fn chat<'a>(&'a self, call: &'a Call, on_token: OnToken<'a>) -> Answer<'a, Reply> {
        Box::pin(async move {
            let mut body = chat_body(call);
            if let Some(n) = body.remove("max_tokens") {
                body.insert("max_tokens".into(), n);
            }
            let url = self.http.url("/v1/chat/completions");
            stream_chat(&self.http, &url, body, on_token, call).await
        })
    }

    fn health(&self) -> Answer<'_, Health> {
        Box::pin(self.http.ready("/v1/models"))
    }

    fn identity<'a>(&'a self, model: &'a str) -> Answer<'a, Identity> {
        Box::pin(async move {
            let v = self.http.get_json(&self.http.url("/v1/models")).await?;
            let ids: Vec<&str> = v["data"]
                .as_array()
                .map(|a| a.iter().filter_map(|m| m["id"].as_str()).collect())
                .unwrap_or_default();
            if !ids.contains(&model) {
                return Err(CallError::Status {
                    code: 404,
                    message: format!(
                        "the server does not serve `{model}`; it serves: {}",
                        if ids.is_empty() {
                            "nothing".into()
                        } else {
                            ids.join(", ")
                        }
                    ),
                });
            }
            Ok(Identity {
                model: model.to_string(),
                n_ctx: None,
                slots: None,
                build: None,
            })
        })
    }

    fn count_tokens<'a>(&'a self, _text: &'a str) -> Answer<'a, Option<u64>> {
        Box::pin(async { Ok(None) })
    }
}
