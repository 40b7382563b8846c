//! The plan in words: what will run where, in what order, and what must be proven.

use std::fmt::Write;

use super::types::Plan;
use super::workflow::{write_record, Link, Model, Step, StepKind, Weights};

const GIB: f64 = (1u64 << 30) as f64;

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / GIB)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(super) fn render(p: &Plan) -> String {
    let mut s = String::new();
    header(&mut s, p);
    pools(&mut s, p);
    if !p.models.is_empty() {
        let _ = writeln!(s, "\nModels (each stays loaded on its pool)");
        for m in &p.models {
            model(&mut s, m, p);
        }
    }

    if !p.sources.is_empty() {
        let _ = writeln!(s, "\nEvidence");
        for src in &p.sources {
            let _ = writeln!(s, "  + sources {}: {}", src.name, src.files.join(", "));
            if let Some(d) = &src.description {
                let _ = writeln!(s, "      {d}");
            }
            if let Some(b) = &src.bates {
                let _ = writeln!(
                    s,
                    "      Bates numbers from {}{:0w$}{}",
                    b.prefix,
                    b.start,
                    b.suffix,
                    w = b.width as usize
                );
            }
        }
    }

    if !p.steps.is_empty() {
        let _ = writeln!(s, "\nSteps, in the order they run");
        for (i, st) in p.steps.iter().enumerate() {
            step(&mut s, i + 1, st, p);
        }
    }

    verification(&mut s, p);
    if !p.outputs.is_empty() {
        let _ = writeln!(s, "\nOutputs");
        for o in &p.outputs {
            let appendix = o
                .appendix
                .as_ref()
                .map_or(String::new(), |a| format!(" with the {a} report appended"));
            let layout = match o.layout() {
                l if l != "pleading" && matches!(o.format.as_str(), "docx" | "pdf") => {
                    format!(", laid out as a {l}")
                }
                _ => String::new(),
            };
            let unverified = match o.unverified {
                true => ", unverified: marked \"not verified\"",
                false => "",
            };
            let _ = writeln!(
                s,
                "  + {} ← {} ({}{layout}){appendix}{unverified}",
                o.path, o.from, o.format
            );
        }
    }
    s
}

/// The workflow's name and description, the plan's hash and counts, its matter and ledger.
fn header(s: &mut String, p: &Plan) {
    let w = &p.workflow;
    let _ = writeln!(
        s,
        "Workflow {}{}",
        w.name,
        if w.description.is_empty() {
            String::new()
        } else {
            format!(" — {}", w.description)
        }
    );
    let _ = writeln!(
        s,
        "Plan {} · {} · {} · {} · {} · {}",
        &p.hash[..12],
        plural(p.pools.len(), "pool", "pools"),
        plural(p.models.len(), "model", "models"),
        plural(p.steps.len(), "step", "steps"),
        plural(p.verify.len(), "verification", "verifications"),
        plural(p.outputs.len(), "output", "outputs"),
    );
    if let Some(m) = &w.matter {
        let _ = writeln!(s, "Default matter folder: {m}");
    }
    if let Some(l) = &w.ledger {
        let _ = writeln!(s, "Shared ledger: {l}");
    }
}

/// The hardware pools: host, GPUs, link, memory and compute, and what each serves.
fn pools(s: &mut String, p: &Plan) {
    if !p.pools.is_empty() {
        let _ = writeln!(s, "\nHardware pools");
        for pool in &p.pools {
            let mut facts = vec![format!("host {}", pool.host)];
            if pool.gpus.is_empty() {
                facts.push("no GPUs declared".into());
            } else {
                let ids: Vec<String> = pool.gpus.iter().map(u32::to_string).collect();
                facts.push(format!(
                    "GPU{} {}",
                    if ids.len() == 1 { "" } else { "s" },
                    ids.join(",")
                ));
            }
            match pool.link {
                Some(Link::Nvlink) => facts.push("NVLink".into()),
                Some(Link::Pcie) => facts.push("PCIe".into()),
                None => {}
            }
            if !pool.vram.is_empty() {
                facts.push(vram_sizes(&pool.vram));
            }
            if let Some(c) = pool.compute {
                facts.push(format!("compute {c:.1}"));
            }
            let _ = writeln!(s, "  + pool {}: {}", pool.name, facts.join(" · "));
            let _ = writeln!(
                s,
                "      serves {} at {} · {}",
                pool.server.as_str(),
                crate::credentials::url(&pool.endpoint),
                plural(
                    pool.slots as usize,
                    "request at a time",
                    "requests at a time"
                )
            );
        }
    }
}

