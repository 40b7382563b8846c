//! The checked workflow: every name resolved, every unit converted, every default filled in.
//! The checker produces it, the plan lowers it into run order, and the runtime reads it through
//! the plan; nothing after the checker sees the syntax tree.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

pub use super::condition::{CmpOp, Expr, Value};
pub use super::production::Bates;
pub use crate::server_kind::{MinBuild, ServerKind};

#[derive(Clone, Debug, Serialize)]
pub struct Workflow {
    pub name: String,
    pub description: String,
    /// Default matter folder, relative to the workflow file.
    pub matter: Option<String>,
    /// A shared ledger (`postgres://…`) named by `ledger`, in place of the store's own.
    pub ledger: Option<String>,
    pub pools: Vec<Pool>,
    pub models: Vec<Model>,
    pub sources: Vec<Sources>,
    /// Stages and tools in declaration order; the plan orders them.
    pub steps: Vec<Step>,
    pub verify: Vec<Verify>,
    pub outputs: Vec<Output>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    Nvlink,
    Pcie,
}

#[derive(Clone, Debug, Serialize)]
pub struct Pool {
    pub name: String,
    pub host: String,
    pub gpus: Vec<u32>,
    pub link: Option<Link>,
    /// Bytes of memory on each GPU, in the order of `gpus`.
    pub vram: Vec<u64>,
    pub compute: Option<f64>,
    pub server: ServerKind,
    pub endpoint: String,
    pub slots: u32,
    /// The server program, when the file names one.
    pub binary: Option<String>,
    /// The environment variable holding the pool's API key; the key itself is never in the
    /// plan, a record or a log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The GPU model, when declared (`gpu v100_sxm2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Memory bandwidth of each GPU in bytes per second: declared, or the GPU model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<u64>,
    /// The oldest llama.cpp build the pool's server may run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_build: Option<MinBuild>,
}

