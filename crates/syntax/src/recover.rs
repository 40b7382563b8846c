//! Diagnostics for text the grammar's catch-all rules swallowed.
//!
//! The catch-alls tell us *where* something went wrong (one setting, one declaration); this
//! module finds *what*: it re-parses the swallowed text with the rule it was meant to match and
//! turns pest's expectations into words a paralegal can act on.
//!
//! One concept over 600 lines: the message for each kind of swallowed setting lives here, side
//! by side, so that the wording stays consistent across blocks.

use pest::error::{ErrorVariant, InputLocation};
use pest::Parser as _;

use super::grammar::{with_pest, Block, LexParser, Rule};
use super::keywords;
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::suggest::did_you_mean;

fn block_keys(block: Block) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = match block {
        Block::Pool => keywords::POOL.to_vec(),
        Block::Model => keywords::MODEL.to_vec(),
        Block::Sources => keywords::SOURCES.to_vec(),
        Block::Stage => keywords::STAGE.to_vec(),
        Block::Tool => keywords::TOOL.to_vec(),
        Block::Verify => [keywords::CLAIM_KINDS, keywords::VERIFY].concat(),
        Block::Production => keywords::PRODUCTION.to_vec(),
    };
    if matches!(block, Block::Model | Block::Stage) {
        keys.extend_from_slice(keywords::SAMPLING);
    }
    keys
}

fn block_name(block: Block) -> &'static str {
    match block {
        Block::Pool => "pool",
        Block::Model => "model",
        Block::Sources => "sources",
        Block::Stage => "stage",
        Block::Tool => "tool",
        Block::Verify => "verify",
        Block::Production => "production",
    }
}

