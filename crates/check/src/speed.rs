//! How fast a model can decode on its pool, known before anything runs.
//!
//! Generating one token reads every weight the token passes through once: for a dense model
//! all of them, for a mixture of experts the attention and shared weights plus only the active
//! experts' share. That read is bounded by the GPUs' memory bandwidth. A model split over
//! several GPUs (llama.cpp's default layer split) runs its layers on one GPU after another, so
//! the bound is one GPU's bandwidth, and each crossing between GPUs costs a little time per
//! token — little over NVLink, much more over PCIe. llama.cpp reaches a share of the bound:
//! about 80% for dense models and 50% for mixtures of experts (expert routing makes many small
//! reads), figures fitted to the reference firm's measurements (see the tests) and corrected
//! per pool by `lexrun bench`.

use crate::gguf;
use crate::plan::workflow::{Decode, Link, Pool};

/// A GPU model lexrun knows the memory bandwidth of.
pub(crate) struct Gpu {
    pub id: &'static str,
    pub label: &'static str,
    /// Memory bandwidth, GB/s (10⁹ bytes).
    pub gbs: f64,
    pub compute: f64,
}

/// Published memory bandwidths.
pub(crate) const GPUS: &[Gpu] = &[
    Gpu {
        id: "v100_sxm2",
        label: "V100 SXM2",
        gbs: 900.0,
        compute: 7.0,
    },
    Gpu {
        id: "v100_pcie",
        label: "V100 PCIe",
        gbs: 900.0,
        compute: 7.0,
    },
    Gpu {
        id: "t4",
        label: "T4",
        gbs: 320.0,
        compute: 7.5,
    },
    Gpu {
        id: "a100_40gb",
        label: "A100 40GB",
        gbs: 1555.0,
        compute: 8.0,
    },
    Gpu {
        id: "a100_80gb",
        label: "A100 80GB",
        gbs: 2039.0,
        compute: 8.0,
    },
    Gpu {
        id: "rtx3090",
        label: "RTX 3090",
        gbs: 936.0,
        compute: 8.6,
    },
    Gpu {
        id: "rtx4090",
        label: "RTX 4090",
        gbs: 1008.0,
        compute: 8.9,
    },
    Gpu {
        id: "h100_pcie",
        label: "H100 PCIe",
        gbs: 2000.0,
        compute: 9.0,
    },
    Gpu {
        id: "h100_sxm",
        label: "H100 SXM",
        gbs: 3350.0,
        compute: 9.0,
    },
];

pub(crate) fn gpu(id: &str) -> Option<&'static Gpu> {
    GPUS.iter().find(|g| g.id == id)
}

/// The share of the bandwidth bound llama.cpp reaches.
pub(crate) const DENSE_EFFICIENCY: f64 = 0.8;
pub(crate) const MOE_EFFICIENCY: f64 = 0.5;
/// Seconds per token for each crossing between two GPUs of a layer-split model.
const NVLINK_HOP_S: f64 = 0.1e-3;
const PCIE_HOP_S: f64 = 1.0e-3;

/// What one token reads: bytes, whether it is a mixture of experts, and the model in words
/// ("dense 32.8B at Q8_0", "mixture of experts 122B (10B active) at Q6_K").
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PerToken {
    pub bytes: u64,
    pub moe: bool,
    pub what: String,
}

/// From a GGUF header: every tensor's bytes, expert tensors (`*_exps`) scaled by the experts
/// used over the experts there are. The token embedding is a row lookup, read in full only
/// when it doubles as the output layer (no `output.weight`).
pub(crate) fn from_gguf(h: &gguf::Header) -> Option<PerToken> {
    let share = match (h.expert_count(), h.expert_used_count()) {
        (Some(n), Some(u)) if n > 1 && u > 0 && u < n => Some(u as f64 / n as f64),
        _ => None,
    };
    let tied = !h.tensors.iter().any(|t| t.name == "output.weight");
    let (mut bytes, mut params, mut active) = (0f64, 0f64, 0f64);
    for t in &h.tensors {
        let elems = t.dims.iter().try_fold(1u64, |a, d| a.checked_mul(*d))?;
        let (block, size) = gguf::ggml_type_size(t.ggml_type)?;
        let b = elems.div_ceil(block) as f64 * size as f64;
        let read = if t.name.contains("_exps") {
            share.unwrap_or(1.0)
        } else if t.name == "token_embd.weight" && !tied {
            0.0
        } else {
            1.0
        };
        bytes += b * read;
        params += elems as f64;
        active += elems as f64 * read;
    }
    let quant = h.tensor_types().into_iter().find(|t| *t != "F32");
    let at = quant.map(|q| format!(" at {q}")).unwrap_or_default();
    let what = match share {
        Some(_) => format!(
            "mixture of experts {} ({} active){at}",
            billions(params),
            billions(active)
        ),
        None => format!("dense {}{at}", billions(params)),
    };
    Some(PerToken {
        bytes: bytes as u64,
        moe: share.is_some(),
        what,
    })
}

