//! Models: weights (GGUF headers or declared sizes), context and KV cache settings, sampling,
//! and GPUs too old for the kernels a model needs.

use std::collections::{BTreeMap, HashMap};

use camino::Utf8PathBuf;

use super::context::{Cx, Decl, Kind};
use super::hardware::{bad_value, cache_type_bytes, is_quantized, CACHE_TYPES};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::gguf;
use crate::plan::workflow::{Decode, Model, Pool, ServerKind, Shape, Weights};
use crate::syntax::ast;

/// Every declared model, checked against its pool; the models that can be served.
pub(crate) fn models(cx: &mut Cx, pools: &[Pool]) -> Vec<Model> {
    let pool_by_name: HashMap<&str, &Pool> = pools.iter().map(|p| (p.name.as_str(), p)).collect();
    let mut out = Vec::new();
    for e in cx.decls(Kind::Model) {
        let Decl::Model(m) = e.decl else {
            continue;
        };
        let pool = pool_by_name.get(m.pool.node.as_str()).copied();
        out.extend(model(cx, e.file, e.module, m, pool));
    }
    out
}

/// The weights a model names, where they are written, and the file's path when it is one.
type Named = (Weights, Span, Option<Utf8PathBuf>);

/// Whether any of the settings `keys` of the model did not parse (their error is the root).
fn broken(m: &ast::ModelDecl, keys: &[&str]) -> bool {
    keys.iter().any(|k| ast::is_broken(&m.broken, k))
}

/// Checks one model, its settings in the order they are reported; `None` when its pool or
/// weights are missing.
fn model(
    cx: &mut Cx,
    f: FileId,
    module: usize,
    m: &ast::ModelDecl,
    pool: Option<&Pool>,
) -> Option<Model> {
    let pool_entry = cx.lookup(&m.pool, f, &[Kind::Pool]);
    let weights = weights(cx, f, module, m);
    if let (Some((w, span, _)), Some(p)) = (&weights, pool) {
        server_match(cx, f, m, w, *span, p);
    }
    let header = header(cx, f, &weights);
    let weight_bytes = header
        .as_ref()
        .and_then(gguf::Header::weight_bytes)
        .map(|b| (b, "GGUF header"))
        .or_else(|| m.weights.as_ref().map(|w| (w.node, "declared")));
    let needs_weights = pool.is_some_and(|p| !p.vram.is_empty());
    if weight_bytes.is_none() && needs_weights && header.is_none() && !broken(m, &["weights"]) {
        if let Some((w, span, _)) = &weights {
            size_unknown(cx, f, m, w, *span);
        }
    }
    let (kv_k, kv_v, flash_attn) = kv_cache(cx, f, m);
    let shape = shape(header.as_ref(), m);
    let ctx = context(cx, f, m, shape.as_ref());
    let kv_bytes = shape.as_ref().map(|s| {
        let per_token = s.kv_heads_total as f64
            * (s.key_length as f64 * cache_type_bytes(&kv_k).unwrap_or(2.0)
                + s.value_length as f64 * cache_type_bytes(&kv_v).unwrap_or(2.0));
        (ctx as f64 * per_token).round() as u64
    });
    if kv_bytes.is_none()
        && needs_weights
        && !broken(m, &["layers", "kv_heads", "head_dim"])
        && matches!(
            weights,
            Some((Weights::Gguf { present: false, .. }, ..)) | Some((Weights::Tag { .. }, ..))
        )
    {
        cx.error_at(Code::NoKvShape, f, m.name.span, format!("the KV cache of model `{}` cannot be estimated, so the memory check counts weights only", m.name.node), "declare the model's attention shape, e.g. `layers 48  kv_heads 4  head_dim 128` (from its model card or config.json)");
    }

    // GPUs too old for what an OpenAI-compatible server (vLLM and the like) would run.
    if let (Some(p), Some(cc)) = (pool, pool.and_then(|p| p.compute)) {
        compute_checks(cx, f, m, p, cc);
    }

    let mut sampling = BTreeMap::new();
    for s in &m.sampling {
        if check_sampling(cx, f, s) {
            sampling.insert(s.key.node.clone(), s.value.node);
        }
    }
    speed_settings(cx, f, m);
    let decode = decode(cx, f, m, header.as_ref(), &weights, weight_bytes, pool);
    let (Some(_), Some((weights, ..))) = (pool_entry, weights) else {
        return None;
    };
    Some(Model {
        name: m.name.node.clone(),
        pool: m.pool.node.clone(),
        weights,
        weight_bytes: weight_bytes.map(|w| w.0),
        weight_bytes_from: weight_bytes.map_or("unknown", |w| w.1),
        ctx,
        kv_k,
        kv_v,
        flash_attn,
        shape,
        kv_bytes,
        min_decode: m.min_decode.as_ref().map(|d| d.node),
        decode,
        quant: m.quant.as_ref().map(|q| q.node.clone()),
        dtype: m.dtype.as_ref().map(|q| q.node.clone()),
        sampling,
    })
}