/// The form each setting takes, shown as help when its value is malformed.
fn expected_form(key: &str) -> &'static str {
    match key {
        "host" => "write `host \"gpu-host-1\"`",
        "gpus" => "list GPU indices separated by commas: `gpus 4, 5, 8, 9`",
        "link" => "write `link nvlink` or `link pcie`",
        "vram" => "give the memory of each GPU: `vram 4 x 32 GiB`, `vram 32 GiB + 16 GiB`, or `vram 24 GiB`",
        "compute" => "give the CUDA compute capability: `compute 7.0` (V100) or `compute 8.6` (RTX 3090)",
        "serve" => "write `serve llama_cpp at \"http://127.0.0.1:8081\"` (or `ollama`, `openai`)",
        "slots" => "give a whole number: `slots 2`",
        "binary" => "give the path of the server program: `binary \"/opt/llama/llama-server\"`",
        "gpu" => "name the GPU model: `gpu v100_sxm2` (v100_sxm2, v100_pcie, t4, a100_40gb, a100_80gb, rtx3090, rtx4090, h100_pcie, h100_sxm)",
        "bandwidth" => "give each GPU's memory bandwidth: `bandwidth 900 GB/s`",
        "min_build" => "give a llama.cpp build number and why: `min_build 6123 because \"older builds garble long Gemma prompts\"`",
        "params" => "give the parameters in billions, and those active per token for a mixture of experts: `params 122B active 10B`",
        "api_key" => "name the environment variable that holds the key: `api_key env \"FIRM_KEY\"`",
        "gguf" => "give the model file in quotes: `gguf \"models/qwen.gguf\"`",
        "tag" => "give the server's model name in quotes: `tag \"gemma3:27b\"`",
        "weights" => "give a size with a unit: `weights 36 GiB` (units: KiB MiB GiB TiB KB MB GB TB)",
        "ctx" => "give the context in tokens: `ctx 32k` (k = 1024), `ctx 2M` or `ctx 8192`",
        "kv" | "kv_k" | "kv_v" => "name a cache type: `kv q8_0` (f32, f16, bf16, q8_0, q5_1, q5_0, q4_1, q4_0, iq4_nl)",
        "flash_attn" => "write `flash_attn on` or `flash_attn off`",
        "min_decode" => "write `min_decode 40 tok/s`",
        "layers" | "kv_heads" | "head_dim" => "give a whole number, e.g. `layers 48`",
        "quant" => "name the quantisation: `quant awq`, `quant gptq_marlin`, `quant fp8` or `quant none`",
        "dtype" => "name the compute type: `dtype float16` or `dtype bfloat16`",
        "files" => "list quoted patterns: `files \"intake/**/*.pdf\", \"intake/**/*.txt\"`",
        "bates" => "write `bates \"SMITH\" start 1 width 6`",
        "description" => "write `description \"Client intake materials\"`",
        "ocr" => "write `ocr optional` to read scans without OCR as empty pages when tesseract is missing",
        "admit" => "write `admit \"drafts/old.md\" because \"the client signed this version\"`",
        "model" => "name a declared model: `model drafter`",
        "prompt" => "give a template: `prompt std.prompts.gate`, `prompt \"prompts/gate.hbs\"` or `prompt \"\"\" … \"\"\"`",
        "reads" => "list sources and earlier stages: `reads client, draft`",
        "after" => "list earlier stages: `after gate, draft`",
        "when" => "give a condition on an earlier answer: `when gate.needs_figures`",
        "returns" => "declare fields and types: `returns { grounds: bool, reason: text, items: list of text }`",
        "stop" => "write `stop when not grounds`",
        "revise" => "write `revise draft until passes, at most 3 rounds`",
        "timeout" => "give a duration: `timeout 10m` (ms, s, m, h)",
        "rules" => "name a rule set: `rules std.verify.strict`",
        "on" => "write `on failure block`, `on failure revise, at most 2 rounds` or `on failure flag`",
        "citations" | "statutes" | "dates" | "amounts" => "write e.g. `citations must appear` (optionally `or flag`)",
        "bates_rule" => "write `bates must exist`",
        "quotes" => "write `quotes must match exactly`",
        "volume" => "name the volume: `volume \"VOL001\"`",
        "legend" => "name a designation and its words: `legend aeo \"HIGHLY CONFIDENTIAL – ATTORNEYS' EYES ONLY\"`",
        "designate" => "give a declared legend and the documents it covers: `designate aeo \"finance/**\"`",
        "redact" => "write `redact ssn as \"PII\"`, `redact pattern \"ACCT-[0-9]+\" as \"PII\"` or `redact box \"letter.pdf\" page 1 at 72, 90, 200, 14 as \"PRIVILEGE\"`",
        "withhold" => "write `withhold \"memo/**\" as \"Attorney-Client Privilege\" because \"Advice on the lease\"`",
        "natives" => "list quoted patterns of documents produced natively: `natives \"**/*.xlsx\"`",
        "images" => "write `images pdf` or `images tiff`",
        "fields" => "list load-file fields: `fields BEGBATES, ENDBATES, PGCOUNT`",
        "temperature" | "top_p" | "top_k" | "min_p" | "repeat_penalty" | "seed" | "max_tokens" => {
            "give a number, e.g. `temperature 0.2`"
        }
        _ => "",
    }
}