/// A pool's GPU memory, equal sizes in a row counted once: `2 × 24.0 GiB + 48.0 GiB`.
fn vram_sizes(vram: &[u64]) -> String {
    let mut sizes: Vec<String> = Vec::new();
    let mut i = 0;
    while i < vram.len() {
        let run = vram[i..].iter().take_while(|v| **v == vram[i]).count();
        sizes.push(if run > 1 {
            format!("{run} × {}", gib(vram[i]))
        } else {
            gib(vram[i])
        });
        i += run;
    }
    sizes.join(" + ")
}

/// Each verified stage: what it is checked against, its rules, judge and revisions.
fn verification(s: &mut String, p: &Plan) {
    if !p.verify.is_empty() {
        let _ = writeln!(
            s,
            "\nVerification (unsupported claims are handled as shown)"
        );
        for v in &p.verify {
            let _ = writeln!(
                s,
                "  {} is checked against {}",
                v.stage,
                v.against.join(", ")
            );
            for r in &v.rules {
                let from = if r.from == "inline" {
                    String::new()
                } else {
                    format!("  (from {})", r.from)
                };
                let _ = writeln!(
                    s,
                    "      {} must {} — else {}{from}",
                    r.claims.plural(),
                    r.must,
                    r.policy.as_str()
                );
            }
            if let Some(j) = &v.judge {
                let _ = writeln!(s, "      propositions judged by model {j}");
            }
            if !v.ignore_prefixes.is_empty() {
                let _ = writeln!(
                    s,
                    "      not Bates numbers: identifiers prefixed {}",
                    v.ignore_prefixes.join(", ")
                );
            }
            if !v.allow_reporters.is_empty() {
                let _ = writeln!(
                    s,
                    "      reporters accepted beyond the catalogue: {}",
                    v.allow_reporters.join(", ")
                );
            }
            if v.rules.iter().any(|r| r.policy.as_str() == "revise") {
                let _ = writeln!(
                    s,
                    "      revision: at most {}",
                    plural(v.max_rounds as usize, "round", "rounds")
                );
            }
        }
    }
}

