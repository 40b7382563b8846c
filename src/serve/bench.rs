//! `bench`: prompt and decode speed of every model, against its `min_decode`.

use super::*;

/// One model's measured speeds.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    pub model: String,
    pub pool: String,
    pub runs: usize,
    pub prompt_tokens: u64,
    pub prompt_per_second: f64,
    pub decode_per_second: f64,
    pub min_decode: Option<f64>,
    pub ok: bool,
    pub error: Option<String>,
}

/// The fixed prompt: about 512 tokens of plain English on most tokenizers.
pub(super) fn bench_prompt(run: usize) -> String {
    let para = "The tenant gave written notice of the broken heating on the third of March, and the landlord did not repair it within the thirty days the lease allows. ";
    format!(
        "Run {run}. {}\nSummarise the paragraph above in one sentence.",
        para.repeat(16)
    )
}

pub async fn bench(
    plan: &Plan,
    store: &Path,
    endpoints: &BTreeMap<String, String>,
    runs: usize,
    limits: &Limits,
) -> Vec<Bench> {
    let mut out = Vec::new();
    for m in plan.models.iter() {
        let Some(pool) = plan.pools.iter().find(|p| p.name == m.pool) else {
            continue;
        };
        let url = endpoints.get(&pool.name).unwrap_or(&pool.endpoint).clone();
        let mut r = Bench {
            model: m.name.clone(),
            pool: pool.name.clone(),
            runs,
            prompt_tokens: 0,
            prompt_per_second: 0.0,
            decode_per_second: 0.0,
            min_decode: m.min_decode,
            ok: false,
            error: None,
        };
        let backend: Box<dyn Backend> =
            match backend::connect_with_key(pool.server, &url, limits, pool.api_key_env.as_deref())
            {
                Ok(b) => b,
                Err(e) => {
                    r.error = Some(e.to_string());
                    out.push(r);
                    continue;
                }
            };
        let (mut pp, mut dec) = (Vec::new(), Vec::new());
        for i in 0..runs.max(1) {
            let call = Call {
                stage: "bench".into(),
                model: match &m.weights {
                    Weights::Tag { tag } => tag.clone(),
                    Weights::Gguf { .. } => m.name.clone(),
                },
                prompt: bench_prompt(i),
                schema: None,
                sampling: [
                    ("temperature".to_string(), 0.0),
                    ("max_tokens".to_string(), 128.0),
                ]
                .into(),
                num_ctx: m.ctx,
                slot: None,
                timeout: Duration::from_secs(600),
            };
            match backend::call(backend.as_ref(), &call, limits, &|_| {}, &|_| {}).await {
                Ok((reply, _)) => {
                    let t = reply.timings;
                    r.prompt_tokens = t.prompt_n + t.cache_n;
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
    // Kept for `status`: the last measured decode speed of each model.
    let mut last: serde_json::Map<String, Value> = std::fs::read(store.join("bench.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    for r in out.iter().filter(|r| r.error.is_none()) {
        last.insert(r.model.clone(), json!({"decode_per_second": r.decode_per_second, "prompt_per_second": r.prompt_per_second}));
    }
    if std::fs::create_dir_all(store).is_ok() {
        let _ = std::fs::write(
            store.join("bench.json"),
            serde_json::to_vec_pretty(&last).unwrap_or_default(),
        );
    }
    out
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}
