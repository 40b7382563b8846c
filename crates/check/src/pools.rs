//! Pools: hosts, GPU sets and links, memory per GPU, endpoints, and GPUs two pools share.

use std::collections::{BTreeMap, HashMap};

use super::context::{Cx, Decl, Kind};
use super::hardware::bad_value;
use super::speed::Gpu;
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{Link, Pool, ServerKind};
use crate::syntax::ast;

/// Every declared pool, checked, then the GPUs pools share; the pools that name a server.
pub(crate) fn pools(cx: &mut Cx) -> Vec<Pool> {
    let mut out = Vec::new();
    for e in cx.decls(Kind::Pool) {
        let Decl::Pool(p) = e.decl else {
            continue;
        };
        out.extend(pool(cx, e.file, p));
    }
    shared_gpus(cx);
    out
}

/// Checks one pool, its settings in the order they are reported; `None` when it names no
/// server lexrun runs.
fn pool(cx: &mut Cx, f: FileId, p: &ast::PoolDecl) -> Option<Pool> {
    let server = server(cx, f, p);
    if let Some(s) = &p.serve {
        check_endpoint(cx, f, &s.endpoint);
    }
    if let Some(k) = &p.api_key_env {
        api_key_env(cx, f, k);
    }
    let gpus = gpus(cx, f, p);
    let vram = vram(cx, f, p, &gpus);
    let link = link(cx, f, p, gpus.len());
    let compute = p.compute.as_ref().map(|c| c.node);
    if let Some(c) = &p.compute {
        if !(1.0..=15.0).contains(&c.node) {
            cx.error_at(Code::InvalidValue, f, c.span, format!("{} is not a CUDA compute capability", c.node), "write the card's compute capability: 7.0 for V100, 7.5 for T4, 8.0 for A100, 8.6 for RTX 3090, 8.9 for RTX 4090, 9.0 for H100");
        }
    }
    let slots = p.slots.as_ref().map_or(1, |s| s.node);
    if let Some(s) = p.slots.as_ref().filter(|s| s.node == 0 || s.node > 256) {
        cx.error_at(
            Code::InvalidValue,
            f,
            s.span,
            format!("{} slots is not a usable number", s.node),
            "a pool serves between 1 and 256 requests at a time",
        );
    }
    let host = p
        .host
        .as_ref()
        .map_or_else(|| "localhost".to_string(), |h| h.node.clone());
    let gpu = gpu_model(cx, f, p);
    let bandwidth = p
        .bandwidth
        .as_ref()
        .map(|b| b.node)
        .filter(|b| *b > 0)
        .or_else(|| gpu.map(|g| (g.gbs * 1e9) as u64));
    let compute = compute.or_else(|| gpu.map(|g| g.compute));
    Some(Pool {
        name: p.name.node.clone(),
        host,
        gpus,
        link,
        vram,
        compute,
        server: server?,
        endpoint: p
            .serve
            .as_ref()
            .map(|s| s.endpoint.node.clone())
            .unwrap_or_default(),
        slots,
        binary: p.binary.as_ref().map(|b| b.node.clone()),
        gpu: gpu.map(|g| g.id.to_string()),
        bandwidth,
        min_build: p
            .min_build
            .as_ref()
            .map(|b| crate::plan::workflow::MinBuild {
                build: b.node as u64,
                because: p.min_build_because.as_ref().map(|s| s.node.clone()),
            }),
        api_key_env: p.api_key_env.as_ref().map(|k| k.node.clone()),
    })
}

/// The pool says which server runs on it, one lexrun knows.
fn server(cx: &mut Cx, f: FileId, p: &ast::PoolDecl) -> Option<ServerKind> {
    match &p.serve {
        Some(s) => match ServerKind::parse(&s.kind.node) {
            Some(kind) => Some(kind),
            None => {
                cx.error(bad_value(f, &s.kind, "server kind", &ServerKind::NAMES));
                None
            }
        },
        None if ast::is_broken(&p.broken, "serve") => None,
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
    }
}

/// `api_key env` names an environment variable (not the key itself).
fn api_key_env(cx: &mut Cx, f: FileId, k: &ast::Spanned<String>) {
    let valid = !k.node.is_empty()
        && !k.node.starts_with(|c: char| c.is_ascii_digit())
        && k.node
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        cx.error_at(
            Code::InvalidValue,
            f,
            k.span,
            format!("`{}` is not the name of an environment variable", k.node),
            "name the variable that holds the key, not the key: `api_key env \"FIRM_KEY\"`",
        );
    }
}

/// The pool's GPUs, each listed once.
fn gpus(cx: &mut Cx, f: FileId, p: &ast::PoolDecl) -> Vec<u32> {
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
    gpus
}

/// The memory of each GPU: given when there are GPUs, one size for each (or one for all).
fn vram(cx: &mut Cx, f: FileId, p: &ast::PoolDecl, gpus: &[u32]) -> Vec<u64> {
    match (&p.vram, &p.gpus) {
        (None, None) => Vec::new(),
        (None, Some(_)) if ast::is_broken(&p.broken, "vram") => Vec::new(),
        (None, Some(g)) => {
            cx.error(
                Diagnostic::new(Code::MissingSetting, format!("pool `{}` has GPUs but no `vram`", p.name.node))
                    .in_file(f)
                    .label(g.span, "GPUs without a memory size")
                    .help("say how much memory each GPU has, e.g. `vram 4 x 32 GiB`, so lexrun can check that the models fit"),
            );
            Vec::new()
        }
        (Some(v), g) => match &v.node {
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
        },
    }
}

