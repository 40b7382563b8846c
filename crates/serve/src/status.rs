//! `status`: every pool, whether its server answers, what it serves, and how busy it is.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::backend::endpoint::Overrides;
use crate::backend::{self, Health, Limits};
use crate::plan::workflow::{ServerKind, Weights};
use crate::plan::Plan;

use super::served::served;

/// One line of `status`.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    pub pool: String,
    pub model: String,
    pub server: String,
    pub url: String,
    /// up, loading, down, or wrong model.
    pub state: String,
    pub detail: String,
    pub served: Option<String>,
    pub ctx: Option<u64>,
    pub slots: Option<u32>,
    pub slots_busy: Option<u32>,
    /// tok/s from the last `lexrun bench` of this model.
    pub last_decode: Option<f64>,
    /// The server's build, as it reports it.
    pub build: Option<String>,
}

pub async fn status(
    plan: &Plan,
    store: &Path,
    endpoints: &Overrides,
    limits: &Limits,
) -> Vec<Status> {
    let benched: Value = std::fs::read(store.join("bench.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let quick = Limits {
        retries: 0,
        ..limits.clone()
    };
    let mut out = Vec::new();
    for (m, pool, kind, url) in served(plan, endpoints) {
        let mut st = Status {
            pool: pool.name.clone(),
            model: m.name.clone(),
            server: kind.as_str().into(),
            url: crate::credentials::url(&url),
            state: "down".into(),
            detail: String::new(),
            served: None,
            ctx: None,
            slots: None,
            slots_busy: None,
            last_decode: benched[&m.name]["decode_per_second"].as_f64(),
            build: None,
        };
        let Ok(b) = backend::connect_with_key(kind, &url, &quick, pool.api_key_env.as_deref())
        else {
            st.detail = "not a usable URL".into();
            out.push(st);
            continue;
        };
        let served_name = match &m.weights {
            Weights::Tag { tag } => tag.clone(),
            Weights::Gguf { .. } => m.name.clone(),
        };
        match b.health().await {
            Ok(Health::Loading(msg)) => {
                st.state = "loading".into();
                st.detail = msg;
            }
            Err(e) => st.detail = e.to_string(),
            Ok(Health::Ready) => match b.identity(&served_name).await {
                Ok(id) => {
                    st.state = "up".into();
                    st.ctx = id.n_ctx;
                    st.slots = id.slots;
                    if let Weights::Gguf { path, .. } = &m.weights {
                        let want = Path::new(path)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned());
                        if want.is_some_and(|w| !id.model.ends_with(&w)) {
                            st.state = "wrong model".into();
                            st.detail = format!("serves `{}`, not `{path}`", id.model);
                        }
                    }
                    if let Some(n) = id.n_ctx.filter(|n| *n != m.ctx && st.state == "up") {
                        st.state = "ctx differs".into();
                        st.detail = format!("context {n} per slot, declared {}", m.ctx);
                    }
                    if let (Some(min), ServerKind::LlamaCpp) = (&pool.min_build, kind) {
                        if let Some(why) = backend::endpoint::build_refusal(
                            min,
                            &pool.name,
                            &url,
                            id.build.as_deref(),
                        ) {
                            st.state = "old build".into();
                            st.detail = why;
                        }
                    }
                    st.build = id.build.clone();
                    st.served = Some(id.model);
                    if kind == ServerKind::LlamaCpp {
                        st.slots_busy = slots_busy(&url, &quick).await;
                    }
                }
                Err(e) => {
                    st.state = if kind == ServerKind::Ollama {
                        "wrong model".into()
                    } else {
                        "down".into()
                    };
                    st.detail = e.to_string();
                }
            },
        }
        out.push(st);
    }
    out
}

pub(super) async fn slots_busy(url: &str, limits: &Limits) -> Option<u32> {
    let http = backend::Http::new(url, limits).ok()?;
    let v = http
        .get_json(&format!("{}/slots", http.origin()))
        .await
        .ok()?;
    Some(
        v.as_array()?
            .iter()
            .filter(|s| s["is_processing"].as_bool() == Some(true))
            .count() as u32,
    )
}