/// A model names its weights one way: a GGUF file (resolved against its file's folder) or a
/// tag, not both and not neither.
fn weights(cx: &mut Cx, f: FileId, module: usize, m: &ast::ModelDecl) -> Option<Named> {
    match (&m.gguf, &m.tag) {
        (Some(g), Some(t)) => {
            cx.error(
                Diagnostic::new(Code::InvalidValue, format!("model `{}` has both a GGUF file and a tag", m.name.node))
                    .in_file(f)
                    .label(g.span, "GGUF file")
                    .label(t.span, "tag")
                    .help("llama.cpp pools load a `gguf` file; Ollama and OpenAI-compatible pools serve a `tag`; keep the one that matches the pool"),
            );
            None
        }
        (Some(g), None) => {
            let path = cx.resolve_path(module, &g.node);
            let present = path.as_ref().is_some_and(|p| p.is_file());
            Some((
                Weights::Gguf {
                    path: g.node.clone(),
                    present,
                },
                g.span,
                path,
            ))
        }
        (None, Some(t)) => Some((
            Weights::Tag {
                tag: t.node.clone(),
            },
            t.span,
            None,
        )),
        (None, None) if broken(m, &["gguf", "tag"]) => None,
        (None, None) => {
            cx.error(
                Diagnostic::new(Code::MissingSetting, format!("model `{}` names no weights", m.name.node))
                    .in_file(f)
                    .label(m.name.span, "no `gguf` or `tag`")
                    .help("add `gguf \"models/NAME.gguf\"` for a llama.cpp pool, or `tag \"NAME\"` for Ollama or OpenAI-compatible pools"),
            );
            None
        }
    }
}

/// The weights are of the kind the pool's server loads: a file for llama.cpp, a tag for the
/// others.
fn server_match(cx: &mut Cx, f: FileId, m: &ast::ModelDecl, w: &Weights, span: Span, p: &Pool) {
    let mismatch = match (w, p.server) {
        (Weights::Gguf { .. }, ServerKind::Ollama | ServerKind::Openai) => {
            Some("a GGUF file, but its pool's server loads models by name")
        }
        (Weights::Tag { .. }, ServerKind::LlamaCpp) => {
            Some("a tag, but its pool runs llama.cpp, which loads a GGUF file")
        }
        _ => None,
    };
    if let Some(why) = mismatch {
        cx.error(
            Diagnostic::new(
                Code::ServerMismatch,
                format!("model `{}` has {why}", m.name.node),
            )
            .in_file(f)
            .label(span, "")
            .label(m.pool.span, format!("{} pool", p.server.as_str()))
            .help(match p.server {
                ServerKind::LlamaCpp => "give the model file: `gguf \"models/NAME.gguf\"`",
                _ => "give the name the server knows the model by: `tag \"NAME\"`",
            }),
        );
    }
}