/// The link between the GPUs is one lexrun knows, and not PCIe under a model spread over
/// several GPUs.
fn link(cx: &mut Cx, f: FileId, p: &ast::PoolDecl, gpus: usize) -> Option<Link> {
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
        if gpus > 1 {
            cx.error(
                Diagnostic::new(
                    Code::PcieMultiGpu,
                    format!("pool `{}` spreads a model over {gpus} GPUs joined only by PCIe", p.name.node),
                )
                .in_file(f)
                .label(l.span, "PCIe between the GPUs")
                .help("splitting a model across PCIe costs most of its decode speed; keep each model inside one NVLink board, or on one GPU"),
            );
        }
    }
    link
}

/// The GPU model is one lexrun knows the bandwidth of, and a declared bandwidth is above 0.
fn gpu_model(cx: &mut Cx, f: FileId, p: &ast::PoolDecl) -> Option<&'static Gpu> {
    let gpu = p.gpu.as_ref().and_then(|g| match super::speed::gpu(&g.node) {
        Some(known) => Some(known),
        None => {
            let ids: Vec<&str> = super::speed::GPUS.iter().map(|g| g.id).collect();
            cx.error(bad_value(f, g, "GPU model", &ids).help(format!(
                "GPU models lexrun knows: {}; for another card declare its memory bandwidth instead, e.g. `bandwidth 900 GB/s`",
                ids.join(", ")
            )));
            None
        }
    });
    if let Some(b) = p.bandwidth.as_ref().filter(|b| b.node == 0) {
        cx.error_at(
            Code::InvalidValue,
            f,
            b.span,
            "a memory bandwidth of 0",
            "give each GPU's memory bandwidth, e.g. `bandwidth 900 GB/s`",
        );
    }
    gpu
}

pub(crate) fn vram_count(
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

/// No GPU of a host is claimed by two pools: models stay resident.
pub(crate) fn shared_gpus(cx: &mut Cx) {
    let pools: Vec<_> = cx
        .decls(Kind::Pool)
        .into_iter()
        .filter_map(|e| match e.decl {
            Decl::Pool(p) => Some((e.file, p)),
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
            let gpus = shared.join(", ");
            let mut d = Diagnostic::new(
                Code::SharedGpu,
                format!(
                    "pools `{}` and `{}` both claim GPU {gpus} on host `{}`",
                    b.name.node,
                    a.name.node,
                    host(a)
                ),
            );
            let help =
                "models stay resident, so a GPU belongs to one pool; give each pool its own GPUs";
            if *fa == fb {
                d = d
                    .in_file(*fa)
                    .label(ga.span, format!("`{}` claims it here", a.name.node));
                if let Some(gb) = &b.gpus {
                    d = d.label(gb.span, format!("`{}` claims it here", b.name.node));
                }
                cx.error(d.help(help));
                continue;
            }
            // Across files the earlier pool is the one nearer the file being checked (the
            // user's own): label it there, and show the imported pool as a note.
            let Some(gb) = &b.gpus else { continue };
            let shared_file = cx.sources.get(*fa).name.clone();
            cx.error(
                d.in_file(fb)
                    .label(gb.span, format!("`{}` claims GPU {gpus} here", b.name.node))
                    .note(*fa, ga.span, format!("`{}` in {shared_file} claims GPU {gpus} here", a.name.node))
                    .help(format!("{help}: change the GPUs of `{}` here, since {shared_file} is shared with other workflows", b.name.node)),
            );
        }
    }
}

pub(crate) fn check_endpoint(cx: &mut Cx, f: FileId, e: &ast::Spanned<String>) {
    let shown = crate::credentials::url(&e.node);
    let parsed = url::Url::parse(&e.node);
    // A password the redaction finds counts, even where the URL parser sees a port
    // (`http://u:12/34@h`) or nothing it can parse (`http://u:pa/ss@h`).
    let credentials = shown != e.node
        || parsed
            .as_ref()
            .is_ok_and(|u| !u.username().is_empty() || u.password().is_some());
    if credentials {
        cx.error_at(Code::BadEndpoint, f, e.span, format!("`{shown}` carries credentials in its address; lexrun never sends or keeps them"), "write the address without `user:password@`, and give the pool its key from the environment: `api_key env \"FIRM_KEY\"`");
        return;
    }
    let problem = match parsed {
        Err(err) => Some(format!("it does not parse: {err}")),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Some(format!("`{}` is not http or https", u.scheme()))
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some("it names no host".to_string()),
        Ok(_) => None,
    };
    if let Some(p) = problem {
        cx.error_at(
            Code::BadEndpoint,
            f,
            e.span,
            format!("`{shown}` is not a server address: {p}"),
            "write the server's base URL, e.g. \"http://127.0.0.1:8081\"",
        );
    }
}