/// How fast a model can decode on its pool: decoding reads every active weight once per
/// token, so memory bandwidth bounds it.
#[derive(Clone, Debug, Serialize)]
pub struct Decode {
    /// Bytes read per generated token: attention and shared weights, plus the active
    /// experts' share for a mixture of experts.
    pub bytes_per_token: u64,
    pub moe: bool,
    /// Tokens/s if every byte moved at full bandwidth (layers on several GPUs run in turn).
    pub ceiling: f64,
    /// The share of the bandwidth llama.cpp reaches (dense 0.8, mixture of experts 0.5).
    pub efficiency: f64,
    /// Ceiling × efficiency, less the time tokens spend crossing between GPUs.
    pub expected: f64,
    /// The arithmetic in words.
    pub why: String,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Weights {
    /// A GGUF file, relative to the workflow file, as written.
    Gguf { path: String, present: bool },
    /// A model name the server knows (Ollama tag, OpenAI-compatible model id).
    Tag { tag: String },
}

/// What the GGUF header (or the file's declarations) say about the model's shape.
#[derive(Clone, Debug, Serialize)]
pub struct Shape {
    pub architecture: Option<String>,
    pub layers: u64,
    pub kv_heads_total: u64,
    pub key_length: u64,
    pub value_length: u64,
    pub trained_context: Option<u64>,
    pub experts: Option<u64>,
    pub experts_used: Option<u64>,
    pub from: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct Model {
    pub name: String,
    pub pool: String,
    pub weights: Weights,
    /// Bytes of weights, from the GGUF header or the declared size.
    pub weight_bytes: Option<u64>,
    pub weight_bytes_from: &'static str,
    pub ctx: u64,
    pub kv_k: String,
    pub kv_v: String,
    pub flash_attn: bool,
    pub shape: Option<Shape>,
    /// Bytes of KV cache at full context.
    pub kv_bytes: Option<u64>,
    pub min_decode: Option<f64>,
    /// The expected decode speed, when the pool's bandwidth is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode: Option<Decode>,
    pub quant: Option<String>,
    pub dtype: Option<String>,
    pub sampling: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sources {
    pub name: String,
    pub files: Vec<String>,
    pub bates: Option<Bates>,
    pub description: Option<String>,
    /// Files admitted on purpose although the intake guard would refuse them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub admit: Vec<Admit>,
    /// Pages that need OCR are read empty, not refused, when tesseract is missing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ocr_optional: bool,
}

impl Sources {
    /// The files admitted on purpose, as (file, reason).
    pub fn admitted(&self) -> Vec<(String, String)> {
        self.admit
            .iter()
            .map(|a| (a.file.clone(), a.reason.clone()))
            .collect()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Admit {
    /// The file, relative to the matter folder.
    pub file: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub name: String,
    #[serde(flatten)]
    pub kind: StepKind,
    /// Sources and steps whose content this step consumes.
    pub reads: Vec<String>,
    /// Steps that must finish first: `after`, plus the header's `after`.
    pub after: Vec<String>,
    /// Runs only when this holds; otherwise the step is skipped.
    pub when: Option<Expr>,
    /// True if this step's content is evidence (a source passed through a CPU tool unchanged
    /// in substance); false for anything a model wrote.
    pub evidence: bool,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepKind {
    Model(Box<ModelStage>),
    Tool(ToolStage),
}

#[derive(Clone, Debug, Serialize)]
pub struct ModelStage {
    pub model: String,
    pub prompt: Prompt,
    pub returns: Option<Vec<FieldType>>,
    pub stop_when: Option<Expr>,
    pub revise: Option<Revise>,
    /// The model's sampling defaults with this stage's overrides applied; `max_tokens` is
    /// always there (see [`OutputCap`]).
    pub sampling: BTreeMap<String, f64>,
    pub timeout_ms: Option<u64>,
    /// Where the stage's `max_tokens` comes from.
    pub cap: OutputCap,
}

/// Where a model stage's output cap (`max_tokens`) comes from: every model stage has one, so
/// a model that never stops ends at the cap, not at the stage's timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputCap {
    /// `max_tokens` in the stage.
    Stage,
    /// `max_tokens` in the model's defaults.
    Model,
    /// Not set: a JSON answer (the stage `returns` a record) gets an eighth of the model's
    /// context, at most [`OutputCap::JSON_MAX`] tokens.
    DefaultJson,
    /// Not set: prose gets a quarter of the model's context, at most
    /// [`OutputCap::PROSE_MAX`] tokens.
    DefaultProse,
}

impl OutputCap {
    pub const JSON_MAX: u64 = 1024;
    pub const PROSE_MAX: u64 = 4096;

    /// The default cap for a stage on a model of `ctx` tokens.
    pub fn default_for(returns: bool, ctx: u64) -> (OutputCap, u64) {
        if returns {
            (OutputCap::DefaultJson, (ctx / 8).clamp(64, Self::JSON_MAX))
        } else {
            (
                OutputCap::DefaultProse,
                (ctx / 4).clamp(128, Self::PROSE_MAX),
            )
        }
    }

    /// Where the cap comes from, as the plan says it.
    pub fn describe(self) -> &'static str {
        match self {
            OutputCap::Stage => "set by the stage",
            OutputCap::Model => "set by the model",
            OutputCap::DefaultJson => {
                "default for a JSON answer: an eighth of the model's context, at most 1024; set `max_tokens` in the stage to change it"
            }
            OutputCap::DefaultProse => {
                "default for prose: a quarter of the model's context, at most 4096; set `max_tokens` in the stage to change it"
            }
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Prompt {
    /// Where the template came from: `inline`, a file path, or `std.prompts.gate`.
    pub origin: String,
    pub text: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Revise {
    pub target: String,
    pub until: Expr,
    pub max_rounds: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct ToolStage {
    pub tool: String,
    pub options: BTreeMap<String, OptionValue>,
    /// A `production` step's volume, numbering, designations and redactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production: Option<Box<super::production::Production>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OptionValue {
    Text(String),
    Number(f64),
    Bool(bool),
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Text(t) => write!(f, "{t:?}"),
            OptionValue::Number(n) => write!(f, "{n}"),
            OptionValue::Bool(true) => f.write_str("on"),
            OptionValue::Bool(false) => f.write_str("off"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldType {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Type,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum Type {
    Bool,
    Text,
    Number,
    Date,
    List { of: Box<Type> },
    Record { fields: Vec<FieldType> },
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => f.write_str("bool"),
            Type::Text => f.write_str("text"),
            Type::Number => f.write_str("number"),
            Type::Date => f.write_str("date"),
            Type::List { of } => write!(f, "list of {of}"),
            Type::Record { fields } => write_record(f, fields),
        }
    }
}

pub fn write_record(f: &mut impl fmt::Write, fields: &[FieldType]) -> fmt::Result {
    f.write_str("{ ")?;
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{}: {}", field.name, field.ty)?;
    }
    f.write_str(" }")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Block,
    Revise,
    Flag,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Block => "block",
            Policy::Revise => "revise",
            Policy::Flag => "flag",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Verify {
    pub stage: String,
    pub against: Vec<String>,
    pub rules: Vec<VerifyRule>,
    pub on_failure: Policy,
    /// Rounds of revision when a rule's policy is `revise`.
    pub max_rounds: u32,
    /// Reporter abbreviations accepted beyond the citation catalogue (`allow reporter`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_reporters: Vec<String>,
    /// Prefixes of identifiers that are not Bates numbers (`ignore prefixes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_prefixes: Vec<String>,
    /// The model that judges `propositions must hold`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct VerifyRule {
    /// The kind of claim the rule covers, written as the rule names it (`citations`).
    #[serde(serialize_with = "plural")]
    pub claims: crate::claim_kind::Kind,
    /// What the rule requires of them; [`crate::claim_kind::KINDS`] says which kind allows what.
    pub must: crate::claim_kind::Must,
    pub policy: Policy,
    /// Where the rule came from: `inline` or a rule set such as `std.verify.strict`.
    pub from: String,
}

/// The fields a matter's own record — `matter.toml` or `matter.json` in the matter folder —
/// may hold, given to every template as `{{matter.FIELD}}` beside `matter.name` and
/// `matter.dir` (and to documents for their caption).
pub const MATTER_RECORD_FIELDS: &[&str] = &[
    "title",
    "client",
    "addressee",
    "address",
    "subject",
    "court",
    "county",
    "case_number",
    "plaintiff",
    "defendant",
    "parties",
    "affiant",
    "attorney",
    "firm",
    "judge",
    "date",
];

#[derive(Clone, Debug, Serialize)]
pub struct Output {
    pub path: String,
    pub from: String,
    pub format: String,
    pub appendix: Option<String>,
    /// A document's layout (`layout letter`); none: a pleading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Declared `unverified`: no `verify` block checks its stage, and the document says so.
    /// Left out of the plan when false, so plans (and their hashes) stay as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
}

/// The layouts a `.docx` or `.pdf` output can be given: `pleading` (court caption, the
/// default), `letter` and `memo`.
pub const LAYOUTS: &[&str] = &["pleading", "letter", "memo"];

/// What a document closes with after its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closing {
    /// The signature block and jurat an affidavit is sworn with.
    Jurat,
}

impl Output {
    /// The document's title: the file's stem, `-` and `_` read as spaces.
    pub fn title(&self) -> String {
        std::path::Path::new(&self.path)
            .file_stem()
            .map(|s| s.to_string_lossy().replace(['-', '_'], " "))
            .unwrap_or_default()
    }

    /// How a document is laid out: as declared (`layout letter`); else a letter when its name
    /// says so (`demand-letter.docx`), a memo when a word of its name is `memo`, otherwise a
    /// pleading (affidavits, declarations, motions).
    pub fn layout(&self) -> &str {
        if let Some(l) = &self.layout {
            return l;
        }
        let title = self.title().to_ascii_lowercase();
        if title.contains("letter") {
            "letter"
        } else if title.split_whitespace().any(|w| w == "memo") {
            "memo"
        } else {
            "pleading"
        }
    }

    /// An output named as an affidavit closes with a jurat; no other output has a closing.
    /// Derived from the path rather than stored, so the plan's format and hashes stay as they
    /// were.
    pub fn closing(&self) -> Option<Closing> {
        if self.layout() != "pleading" {
            return None;
        }
        self.title()
            .to_ascii_lowercase()
            .contains("affidavit")
            .then_some(Closing::Jurat)
    }
}

/// A claim kind as a rule names it.
fn plural<S: serde::Serializer>(k: &crate::claim_kind::Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.plural())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_is_declared_or_read_from_the_name() {
        let mut o = output("demand-letter.docx");
        assert_eq!(o.layout(), "letter");
        assert_eq!(output("research memo.pdf").layout(), "memo");
        assert_eq!(output("memorandum.docx").layout(), "pleading");
        assert_eq!(output("affidavit.docx").layout(), "pleading");
        o.layout = Some("pleading".into());
        assert_eq!(o.layout(), "pleading");
        let mut a = output("affidavit.docx");
        a.layout = Some("memo".into());
        assert_eq!(a.closing(), None, "a memo has no jurat");
    }

    fn output(path: &str) -> Output {
        Output {
            path: path.into(),
            from: "draft".into(),
            format: "docx".into(),
            appendix: None,
            layout: None,
            unverified: false,
        }
    }

    #[test]
    fn only_affidavits_close_with_a_jurat() {
        assert_eq!(
            output("out/Smith_Affidavit.docx").closing(),
            Some(Closing::Jurat)
        );
        assert_eq!(output("out/motion.docx").closing(), None);
        assert_eq!(
            output("out/Smith_Affidavit.docx").title(),
            "Smith Affidavit"
        );
    }

    #[test]
    fn default_output_caps_follow_the_answer_kind_and_the_context() {
        assert_eq!(
            OutputCap::default_for(true, 8192),
            (OutputCap::DefaultJson, 1024)
        );
        assert_eq!(
            OutputCap::default_for(false, 8192),
            (OutputCap::DefaultProse, 2048)
        );
        // Large contexts are capped; tiny ones still leave room for an answer.
        assert_eq!(OutputCap::default_for(true, 131_072).1, OutputCap::JSON_MAX);
        assert_eq!(
            OutputCap::default_for(false, 131_072).1,
            OutputCap::PROSE_MAX
        );
        assert_eq!(OutputCap::default_for(true, 256).1, 64);
        assert_eq!(OutputCap::default_for(false, 256).1, 128);
    }
}
