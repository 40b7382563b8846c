//! Models against the hardware they are declared on: whether each fits its pool's memory, and
//! the units and cache types the pool and model checks (`pools`, `models`) share.

use std::collections::HashMap;

use super::context::{Cx, Decl};
use crate::diagnostic::{Code, Diagnostic, FileId};
use crate::plan::workflow::{Model, Pool};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

pub(crate) const GIB: f64 = (1u64 << 30) as f64;

pub(crate) fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / GIB)
}

/// Bytes per element of the cache types llama.cpp accepts for `-ctk`/`-ctv`.
pub(crate) fn cache_type_bytes(t: &str) -> Option<f64> {
    Some(match t {
        "f32" => 4.0,
        "f16" | "bf16" => 2.0,
        "q8_0" => 34.0 / 32.0,
        "q5_1" => 24.0 / 32.0,
        "q5_0" => 22.0 / 32.0,
        "q4_1" => 20.0 / 32.0,
        "q4_0" | "iq4_nl" => 18.0 / 32.0,
        _ => return None,
    })
}

pub(crate) const CACHE_TYPES: &[&str] = &[
    "f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl",
];

pub(crate) fn is_quantized(t: &str) -> bool {
    !matches!(t, "f32" | "f16" | "bf16")
}

pub(crate) fn bad_value(
    file: FileId,
    name: &ast::Name,
    what: &str,
    allowed: &[&str],
) -> Diagnostic {
    let d = Diagnostic::new(
        Code::InvalidValue,
        format!("`{}` is not a {what}", name.node),
    )
    .in_file(file)
    .label(name.span, "");
    match did_you_mean(&name.node, allowed.iter().copied()) {
        Some(s) => d.help(format!(
            "did you mean `{s}`? ({what}s: {})",
            allowed.join(", ")
        )),
        None => d.help(format!("{what}s: {}", allowed.join(", "))),
    }
}

/// Sum of weights and KV cache of the models on each pool against its memory.
pub(crate) fn fit(cx: &mut Cx, pools: &[Pool], models: &[Model]) {
    let mut by_pool: HashMap<&str, Vec<&Model>> = HashMap::new();
    for m in models {
        by_pool.entry(m.pool.as_str()).or_default().push(m);
    }
    for p in pools {
        let Some((pf, pd)) = cx.names.get(&p.name).and_then(|e| match e.decl {
            Decl::Pool(d) => Some((&e.file, d)),
            _ => None,
        }) else {
            continue;
        };
        let on: Vec<&Model> = by_pool.remove(p.name.as_str()).unwrap_or_default();
        if on.is_empty() {
            cx.error(
                Diagnostic::new(
                    Code::UnusedPool,
                    format!("no model runs on pool `{}`", p.name),
                )
                .in_file(*pf)
                .label(pd.name.span, "unused")
                .help("declare a model `on` this pool, or remove the pool"),
            );
            continue;
        }
        if p.vram.is_empty() {
            continue;
        }
        let total: u64 = p.vram.iter().sum();
        let need: u64 = on
            .iter()
            .map(|m| m.weight_bytes.unwrap_or(0) + m.kv_bytes.unwrap_or(0))
            .sum();
        let parts: Vec<String> = on
            .iter()
            .map(|m| {
                format!(
                    "`{}` {} weights + {} KV cache",
                    m.name,
                    gib(m.weight_bytes.unwrap_or(0)),
                    m.kv_bytes.map_or_else(|| "unknown".to_string(), gib)
                )
            })
            .collect();
        let first_model = on.first().and_then(|m| {
            cx.names.get(&m.name).and_then(|e| match e.decl {
                Decl::Model(d) => Some((&e.file, d)),
                _ => None,
            })
        });
        let Some((mf, md)) = first_model else {
            continue;
        };
        if need > total {
            let mut d = Diagnostic::new(
                Code::VramExceeded,
                format!(
                    "the models on pool `{}` need {} but its GPUs have {}",
                    p.name,
                    gib(need),
                    gib(total)
                ),
            )
            .in_file(*mf)
            .label(md.name.span, format!("needs {}", gib(need)));
            if pf == mf {
                if let Some(v) = &pd.vram {
                    d = d.label(v.span, format!("{} in all", gib(total)));
                }
            }
            cx.error(d.help(format!(
                "{}; lower `ctx`, quantize the KV cache (`kv q8_0` with `flash_attn on`), use a smaller quantisation, or move a model to another pool",
                parts.join("; ")
            )));
        } else if need as f64 > total as f64 * 0.9 {
            cx.error(
                Diagnostic::new(
                    Code::VramTight,
                    format!("the models on pool `{}` fill {:.0}% of its memory", p.name, need as f64 * 100.0 / total as f64),
                )
                .in_file(*mf)
                .label(md.name.span, format!("{} of {}", gib(need), gib(total)))
                .help(format!(
                    "{}; llama.cpp also needs compute buffers (often 1–3 GiB per GPU), so this may not load",
                    parts.join("; ")
                )),
            );
        }
    }
}