/// The header of the GGUF file, when it is on disk; one that cannot be read is an error.
fn header(cx: &mut Cx, f: FileId, weights: &Option<Named>) -> Option<gguf::Header> {
    let Some((Weights::Gguf { present: true, .. }, span, Some(path))) = weights else {
        return None;
    };
    match gguf::Header::read_path(path.as_std_path()) {
        Ok(h) => Some(h),
        Err(err) => {
            cx.error_at(Code::BadGguf, f, *span, format!("cannot read the GGUF header of `{path}`: {err}"), "check that the download finished (compare its size or checksum with the source), or point `gguf` at another file");
            None
        }
    }
}

/// Reports a model whose size a pool with GPU memory needs and neither a header nor a
/// `weights` setting gives.
fn size_unknown(cx: &mut Cx, f: FileId, m: &ast::ModelDecl, w: &Weights, span: Span) {
    let (msg, help) = match w {
        Weights::Gguf { .. } => (
            format!("the GGUF file of model `{}` is not here and its size is not declared", m.name.node),
            "put the file at this path (relative to the .lex file), or declare its size: `weights 36 GiB`",
        ),
        Weights::Tag { .. } => (
            format!("model `{}` does not declare its size", m.name.node),
            "declare the size of its weights, e.g. `weights 17 GiB`, so lexrun can check it fits the pool",
        ),
    };
    cx.error_at(Code::NoWeights, f, span, msg, help);
}

/// The KV cache types (K, V) and flash attention: known types, and the pairs llama.cpp runs
/// well (a quantized V cache needs flash attention; flash attention wants K and V alike).
fn kv_cache(cx: &mut Cx, f: FileId, m: &ast::ModelDecl) -> (String, String, bool) {
    let mut ty = |n: &Option<ast::Name>| -> Option<String> {
        let n = n.as_ref()?;
        if cache_type_bytes(&n.node).is_none() {
            cx.error(bad_value(f, n, "KV cache type", CACHE_TYPES));
            return None;
        }
        Some(n.node.clone())
    };
    let kv = ty(&m.kv);
    let kv_k = ty(&m.kv_k)
        .or_else(|| kv.clone())
        .unwrap_or_else(|| "f16".into());
    let kv_v = ty(&m.kv_v)
        .or_else(|| kv.clone())
        .unwrap_or_else(|| "f16".into());
    let flash_attn = match &m.flash_attn {
        Some(n) => match n.node.as_str() {
            "on" | "true" => true,
            "off" | "false" => false,
            _ => {
                cx.error(bad_value(f, n, "flash attention setting", &["on", "off"]));
                false
            }
        },
        None => false,
    };
    let v_span = m.kv_v.as_ref().or(m.kv.as_ref()).map(|n| n.span);
    if is_quantized(&kv_v) && !flash_attn && !broken(m, &["flash_attn"]) {
        if let Some(vs) = v_span {
            let mut d = Diagnostic::new(
                Code::QuantizedVNeedsFlash,
                format!(
                    "model `{}` quantizes the V cache ({kv_v}) without flash attention",
                    m.name.node
                ),
            )
            .in_file(f)
            .label(vs, "quantized V cache");
            if let Some(fa) = &m.flash_attn {
                d = d.label(fa.span, "flash attention off");
            }
            cx.error(d.help("llama.cpp refuses to start with a quantized V cache unless flash attention is on: add `flash_attn on`, or use `kv_v f16`"));
        }
    }
    if flash_attn && kv_k != kv_v {
        let span = m
            .kv_k
            .as_ref()
            .map(|n| n.span)
            .or(v_span)
            .unwrap_or(m.name.span);
        cx.error_at(Code::MixedKvWithFlash, f, span, format!("model `{}` uses different K ({kv_k}) and V ({kv_v}) cache types with flash attention", m.name.node), "llama.cpp's GPU flash-attention kernels cover only matching K/V types in default builds; other pairs fall back to slow CPU attention. Use one type, e.g. `kv q8_0`");
    }
    (kv_k, kv_v, flash_attn)
}