/// From the declared weight size and `params TOTAL active ACTIVE`; the quantisation is read
/// from the file name when it carries one (`…-Q8_0.gguf`).
pub(crate) fn from_declared(
    weight_bytes: u64,
    params: Option<(f64, Option<f64>)>,
    file: Option<&str>,
) -> PerToken {
    let at = file
        .and_then(quant_in_name)
        .map(|q| format!(" at {q}"))
        .unwrap_or_default();
    match params {
        Some((total, Some(active))) if active < total && total > 0.0 => PerToken {
            bytes: (weight_bytes as f64 * active / total) as u64,
            moe: true,
            what: format!(
                "mixture of experts {} ({} active){at}",
                billions(total * 1e9),
                billions(active * 1e9)
            ),
        },
        Some((total, _)) => PerToken {
            bytes: weight_bytes,
            moe: false,
            what: format!("dense {}{at}", billions(total * 1e9)),
        },
        None => PerToken {
            bytes: weight_bytes,
            moe: false,
            what: format!("a dense model of {}{at}", gb(weight_bytes as f64)),
        },
    }
}

fn quant_in_name(name: &str) -> Option<String> {
    let upper = name.to_ascii_uppercase();
    const TYPES: &[&str] = &[
        "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q4_K_M", "Q4_K_S", "Q4_0", "Q3_K_M", "Q2_K", "IQ4_XS",
        "BF16", "F16",
    ];
    TYPES
        .iter()
        .find(|t| upper.contains(*t))
        .map(|t| t.to_string())
}

fn billions(n: f64) -> String {
    let b = n / 1e9;
    if b >= 10.0 || (b - b.round()).abs() < 0.05 {
        format!("{b:.0}B")
    } else {
        format!("{b:.1}B")
    }
}

fn gb(bytes: f64) -> String {
    format!("{:.1} GB", bytes / 1e9)
}

/// The decode speed a model reading `t` per token can reach on `pool`; `None` when the
/// pool's bandwidth is not known.
pub(crate) fn decode(t: &PerToken, pool: &Pool) -> Option<Decode> {
    let bw = pool.bandwidth? as f64;
    if t.bytes == 0 || bw <= 0.0 {
        return None;
    }
    let n = pool.gpus.len().max(1);
    let hop = match pool.link {
        Some(Link::Nvlink) => NVLINK_HOP_S,
        _ => PCIE_HOP_S,
    };
    let read_s = t.bytes as f64 / bw;
    let efficiency = if t.moe {
        MOE_EFFICIENCY
    } else {
        DENSE_EFFICIENCY
    };
    let per_token_s = read_s / efficiency + (n - 1) as f64 * hop;
    let ceiling = 1.0 / read_s;
    let expected = 1.0 / per_token_s;
    let label = pool.gpu.as_deref().and_then(gpu).map_or("GPU", |g| g.label);
    let cards = match (n, pool.link) {
        (1, _) => format!("one {label}"),
        (n, Some(Link::Nvlink)) => format!("{n} × {label} over NVLink"),
        (n, _) => format!("{n} × {label} over PCIe"),
    };
    let why = format!(
        "{} reads ~{} per token; {cards} give{} at most ~{ceiling:.0} tokens/s ({:.0} GB/s{}), about {expected:.0} tokens/s at the {:.0}% of bandwidth llama.cpp reaches for {} models{}",
        t.what,
        gb(t.bytes as f64),
        if n == 1 { "s" } else { "" },
        bw / 1e9,
        if n > 1 { ", the GPUs taking turns layer by layer" } else { "" },
        efficiency * 100.0,
        if t.moe { "mixture-of-experts" } else { "dense" },
        if n > 1 {
            format!(
                " and {:.1} ms per token crossing {} GPU boundar{}",
                (n - 1) as f64 * hop * 1e3,
                n - 1,
                if n == 2 { "y" } else { "ies" }
            )
        } else {
            String::new()
        },
    );
    Some(Decode {
        bytes_per_token: t.bytes,
        moe: t.moe,
        ceiling,
        efficiency,
        expected,
        why,
    })
}

#[cfg(test)]
mod tests {
    //! The reference firm's measurements (Q8_0 weights unless said, Q4 KV cache, flash
    //! attention, llama.cpp) against what the model predicts. Each error is
    //! (predicted − measured) / measured.
    use super::*;
    use crate::plan::workflow::ServerKind;

    fn pool(gpu_id: &str, n: usize, link: Link) -> Pool {
        Pool {
            name: "p".into(),
            host: "h".into(),
            gpus: (0..n as u32).collect(),
            link: Some(link),
            vram: vec![32 << 30; n],
            compute: None,
            server: ServerKind::LlamaCpp,
            endpoint: String::new(),
            slots: 1,
            binary: None,
            gpu: Some(gpu_id.into()),
            bandwidth: gpu(gpu_id).map(|g| (g.gbs * 1e9) as u64),
            min_build: None,
            api_key_env: None,
        }
    }