fn entry_rule(key: &str, block: Block) -> Option<Rule> {
    Some(match (block, key) {
        (_, k) if keywords::SAMPLING.contains(&k) => Rule::sampling_e,
        (Block::Pool, "host") => Rule::host_e,
        (Block::Pool, "gpus") => Rule::gpus_e,
        (Block::Pool, "link") => Rule::link_e,
        (Block::Pool, "vram") => Rule::vram_e,
        (Block::Pool, "compute") => Rule::compute_e,
        (Block::Pool, "serve") => Rule::serve_e,
        (Block::Pool, "slots") => Rule::slots_e,
        (Block::Pool, "binary") => Rule::binary_e,
        (Block::Pool, "gpu") => Rule::gpu_e,
        (Block::Pool, "bandwidth") => Rule::bandwidth_e,
        (Block::Pool, "min_build") => Rule::min_build_e,
        (Block::Model, "params") => Rule::params_e,
        (Block::Pool, "api_key") => Rule::api_key_e,
        (Block::Model, "gguf") => Rule::gguf_e,
        (Block::Model, "tag") => Rule::tag_e,
        (Block::Model, "weights") => Rule::weights_e,
        (Block::Model, "ctx") => Rule::ctx_e,
        (Block::Model, "kv") => Rule::kv_e,
        (Block::Model, "kv_k") => Rule::kv_k_e,
        (Block::Model, "kv_v") => Rule::kv_v_e,
        (Block::Model, "flash_attn") => Rule::flash_e,
        (Block::Model, "min_decode") => Rule::min_decode_e,
        (Block::Model, "layers") => Rule::layers_e,
        (Block::Model, "kv_heads") => Rule::kv_heads_e,
        (Block::Model, "head_dim") => Rule::head_dim_e,
        (Block::Model, "quant") => Rule::quant_e,
        (Block::Model, "dtype") => Rule::dtype_e,
        (Block::Sources, "files") => Rule::files_e,
        (Block::Sources, "bates") => Rule::bates_e,
        (Block::Sources, "description") => Rule::description_e,
        (Block::Sources, "admit") => Rule::admit_e,
        (Block::Sources, "ocr") => Rule::ocr_e,
        (Block::Stage, "model") => Rule::model_e,
        (Block::Stage, "prompt") => Rule::prompt_e,
        (Block::Stage | Block::Tool | Block::Production, "reads") => Rule::reads_e,
        (Block::Stage | Block::Tool | Block::Production, "after") => Rule::after_e,
        (Block::Production, "volume") => Rule::volume_e,
        (Block::Production, "bates") => Rule::bates_e,
        (Block::Production, "legend") => Rule::legend_e,
        (Block::Production, "designate") => Rule::designate_e,
        (Block::Production, "redact") => Rule::redact_e,
        (Block::Production, "withhold") => Rule::withhold_e,
        (Block::Production, "natives") => Rule::natives_e,
        (Block::Production, "images") => Rule::images_e,
        (Block::Production, "fields") => Rule::fields_e,
        (Block::Stage, "when") => Rule::when_e,
        (Block::Stage, "returns") => Rule::returns_e,
        (Block::Stage, "stop") => Rule::stop_e,
        (Block::Stage, "revise") => Rule::revise_e,
        (Block::Stage, "timeout") => Rule::timeout_e,
        (Block::Verify, "rules") => Rule::rules_e,
        (Block::Verify, "on") => Rule::on_failure_e,
        (Block::Verify, "judge") => Rule::judge_e,
        (Block::Verify, _) => Rule::rule_e,
        _ => return None,
    })
}

fn decl_rule(word: &str) -> Option<Rule> {
    Some(match word {
        "workflow" => Rule::workflow_decl,
        "matter" => Rule::matter_decl,
        "ledger" => Rule::ledger_decl,
        "use" => Rule::use_decl,
        "pool" => Rule::pool_decl,
        "model" => Rule::model_decl,
        "sources" => Rule::sources_decl,
        "stage" => Rule::stage_decl,
        "tool" => Rule::tool_decl,
        "verify" => Rule::verify_decl,
        "output" => Rule::output_decl,
        "template" => Rule::template_decl,
        "ruleset" => Rule::ruleset_decl,
        "production" => Rule::production_decl,
        _ => return None,
    })
}

fn decl_form(word: &str) -> &'static str {
    match word {
        "workflow" => "write `workflow NAME \"description\"`",
        "matter" => "write `matter \"matters/smith-v-acme\"`",
        "use" => "write `use std.prompts` or `use \"common.lex\"`",
        "pool" => "write `pool NAME { gpus … vram … serve KIND at \"URL\" }`",
        "model" => "write `model NAME on POOL { gguf \"…\" ctx 32k … }`",
        "sources" => "write `sources NAME { files \"intake/**/*.pdf\" }`",
        "stage" => "write `stage NAME after OTHER when COND { model … prompt … }`",
        "tool" => "write `tool NAME runs bates { reads SOURCES … }`",
        "verify" => "write `verify STAGE against SOURCES { citations must appear … }`",
        "output" => "write `output \"affidavit.docx\" from STAGE`",
        "template" => "write `template NAME \"prompts/file.hbs\"`",
        "ruleset" => "write `ruleset NAME { citations must appear … }`",
        "production" => {
            "write `production NAME { reads SOURCES  bates \"PREFIX\" start 1 width 7 … }`"
        }
        _ => "",
    }
}