/// The model's attention shape, for the KV estimate: from the GGUF header, or as declared.
fn shape(header: Option<&gguf::Header>, m: &ast::ModelDecl) -> Option<Shape> {
    let shape = header.and_then(|h| {
        let kv_heads = h.kv_heads_per_layer()?;
        Some(Shape {
            architecture: h.architecture.clone(),
            layers: h.block_count()?,
            kv_heads_total: kv_heads.iter().sum(),
            key_length: h.key_length()?,
            value_length: h.value_length()?,
            trained_context: h.context_length(),
            experts: h.expert_count(),
            experts_used: h.expert_used_count(),
            from: "GGUF header",
        })
    });
    shape.or_else(|| {
        let (l, k, d) = (
            m.layers.as_ref()?,
            m.kv_heads.as_ref()?,
            m.head_dim.as_ref()?,
        );
        Some(Shape {
            architecture: None,
            layers: l.node as u64,
            kv_heads_total: l.node as u64 * k.node as u64,
            key_length: d.node as u64,
            value_length: d.node as u64,
            trained_context: None,
            experts: None,
            experts_used: None,
            from: "declared",
        })
    })
}

/// The context in tokens (4096 unless set): above 0, and within what the model was trained for.
fn context(cx: &mut Cx, f: FileId, m: &ast::ModelDecl, shape: Option<&Shape>) -> u64 {
    let ctx = m.ctx.as_ref().map_or(4096, |c| c.node);
    if let Some(c) = m.ctx.as_ref().filter(|c| c.node == 0) {
        cx.error_at(
            Code::InvalidValue,
            f,
            c.span,
            "a context of 0 tokens",
            "give the context the server should allocate, e.g. `ctx 32k`",
        );
    }
    if let (Some(trained), Some(c)) = (shape.and_then(|s| s.trained_context), &m.ctx) {
        if c.node > trained {
            cx.error_at(Code::CtxOverTrained, f, c.span, format!("model `{}` asks for {} tokens of context but was trained for {trained}", m.name.node, c.node), "quality drops past the trained context unless the model is set up for RoPE scaling; lower `ctx`");
        }
    }
    ctx
}

/// The settings a decode estimate reads: a decode floor above 0, and active parameters
/// above 0 and at most the total.
fn speed_settings(cx: &mut Cx, f: FileId, m: &ast::ModelDecl) {
    if let Some(md) = m.min_decode.as_ref().filter(|d| d.node <= 0.0) {
        cx.error_at(
            Code::InvalidValue,
            f,
            md.span,
            "a decode floor must be above 0 tok/s",
            "write e.g. `min_decode 40 tok/s`",
        );
    }
    if let Some(p) = m.params.as_ref() {
        let bad_active = m
            .active
            .as_ref()
            .filter(|a| a.node > p.node || a.node <= 0.0);
        if p.node <= 0.0 || bad_active.is_some() {
            cx.error_at(
                Code::InvalidValue,
                f,
                bad_active.map_or(p.span, |a| a.span),
                "active parameters must be more than 0 and at most the total",
                "write the parameters in all, then those one token uses: `params 122B active 10B`",
            );
        }
    }
}

/// The decode speed, what one token reads over the pool's bandwidth, which must reach the
/// model's `min_decode`.
fn decode(
    cx: &mut Cx,
    f: FileId,
    m: &ast::ModelDecl,
    header: Option<&gguf::Header>,
    weights: &Option<Named>,
    weight_bytes: Option<(u64, &str)>,
    pool: Option<&Pool>,
) -> Option<Decode> {
    let per_token = header.and_then(super::speed::from_gguf).or_else(|| {
        let file = match weights {
            Some((Weights::Gguf { path, .. }, ..)) => Some(path.as_str()),
            _ => None,
        };
        weight_bytes.map(|(b, _)| {
            super::speed::from_declared(
                b,
                m.params
                    .as_ref()
                    .map(|p| (p.node, m.active.as_ref().map(|a| a.node))),
                file,
            )
        })
    });
    let decode = per_token
        .as_ref()
        .zip(pool)
        .and_then(|(t, p)| super::speed::decode(t, p));
    if let (Some(d), Some(floor)) = (&decode, &m.min_decode) {
        if d.expected < floor.node {
            cx.error(
                Diagnostic::new(
                    Code::DecodeUnderFloor,
                    format!(
                        "model `{}` can decode at about {:.0} tokens/s on pool `{}`, under its min_decode of {} tok/s",
                        m.name.node, d.expected, m.pool.node, floor.node
                    ),
                )
                .in_file(f)
                .label(floor.span, format!("min_decode is {}", floor.node))
                .help(format!(
                    "{}; use a mixture-of-experts model or a smaller quantisation, keep the model on fewer GPUs, or lower min_decode (`lexrun bench` measures the real speed)",
                    d.why
                )),
            );
        }
    }
    decode
}

