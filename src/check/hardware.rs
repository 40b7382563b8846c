//! Pools and models against the hardware: GPU sets, memory fit, KV cache settings that
//! llama.cpp refuses or silently degrades, and GPUs too old for the kernels a model needs.

use std::collections::{BTreeMap, HashMap};

use super::{Cx, Kind};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::gguf;
use crate::plan::workflow::{Link, Model, Pool, ServerKind, Shape, Weights};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

const GIB: f64 = (1u64 << 30) as f64;

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

const CACHE_TYPES: &[&str] = &[
    "f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl",
];

fn is_quantized(t: &str) -> bool {
    !matches!(t, "f32" | "f16" | "bf16")
}

fn bad_value(file: FileId, name: &ast::Name, what: &str, allowed: &[&str]) -> Diagnostic {
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

pub(crate) fn pools(cx: &mut Cx) -> Vec<Pool> {
    let mut out = Vec::new();
    let mut spans: Vec<(FileId, Span, String)> = Vec::new();
    for e in cx.decls(Kind::Pool) {
        let super::Decl::Pool(p) = e.decl else {
            continue;
        };
        let f = e.file;
        let server = match &p.serve {
            Some(s) => match s.kind.node.as_str() {
                "llama_cpp" => Some(ServerKind::LlamaCpp),
                "ollama" => Some(ServerKind::Ollama),
                "openai" => Some(ServerKind::Openai),
                _ => {
                    cx.error(bad_value(
                        f,
                        &s.kind,
                        "server kind",
                        &["llama_cpp", "ollama", "openai"],
                    ));
                    None
                }
            },
            None if p.broken.iter().any(|b| b == "serve") => None,
            None => {
                cx.error(
                    Diagnostic::new(
                        Code::MissingSetting,
                        format!(
                            "pool `{}` does not say which server runs on it",
                            p.name.node
                        ),
                    )
                    .in_file(f)
                    .label(p.name.span, "no `serve` setting")
                    .help("add e.g. `serve llama_cpp at \"http://127.0.0.1:8081\"`"),
                );
                None
            }
        };
        if let Some(s) = &p.serve {
            check_endpoint(cx, f, &s.endpoint);
        }
        let gpus: Vec<u32> = p
            .gpus
            .as_ref()
            .map(|g| g.node.iter().map(|x| x.node).collect())
            .unwrap_or_default();
        if let Some(g) = &p.gpus {
            for (i, a) in g.node.iter().enumerate() {
                if let Some(b) = g.node[..i].iter().find(|b| b.node == a.node) {
                    cx.error(
                        Diagnostic::new(
                            Code::DuplicateGpu,
                            format!("GPU {} is listed twice", a.node),
                        )
                        .in_file(f)
                        .label(a.span, "again")
                        .label(b.span, "first")
                        .help("list each GPU of the pool once"),
                    );
                }
            }
        }
        let vram = match (&p.vram, &p.gpus) {
            (None, None) => Vec::new(),
            (None, Some(_)) if p.broken.iter().any(|b| b == "vram") => Vec::new(),
            (None, Some(g)) => {
                cx.error(
                    Diagnostic::new(Code::MissingSetting, format!("pool `{}` has GPUs but no `vram`", p.name.node))
                        .in_file(f)
                        .label(g.span, "GPUs without a memory size")
                        .help("say how much memory each GPU has, e.g. `vram 4 x 32 GiB`, so lexrun can check that the models fit"),
                );
                Vec::new()
            }
            (Some(v), g) => {
                let list: Vec<u64> = match &v.node {
                    ast::Vram::Repeat { count, size } => {
                        if gpus.len() != count.node as usize {
                            cx.error(vram_count(
                                f,
                                p,
                                v.span,
                                count.node as usize,
                                gpus.len(),
                                g.as_ref().map(|g| g.span),
                            ));
                        }
                        vec![*size; count.node as usize]
                    }
                    ast::Vram::List(sizes) if sizes.len() == 1 && !gpus.is_empty() => {
                        vec![sizes[0].node; gpus.len()]
                    }
                    ast::Vram::List(sizes) => {
                        if sizes.len() != gpus.len() {
                            cx.error(vram_count(
                                f,
                                p,
                                v.span,
                                sizes.len(),
                                gpus.len(),
                                g.as_ref().map(|g| g.span),
                            ));
                        }
                        sizes.iter().map(|s| s.node).collect()
                    }
                };
                list
            }
        };
        let link = match &p.link {
            Some(l) => match l.node.as_str() {
                "nvlink" => Some(Link::Nvlink),
                "pcie" => Some(Link::Pcie),
                _ => {
                    cx.error(bad_value(f, l, "GPU link", &["nvlink", "pcie"]));
                    None
                }
            },
            None => None,
        };
        if let (Some(Link::Pcie), Some(l)) = (link, &p.link) {
            if gpus.len() > 1 {
                cx.error(
                    Diagnostic::new(
                        Code::PcieMultiGpu,
                        format!("pool `{}` spreads a model over {} GPUs joined only by PCIe", p.name.node, gpus.len()),
                    )
                    .in_file(f)
                    .label(l.span, "PCIe between the GPUs")
                    .help("splitting a model across PCIe costs most of its decode speed; keep each model inside one NVLink board, or on one GPU"),
                );
            }
        }
        let compute = p.compute.as_ref().map(|c| c.node);
        if let Some(c) = &p.compute {
            if !(1.0..=15.0).contains(&c.node) {
                cx.error(
                    Diagnostic::new(Code::InvalidValue, format!("{} is not a CUDA compute capability", c.node))
                        .in_file(f)
                        .label(c.span, "")
                        .help("write the card's compute capability: 7.0 for V100, 7.5 for T4, 8.0 for A100, 8.6 for RTX 3090, 8.9 for RTX 4090, 9.0 for H100"),
                );
            }
        }
        let slots = p.slots.as_ref().map_or(1, |s| s.node);
        if let Some(s) = p.slots.as_ref().filter(|s| s.node == 0 || s.node > 256) {
            cx.error(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("{} slots is not a usable number", s.node),
                )
                .in_file(f)
                .label(s.span, "")
                .help("a pool serves between 1 and 256 requests at a time"),
            );
        }
        let host = p
            .host
            .as_ref()
            .map_or_else(|| "localhost".to_string(), |h| h.node.clone());
        if let Some(g) = &p.gpus {
            spans.push((f, g.span, host.clone()));
        } else {
            spans.push((f, p.name.span, host.clone()));
        }
        let Some(server) = server else { continue };
        out.push(Pool {
            name: p.name.node.clone(),
            host,
            gpus,
            link,
            vram,
            compute,
            server,
            endpoint: p
                .serve
                .as_ref()
                .map(|s| s.endpoint.node.clone())
                .unwrap_or_default(),
            slots,
            binary: p.binary.as_ref().map(|b| b.node.clone()),
        });
    }
    shared_gpus(cx);
    out
}