    /// Bytes of Q8_0 weights for `b` billion parameters (34 bytes per 32).
    fn q8(b: f64) -> u64 {
        (b * 1e9 * 34.0 / 32.0) as u64
    }

    fn error(predicted: f64, measured: f64) -> f64 {
        (predicted - measured) / measured
    }

    #[test]
    fn dense_32b_on_a_v100_board_is_under_the_floor() {
        // Measured: 20 tok/s (the slow end of 20–28 for dense 27–32B on Volta).
        let t = from_declared(q8(32.8), Some((32.8, None)), Some("Qwen2.5-32B-Q8_0.gguf"));
        let d = decode(&t, &pool("v100_sxm2", 4, Link::Nvlink)).unwrap();
        assert!(d.expected < 40.0);
        assert!((d.ceiling - 25.8).abs() < 0.5, "{}", d.ceiling);
        let e = error(d.expected, 20.0);
        assert!(e.abs() < 0.05, "{:.3}: {}", e, d.why); // +2.4%
        assert!(d.why.starts_with("dense 33B at Q8_0 reads ~3"), "{}", d.why);
        assert!(
            d.why
                .contains("GB per token; 4 × V100 SXM2 over NVLink give at most ~26 tokens/s"),
            "{}",
            d.why
        );
    }

    #[test]
    fn dense_27b_on_a_v100_board_is_under_the_floor() {
        // Measured: 28 tok/s (the fast end of 20–28).
        let t = from_declared(q8(27.0), Some((27.0, None)), None);
        let d = decode(&t, &pool("v100_sxm2", 4, Link::Nvlink)).unwrap();
        assert!(d.expected < 40.0);
        let e = error(d.expected, 28.0);
        assert!(e.abs() < 0.15, "{e:.3}"); // −10.9%
    }

    #[test]
    fn moe_122b_a10b_on_one_nvlink_board_of_four() {
        // Measured: ~50 tok/s; Q6_K weights (93.8 GiB), 10B of 122B active per token.
        let t = from_declared(
            (93.8 * (1u64 << 30) as f64) as u64,
            Some((122.0, Some(10.0))),
            Some("Qwen3.5-122B-A10B-Q6_K.gguf"),
        );
        assert!(t.moe);
        let d = decode(&t, &pool("v100_sxm2", 4, Link::Nvlink)).unwrap();
        assert!(d.expected > 40.0);
        let e = error(d.expected, 50.0);
        assert!(e.abs() < 0.1, "{e:.3}: {}", d.why); // +7.2%
    }

    #[test]
    fn gemma_26b_a4b_at_q8() {
        // Measured: ~113 tok/s on an NVLink pair of V100s.
        let t = from_declared(q8(26.0), Some((26.0, Some(4.0))), None);
        let d = decode(&t, &pool("v100_sxm2", 2, Link::Nvlink)).unwrap();
        assert!(d.expected > 40.0);
        let e = error(d.expected, 113.0);
        assert!(e.abs() < 0.1, "{e:.3}"); // −7.2%
    }

    #[test]
    fn pcie_costs_more_than_nvlink() {
        let t = from_declared(q8(30.5), Some((30.5, Some(3.3))), None);
        let nv = decode(&t, &pool("v100_sxm2", 2, Link::Nvlink)).unwrap();
        let pc = decode(&t, &pool("v100_sxm2", 2, Link::Pcie)).unwrap();
        assert!(pc.expected < nv.expected * 0.9);
        assert!(pc.why.contains("over PCIe"));
    }

    #[test]
    fn unknown_bandwidth_gives_no_estimate() {
        let mut p = pool("v100_sxm2", 1, Link::Nvlink);
        p.bandwidth = None;
        assert!(decode(&from_declared(1 << 30, None, None), &p).is_none());
    }

    #[test]
    fn gguf_experts_count_by_their_share() {
        use crate::gguf::write::{gguf, Meta};
        let bytes = gguf(
            &[
                ("general.architecture", Meta::Str("qwen3moe")),
                ("qwen3moe.expert_count", Meta::U32(8)),
                ("qwen3moe.expert_used_count", Meta::U32(2)),
            ],
            &[
                ("token_embd.weight", &[256, 1000], 8),
                ("output.weight", &[256, 1000], 8),
                ("blk.0.attn_q.weight", &[256, 256], 8),
                ("blk.0.ffn_up_exps.weight", &[256, 512, 8], 8),
            ],
        );
        let h = gguf::Header::read(&mut bytes.as_slice()).unwrap();
        let t = from_gguf(&h).unwrap();
        let q = |e: u64| e / 32 * 34;
        // The embedding is a lookup (an output layer exists); a quarter of the experts.
        assert_eq!(t.bytes, q(256_000) + q(65_536) + q(256 * 512 * 8) / 4);
        assert!(t.moe);
        assert!(t.what.starts_with("mixture of experts"), "{}", t.what);
        assert!(t.what.ends_with("at Q8_0"), "{}", t.what);
    }
}