/// The name a declaration that did not parse was meant to declare (`stgae draft {` declares
/// `draft`), so references to it are not reported as unknown as well; `verify STAGE` for a
/// `verify` block that did not parse.
pub(crate) fn declared_name(text: &str) -> Option<String> {
    let word = first_word(text);
    let meant = decl_rule(word)
        .map(|_| word.to_string())
        .or_else(|| {
            let ascii = super::lexical::skeleton(word);
            keywords::TOP.contains(&ascii.as_str()).then_some(ascii)
        })
        .or_else(|| did_you_mean(word, keywords::TOP.iter().copied()).map(str::to_string))?;
    if meant == "workflow" {
        return Some(meant);
    }
    let rest = text[word.len()..].trim_start();
    let name = first_word(rest);
    if name.is_empty() {
        return None;
    }
    match meant.as_str() {
        "pool" | "model" | "sources" | "stage" | "tool" | "template" | "ruleset" => {
            Some(name.to_string())
        }
        // Not a declaration of a name: recorded so the stage is not called unverified, or
        // the file said to have no header.
        "verify" => Some(format!("verify {name}")),
        _ => None,
    }
}

fn first_word(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// A malformed setting inside a block, and the setting it was meant to be (if that is clear),
/// so the checker does not also report that setting as missing.
pub(crate) fn bad_entry(
    text: &str,
    base: usize,
    file: FileId,
    block: Block,
) -> (Diagnostic, Option<String>) {
    let word = first_word(text);
    let keys = block_keys(block);
    let starts_with_letter = text.starts_with(|c: char| c.is_alphabetic() || c == '_');
    if let Some(d) = dangling_condition(text, base, file) {
        return (d, None);
    }
    if word.is_empty() || !starts_with_letter {
        let tok = token_at(text, 0);
        let d = Diagnostic::new(Code::Syntax, format!("unexpected {}", describe_token(tok)))
            .in_file(file)
            .label(
                Span::new(base, base + tok.len().max(1)),
                "expected a setting here",
            )
            .help(format!(
                "each setting is a name and its value, such as `slots 2`; settings of a {} are: {}",
                block_name(block),
                keys.join(", ")
            ));
        return (d, None);
    }
    if keys.contains(&word) {
        let rule = entry_rule(word, block).unwrap_or(Rule::bad_entry);
        let help_key = if block == Block::Verify && word == "bates" {
            "bates_rule"
        } else {
            word
        };
        let d = unit_error(text, base, file, help_key)
            .unwrap_or_else(|| reparse(text, base, file, rule, expected_form(help_key)));
        return (d, Some(word.to_string()));
    }
    let other = [
        Block::Pool,
        Block::Model,
        Block::Sources,
        Block::Stage,
        Block::Verify,
    ]
    .into_iter()
    .find(|b| *b != block && block_keys(*b).contains(&word));
    let word_span = Span::new(base, base + word.len());
    let mut d = Diagnostic::new(
        Code::UnknownSetting,
        format!("a {} has no setting `{word}`", block_name(block)),
    )
    .in_file(file)
    .label(word_span, "unknown setting");
    let suggestion = did_you_mean(word, keys.iter().copied());
    d = match (other, suggestion) {
        (_, Some(s)) => d.help(format!("did you mean `{s}`?")),
        (Some(b), None) => d.help(format!(
            "`{word}` is a setting of a {}; a {} takes: {}",
            block_name(b),
            block_name(block),
            keys.join(", ")
        )),
        (None, None) => d.help(format!(
            "settings of a {} are: {}",
            block_name(block),
            keys.join(", ")
        )),
    };
    (d, suggestion.map(str::to_string))
}

/// A condition cut short: `stop when score >=` or `when a and`. The grammar takes the part that
/// parses as the setting and leaves the rest here.
fn dangling_condition(text: &str, base: usize, file: FileId) -> Option<Diagnostic> {
    let ops = ["==", "!=", "<=", ">=", "<", ">"];
    let op = ops
        .iter()
        .find(|o| text.starts_with(**o))
        .map(|o| o.to_string())
        .or_else(|| {
            let w = first_word(text);
            matches!(w, "and" | "or" | "is").then(|| w.to_string())
        })?;
    Some(
        Diagnostic::new(Code::Syntax, format!("the condition before `{op}` does not continue"))
            .in_file(file)
            .label(Span::new(base, base + text.trim_end().len()), "cannot be read as part of the condition")
            .help("a condition is a field, a comparison with a value (`score >= 7`, `filed < 2024-01-05`), `is empty`, joined by `and`/`or`"),
    )
}

/// `32q`, `32 GiBs`: a number glued to a unit lexrun does not know.
fn unit_error(text: &str, base: usize, file: FileId, key: &str) -> Option<Diagnostic> {
    let units: &[&str] = match key {
        "ctx" => &["k", "K", "M"],
        "weights" | "vram" => &["KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB"],
        "timeout" => &["ms", "s", "m", "h"],
        "min_decode" => &["tok/s"],
        _ => return None,
    };
    let mut offset = 0;
    for tok in text.split_inclusive(|c: char| c.is_whitespace() || c == '+' || c == ',') {
        let t = tok.trim_end_matches(|c: char| c.is_whitespace() || c == '+' || c == ',');
        let digits = t.len()
            - t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
                .len();
        if digits > 0 && digits < t.len() {
            let unit = &t[digits..];
            if !units.contains(&unit) && unit.chars().all(|c| c.is_alphanumeric() || c == '/') {
                let span = Span::new(base + offset + digits, base + offset + t.len());
                let mut d = Diagnostic::new(
                    Code::BadUnit,
                    format!("`{unit}` is not a unit lexrun knows here"),
                )
                .in_file(file)
                .label(span, "unknown unit");
                d = match memory_unit(key, unit)
                    .or_else(|| did_you_mean(unit, units.iter().copied()))
                {
                    Some(s) => d.help(format!(
                        "did you mean `{}{s}`? {}",
                        &t[..digits],
                        expected_form(key)
                    )),
                    None => d.help(expected_form(key)),
                };
                return Some(d);
            }
        }
        // The word after a number may be a unit on its own (`32 GiBs`); in `vram 4 x 32 GiB`
        // the `x` is the language's own.
        if key != "ctx"
            && !(key == "vram" && (t == "x" || t == "×" || t == "X"))
            && digits == 0
            && !t.is_empty()
            && offset > 0
            && !units.contains(&t)
            && t.chars().all(|c| c.is_ascii_alphabetic())
            && key != "min_decode"
        {
            let prev = text[..offset].trim_end();
            if prev.ends_with(|c: char| c.is_ascii_digit()) {
                let span = Span::new(base + offset, base + offset + t.len());
                let mut d = Diagnostic::new(
                    Code::BadUnit,
                    format!("`{t}` is not a unit lexrun knows here"),
                )
                .in_file(file)
                .label(span, "unknown unit");
                d = match memory_unit(key, t).or_else(|| did_you_mean(t, units.iter().copied())) {
                    Some(s) => d.help(format!("did you mean `{s}`? {}", expected_form(key))),
                    None => d.help(expected_form(key)),
                };
                return Some(d);
            }
        }
        offset += tok.len();
    }
    None
}

/// `32G`, `32 gb`, `32Gi`: the unit a person means for memory. GPU memory is counted in
/// binary units (a "32 GB" V100 has 32 GiB), so a bare `G` means `GiB`.
fn memory_unit(key: &str, unit: &str) -> Option<&'static str> {
    if !matches!(key, "vram" | "weights") {
        return None;
    }
    Some(match unit.to_ascii_lowercase().as_str() {
        "g" | "gi" | "gib" | "gbs" | "gigs" => "GiB",
        "m" | "mi" | "mib" => "MiB",
        "t" | "ti" | "tib" => "TiB",
        "k" | "ki" | "kib" => "KiB",
        "gb" => "GB",
        "mb" => "MB",
        "tb" => "TB",
        _ => return None,
    })
}