fn vram_count(
    f: FileId,
    p: &ast::PoolDecl,
    span: Span,
    sizes: usize,
    gpus: usize,
    gpus_span: Option<Span>,
) -> Diagnostic {
    let mut d = Diagnostic::new(
        Code::VramCount,
        format!(
            "pool `{}` lists memory for {sizes} GPUs but has {gpus}",
            p.name.node
        ),
    )
    .in_file(f)
    .label(span, format!("{sizes} sizes"));
    if let Some(g) = gpus_span {
        d = d.label(g, format!("{gpus} GPUs"));
    }
    d.help("give one size per GPU (`vram 32 GiB + 16 GiB`), `N x SIZE` with N the number of GPUs, or one size for all")
}

fn shared_gpus(cx: &mut Cx) {
    let pools: Vec<_> = cx
        .decls(Kind::Pool)
        .into_iter()
        .filter_map(|e| match e.decl {
            super::Decl::Pool(p) => Some((e.file, p)),
            _ => None,
        })
        .collect();
    let host = |p: &ast::PoolDecl| {
        p.host
            .as_ref()
            .map_or("localhost", |h| h.node.as_str())
            .to_string()
    };
    // The first pool to claim each (host, GPU).
    let mut owner: HashMap<(String, u32), usize> = HashMap::new();
    for (i, (fa, a)) in pools.iter().enumerate() {
        let Some(ga) = &a.gpus else { continue };
        let mut clashes: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for g in &ga.node {
            match owner.get(&(host(a), g.node)) {
                Some(&j) if j != i => clashes.entry(j).or_default().push(g.node.to_string()),
                Some(_) => {}
                None => {
                    owner.insert((host(a), g.node), i);
                }
            }
        }
        for (j, shared) in clashes {
            let (fb, b) = pools[j];
            let mut d = Diagnostic::new(
                Code::SharedGpu,
                format!(
                    "pools `{}` and `{}` both claim GPU {} on host `{}`",
                    b.name.node,
                    a.name.node,
                    shared.join(", "),
                    host(a)
                ),
            )
            .in_file(*fa)
            .label(ga.span, format!("`{}` claims it here", a.name.node));
            if let (true, Some(gb)) = (*fa == fb, &b.gpus) {
                d = d.label(gb.span, format!("`{}` claims it here", b.name.node));
            }
            cx.error(d.help(
                "models stay resident, so a GPU belongs to one pool; give each pool its own GPUs",
            ));
        }
    }
}

