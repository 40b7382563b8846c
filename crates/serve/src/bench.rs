//! `bench`: prompt and decode speed of every model, against its `min_decode`; and the speeds
//! `plan` shows beside its predictions.
//!
//! Prompt speed is measured on a prompt no server has seen (a unique first line) with the
//! prompt cache off, so a second run measures the whole prompt again rather than the one
//! token a cache would leave; decode speed over a fixed number of tokens (llama.cpp is told
//! to ignore the end of text). Each model's last measurement is kept in the store
//! (`bench.json`) with the server's build and the plan's prediction, and calibrates the
//! prediction for its pool.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use crate::backend::endpoint::Overrides;
use crate::backend::{self, Backend, Call, Limits};
use crate::plan::workflow::Weights;
use crate::plan::Plan;

use super::served::served;

/// Tokens decoded per measurement.
pub const DECODE_TOKENS: u64 = 128;

/// One model's measured speeds.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    pub model: String,
    pub pool: String,
    pub runs: usize,
    /// Prompt tokens evaluated (none from a cache).
    pub prompt_tokens: u64,
    /// Prompt tokens the server took from its cache (0 unless the server ignores the request).
    pub cached_tokens: u64,
    pub prompt_per_second: f64,
    pub decode_tokens: u64,
    pub decode_per_second: f64,
    pub min_decode: Option<f64>,
    /// The plan's prediction, uncalibrated.
    pub predicted: Option<f64>,
    /// The server's build, as it reports it.
    pub build: Option<String>,
    pub ok: bool,
    pub error: Option<String>,
}

/// A prompt of about 512 tokens of plain English that starts with `nonce`, so no server has
/// it cached.
pub(super) fn bench_prompt(nonce: &str) -> String {
    let para = "The tenant gave written notice of the broken heating on the third of March, and the landlord did not repair it within the thirty days the lease allows. ";
    format!(
        "Measurement {nonce}.\n{}\nSummarise the paragraph above in one sentence.",
        para.repeat(16)
    )
}

fn nonce(i: usize) -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    blake3::hash(format!("{}-{}-{i}-{n}", now.as_nanos(), std::process::id()).as_bytes()).to_hex()
        [..16]
        .to_string()
}

pub async fn bench(
    plan: &Plan,
    store: &Path,
    endpoints: &Overrides,
    runs: usize,
    limits: &Limits,
) -> Vec<Bench> {
    let mut out = Vec::new();
    for (m, pool, kind, url) in served(plan, endpoints) {
        let mut r = Bench {
            model: m.name.clone(),
            pool: pool.name.clone(),
            runs,
            prompt_tokens: 0,
            cached_tokens: 0,
            prompt_per_second: 0.0,
            decode_tokens: 0,
            decode_per_second: 0.0,
            min_decode: m.min_decode,
            predicted: m.decode.as_ref().map(|d| d.expected),
            build: None,
            ok: false,
            error: None,
        };
        let backend: Box<dyn Backend> =
            match backend::connect_with_key(kind, &url, limits, pool.api_key_env.as_deref()) {
                Ok(b) => b,
                Err(e) => {
                    r.error = Some(e.to_string());
                    out.push(r);
                    continue;
                }
            };
        let served = match &m.weights {
            Weights::Tag { tag } => tag.clone(),
            Weights::Gguf { .. } => m.name.clone(),
        };
        if let Ok(id) = backend.identity(&served).await {
            r.build = id.build;
        }
        let (mut pp, mut dec) = (Vec::new(), Vec::new());
        for i in 0..runs.max(1) {
            let call = Call {
                stage: "bench".into(),
                model: served.clone(),
                prompt: bench_prompt(&nonce(i)),
                schema: None,
                sampling: [
                    ("temperature".to_string(), 0.0),
                    ("max_tokens".to_string(), DECODE_TOKENS as f64),
                ]
                .into(),
                num_ctx: m.ctx,
                slot: None,
                timeout: Duration::from_secs(600),
                measure: true,
            };
            match backend::call(backend.as_ref(), &call, limits, &|_| {}, &|_| {}).await {
                Ok((reply, _)) => {
                    let t = reply.timings;
                    r.prompt_tokens = t.prompt_n;
                    r.cached_tokens = r.cached_tokens.max(t.cache_n);
                    r.decode_tokens = t.predicted_n;
                    pp.push(t.prompt_per_second);
                    dec.push(t.predicted_per_second);
                }
                Err((e, _)) => {
                    r.error = Some(format!("{e}"));
                    break;
                }
            }
        }
        if r.error.is_none() {
            r.prompt_per_second = median(pp);
            r.decode_per_second = median(dec);
            r.ok = m.min_decode.is_none_or(|f| r.decode_per_second >= f);
        }
        out.push(r);
    }
    // Kept for `status` and `plan`: the last measurement of each model.
    let mut last = read_benched(store);
    for r in out.iter().filter(|r| r.error.is_none()) {
        last.insert(
            r.model.clone(),
            json!({
                "pool": r.pool,
                "decode_per_second": r.decode_per_second,
                "prompt_per_second": r.prompt_per_second,
                "prompt_tokens": r.prompt_tokens,
                "decode_tokens": r.decode_tokens,
                "predicted": r.predicted,
                "build": r.build,
                "measured": crate::store::now(),
            }),
        );
    }
    if std::fs::create_dir_all(store).is_ok() {
        let _ = crate::atomic::write(
            &store.join("bench.json"),
            &serde_json::to_vec_pretty(&last).unwrap_or_default(),
        );
    }
    out
}

