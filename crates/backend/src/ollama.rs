//! Ollama: `/api/chat` streamed as newline-delimited JSON. A line `{"error": …}` is a failure
//! even under HTTP 200; the last line has `done: true`, `done_reason` and the counts and
//! durations (nanoseconds) that give the speeds. `format` carries the JSON schema,
//! `options.num_ctx` the context (Ollama's default is far smaller than a matter needs) and
//! `keep_alive` keeps the model resident between stages. `/api/tags` says whether the model
//! exists; `/api/ps` whether it is loaded.

use serde_json::{json, Map, Value};

use super::http::{clip, sampling_value, Http};
use super::stream::NdjsonDecoder;
use super::types::{Answer, Backend, Call, CallError, Health, Identity, OnToken, Reply, Timings};

pub struct Ollama {
    http: Http,
}

impl Ollama {
    pub fn new(http: Http) -> Self {
        Ollama { http }
    }
}

/// How long Ollama keeps the model loaded after a call.
pub const KEEP_ALIVE: &str = "30m";

pub fn chat_body(call: &Call) -> Value {
    let mut options = Map::new();
    options.insert("num_ctx".into(), json!(call.num_ctx));
    for (k, v) in &call.sampling {
        let key = if k == "max_tokens" {
            "num_predict"
        } else {
            k.as_str()
        };
        options.insert(key.into(), sampling_value(*v));
    }
    let mut body = json!({
        "model": call.model,
        "messages": [{"role": "user", "content": call.prompt}],
        "stream": true,
        "keep_alive": KEEP_ALIVE,
        "options": options,
    });
    if let Some(s) = &call.schema {
        body["format"] = s.clone();
    }
    body
}

fn timings(last: &Value) -> Timings {
    let n = |k: &str| last[k].as_f64().unwrap_or(0.0);
    let per_s = |count: f64, ns: f64| if ns > 0.0 { count / ns * 1e9 } else { 0.0 };
    Timings {
        prompt_n: n("prompt_eval_count") as u64,
        cache_n: 0,
        predicted_n: n("eval_count") as u64,
        prompt_ms: n("prompt_eval_duration") / 1e6,
        predicted_ms: n("eval_duration") / 1e6,
        prompt_per_second: per_s(n("prompt_eval_count"), n("prompt_eval_duration")),
        predicted_per_second: per_s(n("eval_count"), n("eval_duration")),
    }
}

impl Backend for Ollama {
    fn chat<'a>(&'a self, call: &'a Call, on_token: OnToken<'a>) -> Answer<'a, Reply> {
        Box::pin(async move {
            let mut resp = self
                .http
                .post(&self.http.url("/api/chat"), &chat_body(call))
                .await?;
            let mut dec = NdjsonDecoder::default();
            let mut lines = Vec::new();
            let mut text = String::new();
            let mut tokens = 0;
            let mut budget = super::stream::Budget::of(call);
            loop {
                let chunk = self.http.chunk(&mut resp).await?;
                match &chunk {
                    Some(c) => dec.push(c, &mut lines)?,
                    None => dec.finish(&mut lines)?,
                }
                for line in lines.drain(..) {
                    let v: Value = serde_json::from_str(&line).map_err(|e| {
                        CallError::Malformed(format!("line `{}`: {e}", clip(&line)))
                    })?;
                    if let Some(err) = v["error"].as_str() {
                        return Err(CallError::Failed(err.to_string()));
                    }
                    if let Some(piece) = v["message"]["content"].as_str() {
                        if !piece.is_empty() {
                            if let Some(r) = budget.piece(&mut text, piece, &mut tokens, on_token) {
                                return Ok(r);
                            }
                        }
                    }
                    if v["done"].as_bool() == Some(true) {
                        return Ok(Reply {
                            text,
                            timings: timings(&v),
                            finish: Some(v["done_reason"].as_str().unwrap_or("stop").to_string()),
                        });
                    }
                }
                if chunk.is_none() {
                    return Err(CallError::Cut(format!(
                        "the stream ended after {tokens} tokens without a line saying done"
                    )));
                }
            }
        })
    }

    fn health(&self) -> Answer<'_, Health> {
        Box::pin(self.http.ready("/api/version"))
    }

    fn identity<'a>(&'a self, model: &'a str) -> Answer<'a, Identity> {
        Box::pin(async move {
            let tags = self.http.get_json(&self.http.url("/api/tags")).await?;
            let want = |name: &str| name == model || name == format!("{model}:latest");
            let found = tags["models"].as_array().and_then(|ms| {
                ms.iter().find(|m| {
                    m["name"].as_str().is_some_and(want) || m["model"].as_str().is_some_and(want)
                })
            });
            let Some(found) = found else {
                return Err(CallError::Status {
                    code: 404,
                    message: format!(
                        "model `{model}` is not on this Ollama server; pull it there with `ollama pull {model}`"
                    ),
                });
            };
            let digest = found["digest"].as_str().unwrap_or("");
            Ok(Identity {
                model: if digest.is_empty() {
                    model.to_string()
                } else {
                    format!("{model}@{}", &digest[..digest.len().min(12)])
                },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_from_nanoseconds() {
        let t = timings(
            &json!({"prompt_eval_count": 100, "prompt_eval_duration": 500_000_000u64,
            "eval_count": 40, "eval_duration": 1_000_000_000u64}),
        );
        assert_eq!(t.prompt_per_second, 200.0);
        assert_eq!(t.predicted_per_second, 40.0);
        assert_eq!(t.predicted_ms, 1000.0);
    }

    #[test]
    fn request_carries_context_schema_and_keep_alive() {
        let call = Call {
            stage: "s".into(),
            model: "gemma4:26b".into(),
            prompt: "p".into(),
            schema: Some(json!({"type": "object"})),
            sampling: [
                ("max_tokens".to_string(), 64.0),
                ("temperature".to_string(), 0.0),
            ]
            .into(),
            num_ctx: 32768,
            slot: None,
            timeout: std::time::Duration::from_secs(1),
            measure: false,
        };
        let b = chat_body(&call);
        assert_eq!(b["options"]["num_ctx"], 32768);
        assert_eq!(b["options"]["num_predict"], 64);
        assert_eq!(b["format"]["type"], "object");
        assert_eq!(b["keep_alive"], KEEP_ALIVE);
    }
}