fn check_endpoint(cx: &mut Cx, f: FileId, e: &ast::Spanned<String>) {
    let problem = match url::Url::parse(&e.node) {
        Err(err) => Some(format!("it does not parse: {err}")),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Some(format!("`{}` is not http or https", u.scheme()))
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some("it names no host".to_string()),
        Ok(_) => None,
    };
    if let Some(p) = problem {
        cx.error(
            Diagnostic::new(
                Code::BadEndpoint,
                format!("`{}` is not a server address: {p}", e.node),
            )
            .in_file(f)
            .label(e.span, "")
            .help("write the server's base URL, e.g. \"http://127.0.0.1:8081\""),
        );
    }
}

pub(crate) fn models(cx: &mut Cx, pools: &[Pool]) -> Vec<Model> {
    let pool_by_name: HashMap<&str, &Pool> = pools.iter().map(|p| (p.name.as_str(), p)).collect();
    let mut out = Vec::new();
    for e in cx.decls(Kind::Model) {
        let super::Decl::Model(m) = e.decl else {
            continue;
        };
        let f = e.file;
        let pool_entry = cx.lookup(&m.pool, f, &[Kind::Pool]);
        let pool = pool_by_name.get(m.pool.node.as_str()).copied();
        let weights = match (&m.gguf, &m.tag) {
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
                let path = cx.resolve_path(e.module, &g.node);
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
            (None, None) if m.broken.iter().any(|b| b == "gguf" || b == "tag") => None,
            (None, None) => {
                cx.error(
                    Diagnostic::new(Code::MissingSetting, format!("model `{}` names no weights", m.name.node))
                        .in_file(f)
                        .label(m.name.span, "no `gguf` or `tag`")
                        .help("add `gguf \"models/NAME.gguf\"` for a llama.cpp pool, or `tag \"NAME\"` for Ollama or OpenAI-compatible pools"),
                );
                None
            }
        };
        if let (Some((w, span, _)), Some(p)) = (&weights, pool) {
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
                    .label(*span, "")
                    .label(m.pool.span, format!("{} pool", p.server.as_str()))
                    .help(match p.server {
                        ServerKind::LlamaCpp => "give the model file: `gguf \"models/NAME.gguf\"`",
                        _ => "give the name the server knows the model by: `tag \"NAME\"`",
                    }),
                );
            }
        }

        // The header, when the GGUF file is on disk.
        let mut header = None;
        if let Some((Weights::Gguf { present: true, .. }, span, Some(path))) = &weights {
            match gguf::Header::read_path(path.as_std_path()) {
                Ok(h) => header = Some(h),
                Err(err) => cx.error(
                    Diagnostic::new(Code::BadGguf, format!("cannot read the GGUF header of `{path}`: {err}"))
                        .in_file(f)
                        .label(*span, "")
                        .help("check that the download finished (compare its size or checksum with the source), or point `gguf` at another file"),
                ),
            }
        }
        let weight_bytes = header
            .as_ref()
            .and_then(gguf::Header::weight_bytes)
            .map(|b| (b, "GGUF header"))
            .or_else(|| m.weights.as_ref().map(|w| (w.node, "declared")));
        let needs_weights = pool.is_some_and(|p| !p.vram.is_empty());
        let broken = |keys: &[&str]| m.broken.iter().any(|b| keys.contains(&b.as_str()));
        if weight_bytes.is_none() && needs_weights && header.is_none() && !broken(&["weights"]) {
            if let Some((w, span, _)) = &weights {
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
                cx.error(
                    Diagnostic::new(Code::NoWeights, msg)
                        .in_file(f)
                        .label(*span, "")
                        .help(help),
                );
            }
        }

        // KV cache types.
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
        if is_quantized(&kv_v) && !flash_attn && !broken(&["flash_attn"]) {
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
            cx.error(
                Diagnostic::new(
                    Code::MixedKvWithFlash,
                    format!("model `{}` uses different K ({kv_k}) and V ({kv_v}) cache types with flash attention", m.name.node),
                )
                .in_file(f)
                .label(span, "")
                .help("llama.cpp's GPU flash-attention kernels cover only matching K/V types in default builds; other pairs fall back to slow CPU attention. Use one type, e.g. `kv q8_0`"),
            );
        }

        // Shape, for the KV estimate.
        let shape = header.as_ref().and_then(|h| {
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
        let shape = shape.or_else(|| {
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
        });
        let ctx = m.ctx.as_ref().map_or(4096, |c| c.node);
        if let Some(c) = m.ctx.as_ref().filter(|c| c.node == 0) {
            cx.error(
                Diagnostic::new(Code::InvalidValue, "a context of 0 tokens")
                    .in_file(f)
                    .label(c.span, "")
                    .help("give the context the server should allocate, e.g. `ctx 32k`"),
            );
        }
        if let (Some(trained), Some(c)) = (shape.as_ref().and_then(|s| s.trained_context), &m.ctx) {
            if c.node > trained {
                cx.error(
                    Diagnostic::new(
                        Code::CtxOverTrained,
                        format!("model `{}` asks for {} tokens of context but was trained for {trained}", m.name.node, c.node),
                    )
                    .in_file(f)
                    .label(c.span, "")
                    .help("quality drops past the trained context unless the model is set up for RoPE scaling; lower `ctx`"),
                );
            }
        }
        let kv_bytes = shape.as_ref().map(|s| {
            let per_token = s.kv_heads_total as f64
                * (s.key_length as f64 * cache_type_bytes(&kv_k).unwrap_or(2.0)
                    + s.value_length as f64 * cache_type_bytes(&kv_v).unwrap_or(2.0));
            (ctx as f64 * per_token).round() as u64
        });
        if kv_bytes.is_none()
            && needs_weights
            && !broken(&["layers", "kv_heads", "head_dim"])
            && matches!(
                weights,
                Some((Weights::Gguf { present: false, .. }, ..)) | Some((Weights::Tag { .. }, ..))
            )
        {
            cx.error(
                Diagnostic::new(
                    Code::NoKvShape,
                    format!("the KV cache of model `{}` cannot be estimated, so the memory check counts weights only", m.name.node),
                )
                .in_file(f)
                .label(m.name.span, "")
                .help("declare the model's attention shape, e.g. `layers 48  kv_heads 4  head_dim 128` (from its model card or config.json)"),
            );
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
        if let Some(md) = m.min_decode.as_ref().filter(|d| d.node <= 0.0) {
            cx.error(
                Diagnostic::new(Code::InvalidValue, "a decode floor must be above 0 tok/s")
                    .in_file(f)
                    .label(md.span, "")
                    .help("write e.g. `min_decode 40 tok/s`"),
            );
        }
        let (Some(_), Some((weights, ..))) = (pool_entry, weights) else {
            continue;
        };
        out.push(Model {
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
            quant: m.quant.as_ref().map(|q| q.node.clone()),
            dtype: m.dtype.as_ref().map(|q| q.node.clone()),
            sampling,
        });
    }
    out
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

fn compute_checks(cx: &mut Cx, f: FileId, m: &ast::ModelDecl, p: &Pool, cc: f64) {
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

/// Sum of weights and KV cache of the models on each pool against its memory.
pub(crate) fn fit(cx: &mut Cx, pools: &[Pool], models: &[Model]) {
    let mut by_pool: HashMap<&str, Vec<&Model>> = HashMap::new();
    for m in models {
        by_pool.entry(m.pool.as_str()).or_default().push(m);
    }
    for p in pools {
        let Some((pf, pd)) = cx.names.get(&p.name).and_then(|e| match e.decl {
            super::Decl::Pool(d) => Some((&e.file, d)),
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
                super::Decl::Model(d) => Some((&e.file, d)),
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
