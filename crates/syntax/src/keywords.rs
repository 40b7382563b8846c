//! The words the language reserves: top-level declarations and each block's settings. One
//! list, read by the parser's recovery messages, the formatter and the language server.

/// Words that start a top-level declaration.
pub const TOP: &[&str] = &[
    "workflow",
    "matter",
    "ledger",
    "use",
    "pool",
    "model",
    "sources",
    "stage",
    "tool",
    "verify",
    "output",
    "template",
    "ruleset",
    "production",
];

pub const POOL: &[&str] = &[
    "host",
    "gpus",
    "link",
    "vram",
    "compute",
    "serve",
    "slots",
    "binary",
    "api_key",
    "gpu",
    "bandwidth",
    "min_build",
];

/// Sampling settings, allowed in a `model` (its defaults) and in a `stage` (per stage).
pub const SAMPLING: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repeat_penalty",
    "seed",
    "max_tokens",
];

pub const MODEL: &[&str] = &[
    "gguf",
    "tag",
    "weights",
    "ctx",
    "kv",
    "kv_k",
    "kv_v",
    "flash_attn",
    "min_decode",
    "layers",
    "kv_heads",
    "head_dim",
    "quant",
    "dtype",
    "params",
];

pub const SOURCES: &[&str] = &["files", "bates", "description", "admit", "ocr"];

pub const STAGE: &[&str] = &[
    "model", "prompt", "reads", "after", "when", "returns", "stop", "revise", "timeout",
];

pub const TOOL: &[&str] = &["reads", "after"];

pub const PRODUCTION: &[&str] = &[
    "reads",
    "after",
    "volume",
    "bates",
    "legend",
    "designate",
    "redact",
    "withhold",
    "natives",
    "images",
    "fields",
];

/// A `verify` block's own settings; the claim kinds ([`CLAIM_KINDS`]) come on top.
pub const VERIFY: &[&str] = &["rules", "on", "judge"];

/// The kinds of claim a `verify` rule can name, from the verification contract's table.
pub const CLAIM_KINDS: &[&str] = &crate::claim_kind::PLURALS;

/// Every setting of every block, once each, in a stable order.
pub fn settings() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = Vec::new();
    for list in [
        POOL, MODEL, SAMPLING, SOURCES, STAGE, TOOL, VERIFY, PRODUCTION,
    ] {
        for k in list {
            if !all.contains(k) {
                all.push(k);
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_setting_is_listed_once() {
        let all = super::settings();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
        assert!(all.contains(&"min_decode") && all.contains(&"max_tokens"));
    }
}