/// Checks a sampling setting's range; true when it is usable.
pub(crate) fn check_sampling(cx: &mut Cx, f: FileId, s: &ast::SamplingSetting) -> bool {
    let v = s.value.node;
    let (ok, range) = match s.key.node.as_str() {
        "temperature" => ((0.0..=5.0).contains(&v), "between 0 and 5"),
        "top_p" | "min_p" => ((0.0..=1.0).contains(&v), "between 0 and 1"),
        "top_k" | "max_tokens" | "seed" => {
            (v >= 0.0 && v.fract() == 0.0, "a whole number, 0 or more")
        }
        _ => ((0.0..=10.0).contains(&v), "between 0 and 10"),
    };
    if !ok {
        cx.error(
            Diagnostic::new(
                Code::InvalidValue,
                format!("`{}` must be {range}", s.key.node),
            )
            .in_file(f)
            .label(s.value.span, "out of range")
            .help("temperature 0 makes answers repeatable; 0.2–0.7 is usual for drafting"),
        );
    }
    ok
}

pub(crate) fn compute_checks(cx: &mut Cx, f: FileId, m: &ast::ModelDecl, p: &Pool, cc: f64) {
    let too_old = |what: &str, min: f64, span: Span, help: &str| {
        (cc + 1e-9 < min).then(|| {
            Diagnostic::new(
                Code::ComputeTooLow,
                format!("model `{}` needs {what}, which needs compute capability {min:.1}+; pool `{}` has {cc:.1}", m.name.node, p.name),
            )
            .in_file(f)
            .label(span, "")
            .label(m.pool.span, format!("compute {cc:.1}"))
            .help(help.to_string())
        })
    };
    if p.server == ServerKind::Openai {
        if let Some(q) = &m.quant {
            let min = match q.node.as_str() {
                "awq" => Some(7.5),
                "gptq_marlin" | "awq_marlin" | "marlin" => Some(8.0),
                "fp8" => Some(8.0),
                "gptq" | "none" | "bitsandbytes" | "gguf" => None,
                _ => {
                    cx.error(bad_value(
                        f,
                        q,
                        "quantisation",
                        &[
                            "none",
                            "awq",
                            "awq_marlin",
                            "gptq",
                            "gptq_marlin",
                            "marlin",
                            "fp8",
                            "bitsandbytes",
                            "gguf",
                        ],
                    ));
                    None
                }
            };
            if let Some(d) = min.and_then(|min| {
                too_old(
                    &format!("{} kernels", q.node),
                    min,
                    q.span,
                    "on Volta (7.0) cards serve a GGUF through llama.cpp instead, or an unquantised float16 model",
                )
            }) {
                cx.error(d);
            }
        }
    }
    if let Some(d) = &m.dtype {
        match d.node.as_str() {
            "bfloat16" | "bf16" => {
                if let Some(d) = too_old(
                    "bfloat16 arithmetic",
                    8.0,
                    d.span,
                    "use `dtype float16` on cards older than Ampere",
                ) {
                    cx.error(d);
                }
            }
            "float16" | "fp16" | "float32" | "auto" => {}
            _ => cx.error(bad_value(
                f,
                d,
                "compute type",
                &["float16", "bfloat16", "float32", "auto"],
            )),
        }
    }
}