/// A declaration that did not parse at all.
pub(crate) fn bad_item(text: &str, base: usize, file: FileId) -> Diagnostic {
    let word = first_word(text);
    if let Some(rule) = decl_rule(word) {
        if let Some(d) = unclosed_brace(text, base, file) {
            return d;
        }
        return reparse(text, base, file, rule, decl_form(word));
    }
    let tok = token_at(text, 0);
    let span = Span::new(base, base + tok.len().max(1));
    let mut d = Diagnostic::new(
        Code::Syntax,
        format!("expected a declaration, found {}", describe_token(tok)),
    )
    .in_file(file)
    .label(span, "not a declaration");
    d = match did_you_mean(word, keywords::TOP.iter().copied()) {
        Some(s) if !word.is_empty() => d.help(format!("did you mean `{s}`?")),
        _ if tok == "}" => {
            d.help("this `}` closes no block; remove it, or look for a missing `{` above")
        }
        _ => d.help(format!(
            "a .lex file is a list of declarations: {}",
            keywords::TOP.join(", ")
        )),
    };
    d
}

fn unclosed_brace(text: &str, base: usize, file: FileId) -> Option<Diagnostic> {
    let mut depth = 0i32;
    let mut first_open = None;
    let mut in_str = false;
    let mut prev = '\0';
    for (i, c) in text.char_indices() {
        if in_str {
            if c == '"' && prev != '\\' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else if c == '{' {
            if depth == 0 {
                first_open = Some(i);
            }
            depth += 1;
        } else if c == '}' {
            depth -= 1;
        }
        prev = c;
    }
    let open = first_open?;
    (depth > 0).then(|| {
        Diagnostic::new(Code::Syntax, "this block is never closed")
            .in_file(file)
            .label(Span::new(base + open, base + open + 1), "opened here")
            .help("add a `}` at the end of the block")
    })
}

fn reparse(text: &str, base: usize, file: FileId, rule: Rule, form: &str) -> Diagnostic {
    match with_pest(true, || LexParser::parse(rule, text)) {
        Err(e) => pest_error(&e, text, base, file, Some(form)),
        Ok(pairs) => {
            // The setting parsed but something follows it.
            let used = pairs.last().map_or(0, |p| p.as_span().end());
            let rest = text[used..].trim_start();
            let at = text.len() - rest.len();
            let tok = token_at(text, at);
            let mut d = Diagnostic::new(
                Code::Syntax,
                format!(
                    "unexpected {} after `{}`",
                    describe_token(tok),
                    text[..used].trim()
                ),
            )
            .in_file(file)
            .label(
                Span::new(base + at, base + at + tok.len().max(1)),
                "unexpected",
            );
            d = d.help(if form.is_empty() {
                "remove it, or start a new setting on its own line".to_string()
            } else {
                form.to_string()
            });
            d
        }
    }
}

/// Converts a pest error into a diagnostic, naming what was expected in plain words.
pub(crate) fn pest_error(
    e: &pest::error::Error<Rule>,
    text: &str,
    base: usize,
    file: FileId,
    form: Option<&str>,
) -> Diagnostic {
    let mut pos = match e.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<String> = Vec::new();
    if let ErrorVariant::ParsingError { positives, .. } = &e.variant {
        for r in positives {
            if let Some(w) = describe_rule(*r) {
                expected.push(w.to_string());
            }
        }
    }
    if let Some(attempts) = e.parse_attempts() {
        if attempts.max_position >= pos {
            if attempts.max_position > pos {
                expected.clear();
            }
            pos = attempts.max_position;
            for t in attempts.expected_tokens() {
                // Ranges (`a..z`) and built-in rules say nothing a person can type.
                let token = t.to_string();
                let is_range = token.chars().count() == 4 && token.contains("..");
                if is_noise(&token)
                    || is_range
                    || token.chars().all(|c| c.is_ascii_uppercase() || c == '_') && token.len() > 3
                {
                    continue;
                }
                expected.push(format!("`{token}`"));
            }
            for stack in attempts.call_stacks() {
                if let Some(w) =
                    describe_rule(stack.deepest.get_rule().copied().unwrap_or(Rule::EOI))
                {
                    expected.push(w.to_string());
                }
            }
        }
    }
    expected.sort();
    expected.dedup();
    // A phrase such as "`block`, `revise` or `flag`" already names its words.
    let phrases: Vec<String> = expected
        .iter()
        .filter(|e| e.contains(' '))
        .cloned()
        .collect();
    expected.retain(|e| e.contains(' ') || !phrases.iter().any(|p| p.contains(e.as_str())));
    // `_` starts a name; saying "a name" is enough.
    if expected.iter().any(|e| e.starts_with("a name")) {
        expected.retain(|e| e != "`_`");
    }
    let pos = pos.min(text.len());
    let tok = token_at(text, pos);
    let message = if expected.is_empty() {
        format!("unexpected {}", describe_token(tok))
    } else {
        format!(
            "expected {}, found {}",
            join_or(&expected),
            describe_token(tok)
        )
    };
    let mut d = Diagnostic::new(Code::Syntax, message).in_file(file).label(
        Span::new(base + pos, base + pos + tok.len()),
        if tok.is_empty() {
            "text ends here"
        } else {
            "unexpected"
        },
    );
    if let Some(f) = form.filter(|f| !f.is_empty()) {
        d = d.help(f);
    } else {
        d = d.help("see the language tour in README.md for the form of each declaration");
    }
    d
}

/// Whitespace, comments and word-boundary checks are not what a person should be told to type.
fn is_noise(token: &str) -> bool {
    token.trim().is_empty() || token == "//" || token == "/*" || token == "\u{feff}"
}

fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The token starting at `pos`: a word, a quoted string, or one character.
fn token_at(text: &str, pos: usize) -> &str {
    let rest = &text[pos.min(text.len())..];
    let Some(c) = rest.chars().next() else {
        return "";
    };
    if c.is_alphanumeric() || c == '_' {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        &rest[..end]
    } else if c == '"' {
        let end = rest[1..].find(['"', '\n']).map_or(rest.len(), |i| i + 2);
        &rest[..end.min(rest.len())]
    } else {
        &rest[..c.len_utf8()]
    }
}

fn describe_token(tok: &str) -> String {
    match tok {
        "" => "the end of the file".to_string(),
        "\n" | "\r" => "the end of the line".to_string(),
        t => format!("`{t}`"),
    }
}

/// Plain words for the rules that can appear in an error; internal rules return `None`.
fn describe_rule(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::ident | Rule::field_path | Rule::prim_type => "a name",
        Rule::qual_name => "a name such as `std.prompts.gate`",
        Rule::tool_kind => "a tool (bates, merge, ocr, index, verify-draft)",
        Rule::string | Rule::text_block => "a quoted text",
        Rule::int => "a whole number",
        Rule::decimal => "a number",
        Rule::count => "a token count such as `32k`",
        Rule::size | Rule::size_num => "a size such as `32 GiB`",
        Rule::size_unit => "a unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)",
        Rule::duration => "a duration such as `10m`",
        Rule::date_lit => "a date such as `2024-01-05`",
        Rule::cond | Rule::disj | Rule::conj | Rule::neg | Rule::cmp => "a condition",
        Rule::cmp_op => "a comparison (==, !=, <, <=, >, >=)",
        Rule::record_type => "`{`",
        Rule::type_expr | Rule::list_type => {
            "a type (bool, text, number, date, list of …, record { … })"
        }
        Rule::requirement => "`appear`, `exist` or `match exactly`",
        Rule::policy => "`block`, `revise` or `flag`",
        Rule::kw_on => "`on`",
        Rule::kw_at => "`at`",
        Rule::kw_from => "`from`",
        Rule::kw_runs => "`runs`",
        Rule::kw_against => "`against`",
        Rule::kw_when => "`when`",
        Rule::kw_until => "`until`",
        Rule::kw_must => "`must`",
        Rule::kw_most => "`most`",
        Rule::kw_rounds => "`rounds`",
        Rule::kw_failure => "`failure`",
        Rule::kw_of => "`of`",
        Rule::kw_empty => "`empty`",
        Rule::after_clause | Rule::kw_after => "`after`",
        Rule::when_clause => "`when`",
        _ => return None,
    })
}
