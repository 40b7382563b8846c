//! Models whose GGUF file is on disk are checked from its header: weight size from the tensor
//! table, KV cache from the attention shape, the trained context. The files are generated here.

use std::fs;

use camino::{Utf8Path, Utf8PathBuf};
use lexrun::check::check_path;
use lexrun::gguf::write::{gguf, Meta};
use lexrun::gguf::Header;
use lexrun::plan::workflow::Weights;

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }
    fn path(&self) -> &Utf8Path {
        Utf8Path::from_path(self.0.path()).unwrap()
    }
    fn write(&self, name: &str, bytes: &[u8]) -> Utf8PathBuf {
        let p = self.path().join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, bytes).unwrap();
        p
    }
}

/// A MoE-shaped model: `layers` blocks, 32 query heads, 4 KV heads of 128, 8 experts, and
/// one Q8_0 tensor of `elements` values standing in for the weights.
fn moe_gguf(layers: u32, elements: u64) -> Vec<u8> {
    gguf(
        &[
            ("general.architecture", Meta::Str("qwen3moe")),
            ("qwen3moe.block_count", Meta::U32(layers)),
            ("qwen3moe.context_length", Meta::U32(40960)),
            ("qwen3moe.embedding_length", Meta::U32(4096)),
            ("qwen3moe.attention.head_count", Meta::U32(32)),
            ("qwen3moe.attention.head_count_kv", Meta::U32(4)),
            ("qwen3moe.attention.key_length", Meta::U32(128)),
            ("qwen3moe.attention.value_length", Meta::U32(128)),
            ("qwen3moe.expert_count", Meta::U32(128)),
            ("qwen3moe.expert_used_count", Meta::U32(8)),
        ],
        &[
            ("blk.0.ffn_gate_exps.weight", &[elements / 1024, 1024], 8),
            ("output_norm.weight", &[4096], 0),
        ],
    )
}

fn workflow(model_settings: &str, vram: &str) -> String {
    format!(
        "workflow w\npool p {{\n  gpus 0, 1\n  link nvlink\n  vram {vram}\n  serve llama_cpp at \"http://127.0.0.1:8081\"\n}}\nmodel m on p {{\n  gguf \"models/m.gguf\"\n{model_settings}\n}}\n"
    )
}

#[test]
fn weights_and_kv_come_from_the_header() {
    let dir = Dir::new();
    // 30 Gi elements of Q8_0 = 30 GiB × 34/32.
    dir.write("models/m.gguf", &moe_gguf(48, 30 << 30));
    let lex = dir.write(
        "w.lex",
        workflow("  ctx 32k  kv q8_0  flash_attn on", "2 x 32 GiB").as_bytes(),
    );
    let checked = check_path(&lex);
    let w = checked.workflow.expect("fits");
    let m = &w.models[0];
    assert!(matches!(m.weights, Weights::Gguf { present: true, .. }));
    assert_eq!(m.weight_bytes_from, "GGUF header");
    assert_eq!(m.weight_bytes, Some((30u64 << 30) / 32 * 34 + 4096 * 4));
    // 32768 tokens × 48 layers × 4 heads × (128 + 128) × 34/32 bytes.
    assert_eq!(m.kv_bytes, Some(32768 * 48 * 4 * 256 * 34 / 32));
    let shape = m.shape.as_ref().unwrap();
    assert_eq!((shape.experts, shape.experts_used), (Some(128), Some(8)));
    assert_eq!(shape.from, "GGUF header");
}

#[test]
fn a_header_too_big_for_the_pool_is_an_error_naming_both_sizes() {
    let dir = Dir::new();
    dir.write("models/m.gguf", &moe_gguf(48, 60 << 30));
    // The declared size is smaller, but the file on disk is what will be loaded.
    let lex = dir.write(
        "w.lex",
        workflow(
            "  weights 20 GiB  ctx 32k  kv q8_0  flash_attn on",
            "2 x 32 GiB",
        )
        .as_bytes(),
    );
    let checked = check_path(&lex);
    let d = checked
        .diagnostics
        .iter()
        .find(|d| d.code.id() == "E051")
        .expect("E051");
    assert!(d.message.contains("65.3 GiB"), "{}", d.message);
    assert!(d.message.contains("64.0 GiB"), "{}", d.message);
}

#[test]
fn kv_cache_alone_can_overflow_a_pool() {
    let dir = Dir::new();
    dir.write("models/m.gguf", &moe_gguf(48, 20 << 30));
    // f16 cache at 256k tokens: 256Ki × 48 × 4 × 256 × 2 bytes = 24 GiB on top of ~21 GiB.
    let lex = dir.write("w.lex", workflow("  ctx 256k", "32 GiB + 8 GiB").as_bytes());
    let codes: Vec<&str> = check_path(&lex)
        .diagnostics
        .iter()
        .map(|d| d.code.id())
        .collect();
    assert!(codes.contains(&"E051"), "{codes:?}");
    assert!(
        codes.contains(&"E063"),
        "256k is past the trained 40960: {codes:?}"
    );
}

#[test]
fn per_layer_kv_heads_are_summed() {
    let dir = Dir::new();
    let bytes = gguf(
        &[
            ("general.architecture", Meta::Str("hybrid")),
            ("hybrid.block_count", Meta::U32(4)),
            ("hybrid.embedding_length", Meta::U32(1024)),
            ("hybrid.attention.head_count", Meta::U32(8)),
            (
                "hybrid.attention.head_count_kv",
                Meta::U32Array(&[0, 2, 0, 2]),
            ),
        ],
        &[("w", &[1024, 1024], 1)],
    );
    dir.write("models/m.gguf", &bytes);
    let lex = dir.write("w.lex", workflow("  ctx 1k", "2 x 32 GiB").as_bytes());
    let w = check_path(&lex).workflow.expect("fits");
    // 1024 tokens × (0+2+0+2) heads × (128 + 128) × 2 bytes (f16).
    assert_eq!(w.models[0].kv_bytes, Some(1024 * 4 * 256 * 2));
}

#[test]
fn unreadable_ggufs_are_errors_not_panics() {
    let dir = Dir::new();
    let lex = dir.write("w.lex", workflow("  ctx 1k", "2 x 32 GiB").as_bytes());
    for bad in [
        &b""[..],
        b"GGUF",
        b"GGML\x03\0\0\0",
        b"GGUF\x09\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
    ] {
        dir.write("models/m.gguf", bad);
        let codes: Vec<&str> = check_path(&lex)
            .diagnostics
            .iter()
            .map(|d| d.code.id())
            .collect();
        assert!(codes.contains(&"E056"), "{bad:?}: {codes:?}");
    }
    // A truncated copy of a real header.
    let good = moe_gguf(2, 1 << 20);
    dir.write("models/m.gguf", &good[..good.len() / 2]);
    let checked = check_path(&lex);
    let d = checked
        .diagnostics
        .iter()
        .find(|d| d.code.id() == "E056")
        .unwrap();
    assert!(d.message.contains("truncated"), "{}", d.message);
}

#[test]
fn the_reader_reads_what_the_writer_wrote() {
    let dir = Dir::new();
    let p = dir.write("m.gguf", &moe_gguf(94, 1 << 30));
    let h = Header::read_path(p.as_std_path()).unwrap();
    assert_eq!(h.block_count(), Some(94));
    assert_eq!(h.architecture.as_deref(), Some("qwen3moe"));
    assert_eq!(h.tensor_types(), vec!["F32", "Q8_0"]);
}