fn model(s: &mut String, m: &Model, p: &Plan) {
    let what = match &m.weights {
        Weights::Gguf {
            path,
            present: true,
        } => format!("GGUF {path}"),
        Weights::Gguf {
            path,
            present: false,
        } => format!("GGUF {path} (not on this machine)"),
        Weights::Tag { tag } => format!("served as \"{tag}\""),
    };
    let _ = writeln!(s, "  + model {} on {}: {what}", m.name, m.pool);
    let mut facts = vec![
        format!("context {}", m.ctx),
        format!("KV cache {}/{}", m.kv_k, m.kv_v),
    ];
    facts.push(format!(
        "flash attention {}",
        if m.flash_attn { "on" } else { "off" }
    ));
    if let Some(d) = m.min_decode {
        facts.push(format!("must decode ≥ {d} tok/s"));
    }
    let _ = writeln!(s, "      {}", facts.join(" · "));
    if let Some(sh) = &m.shape {
        let mut shape = format!(
            "{} layers, {} KV heads in all, head size {}/{}",
            sh.layers, sh.kv_heads_total, sh.key_length, sh.value_length
        );
        if let (Some(e), Some(u)) = (sh.experts, sh.experts_used) {
            shape.push_str(&format!(", {u} of {e} experts active"));
        }
        if let Some(a) = &sh.architecture {
            shape = format!("{a}: {shape}");
        }
        let _ = writeln!(s, "      shape ({}): {shape}", sh.from);
    }
    if !m.sampling.is_empty() {
        let parts: Vec<String> = m.sampling.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(s, "      sampling: {}", parts.join(" · "));
    }
    let pool = p.pools.iter().find(|x| x.name == m.pool);
    let total: u64 = pool.map_or(0, |x| x.vram.iter().sum());
    if let Some(wb) = m.weight_bytes {
        let kv = m.kv_bytes.map_or_else(
            || "KV cache unknown".to_string(),
            |k| format!("{} KV cache", gib(k)),
        );
        let need = wb + m.kv_bytes.unwrap_or(0);
        let of = if total > 0 {
            format!(
                " = {} of {} ({:.0}%)",
                gib(need),
                gib(total),
                need as f64 * 100.0 / total as f64
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "      memory: {} weights ({}) + {kv}{of}",
            gib(wb),
            m.weight_bytes_from
        );
    }
    if let Some(d) = &m.decode {
        let _ = writeln!(
            s,
            "      decode: ~{:.0} tok/s predicted (at most {:.0}; {:.1} GB read per token){}",
            d.expected,
            d.ceiling,
            d.bytes_per_token as f64 / 1e9,
            match m.min_decode {
                Some(f) if d.expected < f => format!(", UNDER min_decode {f}"),
                _ => String::new(),
            }
        );
    }
}

fn step(s: &mut String, n: usize, st: &Step, p: &Plan) {
    match &st.kind {
        StepKind::Model(m) => {
            let pool = p
                .models
                .iter()
                .find(|x| x.name == m.model)
                .map_or("?", |x| x.pool.as_str());
            let _ = writeln!(s, "  {n}. {} — model {} on {pool}", st.name, m.model);
            if !st.after.is_empty() {
                let _ = writeln!(s, "       after {}", st.after.join(", "));
            }
            if let Some(c) = &st.when {
                let _ = writeln!(s, "       runs only when {c}");
            }
            if !st.reads.is_empty() {
                let _ = writeln!(s, "       reads {}", st.reads.join(", "));
            }
            let lines = m.prompt.text.lines().count();
            let _ = writeln!(
                s,
                "       prompt {}, {}",
                m.prompt.origin,
                plural(lines, "line", "lines")
            );
            if let Some(r) = &m.returns {
                let mut rec = String::new();
                let _ = write_record(&mut rec, r);
                let _ = writeln!(s, "       answers {rec}");
            }
            if let Some(c) = &m.stop_when {
                let _ = writeln!(s, "       stops the workflow when {c}");
            }
            if let Some(r) = &m.revise {
                let _ = writeln!(
                    s,
                    "       sends {} back for revision until {}, at most {}",
                    r.target,
                    r.until,
                    plural(r.max_rounds as usize, "round", "rounds")
                );
            }
            let overrides: Vec<String> = m
                .sampling
                .iter()
                .filter(|(k, v)| {
                    k.as_str() != "max_tokens"
                        && p.models
                            .iter()
                            .find(|x| x.name == m.model)
                            .and_then(|x| x.sampling.get(*k))
                            != Some(v)
                })
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            if !overrides.is_empty() {
                let _ = writeln!(
                    s,
                    "       sampling for this stage: {}",
                    overrides.join(" · ")
                );
            }
            if let Some(n) = m.sampling.get("max_tokens") {
                let _ = writeln!(s, "       writes at most {n} tokens ({})", m.cap.describe());
            }
            if let Some(t) = m.timeout_ms {
                let _ = writeln!(s, "       times out after {}", duration(t));
            }
        }
        StepKind::Tool(t) if t.production.is_some() => {
            let _ = writeln!(s, "  {n}. {} — production on CPU", st.name);
            if !st.after.is_empty() {
                let _ = writeln!(s, "       after {}", st.after.join(", "));
            }
            let _ = writeln!(s, "       reads {}", st.reads.join(", "));
            for line in t
                .production
                .as_ref()
                .map(|p| p.describe())
                .unwrap_or_default()
            {
                let _ = writeln!(s, "       {line}");
            }
        }
        StepKind::Tool(t) => {
            let _ = writeln!(s, "  {n}. {} — {} tool on CPU", st.name, t.tool);
            if !st.after.is_empty() {
                let _ = writeln!(s, "       after {}", st.after.join(", "));
            }
            if !st.reads.is_empty() {
                let _ = writeln!(s, "       reads {}", st.reads.join(", "));
            }
            if !t.options.is_empty() {
                let parts: Vec<String> =
                    t.options.iter().map(|(k, v)| format!("{k} {v}")).collect();
                let _ = writeln!(s, "       with {}", parts.join(" · "));
            }
            if st.evidence {
                let _ = writeln!(s, "       its files remain evidence");
            }
        }
    }
}

fn duration(ms: u64) -> String {
    match ms {
        m if m % 3_600_000 == 0 => format!("{} h", m / 3_600_000),
        m if m % 60_000 == 0 => format!("{} min", m / 60_000),
        m if m % 1000 == 0 => format!("{} s", m / 1000),
        m => format!("{m} ms"),
    }
}