fn read_benched(store: &Path) -> serde_json::Map<String, Value> {
    std::fs::read(store.join("bench.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// A model's predicted and measured decode speeds, side by side.
#[derive(Clone, Debug, Serialize)]
pub struct Speed {
    pub model: String,
    pub pool: String,
    pub min_decode: Option<f64>,
    /// From the pool's bandwidth, with the default efficiency.
    pub predicted: Option<f64>,
    /// The prediction times the pool's calibration (measured ÷ predicted, median over the
    /// pool's measured models), when the pool has been measured.
    pub calibrated: Option<f64>,
    pub measured: Option<f64>,
    pub build: Option<String>,
}

/// Every model's predicted, calibrated and last measured decode speed.
pub fn speeds(plan: &Plan, store: &Path) -> Vec<Speed> {
    let last = read_benched(store);
    let measured = |m: &str| last.get(m).and_then(|v| v["decode_per_second"].as_f64());
    let mut ratios: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for m in plan.models.iter() {
        if let (Some(d), Some(x)) = (&m.decode, measured(&m.name)) {
            if d.expected > 0.0 && x > 0.0 {
                ratios
                    .entry(m.pool.as_str())
                    .or_default()
                    .push(x / d.expected);
            }
        }
    }
    let factor: BTreeMap<&str, f64> = ratios.into_iter().map(|(p, v)| (p, median(v))).collect();
    plan.models
        .iter()
        .map(|m| {
            let predicted = m.decode.as_ref().map(|d| d.expected);
            Speed {
                model: m.name.clone(),
                pool: m.pool.clone(),
                min_decode: m.min_decode,
                predicted,
                calibrated: predicted
                    .zip(factor.get(m.pool.as_str()))
                    .map(|(p, f)| p * f),
                measured: measured(&m.name),
                build: last
                    .get(&m.name)
                    .and_then(|v| v["build"].as_str())
                    .map(str::to_string),
            }
        })
        .collect()
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_starts_differently() {
        let (a, b) = (bench_prompt(&nonce(0)), bench_prompt(&nonce(0)));
        assert_ne!(a.lines().next(), b.lines().next());
        assert_eq!(a.lines().nth(1), b.lines().nth(1));
    }
}
