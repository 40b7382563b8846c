//! The abstract syntax tree: what a `.lex` file says, with a byte span on everything a
//! diagnostic may point at. No meaning is attached here; `check` does that.

use serde::Serialize;

pub use crate::compare::CmpOp;
use crate::diagnostic::Span;

/// A value with the span of the text it came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

pub type Name = Spanned<String>;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct File {
    pub items: Vec<Item>,
    /// Names of declarations that could not be read at all (`stgae draft { … }`): a reference
    /// to one is not reported again, since the declaration's own error is the root.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
}

/// Whether a setting was written but could not be read, so the checker must not call it
/// missing. `*` marks a declaration whose rest was lost to an unclosed comment or text.
pub fn is_broken(broken: &[String], key: &str) -> bool {
    broken.iter().any(|b| b == key || b == "*")
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "item", rename_all = "snake_case")]
pub enum Item {
    Workflow(WorkflowDecl),
    Matter(Spanned<String>),
    /// A shared ledger (`ledger "postgres://…"`) in place of the one inside the store.
    Ledger(Spanned<String>),
    Use(UseDecl),
    Pool(Box<PoolDecl>),
    Model(Box<ModelDecl>),
    Sources(SourcesDecl),
    Stage(Box<StageDecl>),
    Tool(ToolDecl),
    Verify(Box<VerifyDecl>),
    Ruleset(RulesetDecl),
    Output(OutputDecl),
    Template(TemplateDecl),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkflowDecl {
    pub name: Name,
    pub description: Option<Spanned<String>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UseDecl {
    pub target: UseTarget,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UseTarget {
    /// `use std.prompts`
    Module(Name),
    /// `use "common/pools.lex"`
    File(Spanned<String>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PoolDecl {
    pub name: Name,
    pub span: Span,
    pub host: Option<Spanned<String>>,
    pub gpus: Option<Spanned<Vec<Spanned<u32>>>>,
    pub link: Option<Name>,
    pub vram: Option<Spanned<Vram>>,
    pub compute: Option<Spanned<f64>>,
    pub serve: Option<Serve>,
    pub slots: Option<Spanned<u32>>,
    pub binary: Option<Spanned<String>>,
    /// The GPU model, from lexrun's table (`v100_sxm2`, `rtx3090`, …).
    pub gpu: Option<Name>,
    /// Memory bandwidth of each GPU, bytes per second.
    pub bandwidth: Option<Spanned<u64>>,
    /// The oldest llama.cpp build allowed, and why.
    pub min_build: Option<Spanned<u32>>,
    pub min_build_because: Option<Spanned<String>>,
    /// The environment variable holding the pool's API key (`api_key env "VAR"`).
    pub api_key_env: Option<Spanned<String>>,
    /// Settings whose lines did not parse; the checker does not call them missing.
    pub broken: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vram {
    /// `vram 4 x 32 GiB`
    Repeat { count: Spanned<u32>, size: u64 },
    /// `vram 32 GiB + 16 GiB`, or one size meaning every GPU has it.
    List(Vec<Spanned<u64>>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Serve {
    pub kind: Name,
    pub endpoint: Spanned<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelDecl {
    pub name: Name,
    pub pool: Name,
    pub span: Span,
    pub gguf: Option<Spanned<String>>,
    pub tag: Option<Spanned<String>>,
    pub weights: Option<Spanned<u64>>,
    pub ctx: Option<Spanned<u64>>,
    pub kv: Option<Name>,
    pub kv_k: Option<Name>,
    pub kv_v: Option<Name>,
    pub flash_attn: Option<Name>,
    pub min_decode: Option<Spanned<f64>>,
    pub layers: Option<Spanned<u32>>,
    pub kv_heads: Option<Spanned<u32>>,
    pub head_dim: Option<Spanned<u32>>,
    pub quant: Option<Name>,
    pub dtype: Option<Name>,
    /// Parameters in all and active per token, in billions (`params 122B active 10B`).
    pub params: Option<Spanned<f64>>,
    pub active: Option<Spanned<f64>>,
    pub sampling: Vec<SamplingSetting>,
    /// Settings whose lines did not parse; the checker does not call them missing.
    pub broken: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SamplingSetting {
    pub key: Name,
    pub value: Spanned<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SourcesDecl {
    pub name: Name,
    pub span: Span,
    pub files: Vec<Spanned<String>>,
    pub bates: Option<BatesDecl>,
    pub description: Option<Spanned<String>>,
    /// Files admitted on purpose although the intake guard would refuse them: (file, reason).
    pub admit: Vec<(Spanned<String>, Spanned<String>)>,
    /// `ocr optional`: pages needing OCR are read empty when tesseract is missing.
    pub ocr_optional: bool,
    /// Settings whose lines did not parse; the checker does not call them missing.
    pub broken: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BatesDecl {
    pub prefix: Spanned<String>,
    pub start: Option<Spanned<u64>>,
    pub width: Option<Spanned<u32>>,
    pub suffix: Option<Spanned<String>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageDecl {
    pub name: Name,
    pub span: Span,
    pub model: Option<Name>,
    pub prompt: Option<Prompt>,
    pub reads: Vec<Name>,
    pub after: Vec<Name>,
    pub when: Option<Cond>,
    pub returns: Option<Spanned<Vec<Field>>>,
    pub stop_when: Option<Cond>,
    pub revise: Option<Revise>,
    pub sampling: Vec<SamplingSetting>,
    pub timeout: Option<Spanned<u64>>,
    /// Settings whose lines did not parse; the checker does not call them missing.
    pub broken: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Prompt {
    /// `prompt """ … """` or `prompt "text with {{vars}}"`; the text as written (a block
    /// is dedented when the plan is built), with the span of the text inside the quotes.
    Inline(Spanned<String>),
    /// `prompt "prompts/gate.hbs"`
    File(Spanned<String>),
    /// `prompt std.prompts.gate` or `prompt my_template`
    Named(Name),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Field {
    pub name: Name,
    pub ty: Spanned<TypeExpr>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TypeExpr {
    /// `bool`, `text`, `number`, `date`, or an unknown word kept for the checker to report.
    Prim(String),
    List(Box<Spanned<TypeExpr>>),
    Record(Vec<Field>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Revise {
    pub target: Name,
    pub until: Cond,
    pub max_rounds: Option<Spanned<u32>>,
    pub span: Span,
}

/// A condition over stage answers: `not gate.grounds`, `attack.score >= 7 and …`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cond {
    Or(Vec<Cond>),
    And(Vec<Cond>),
    Not(Box<Cond>, Span),
    Compare {
        op: CmpOp,
        left: Operand,
        right: Operand,
    },
    IsEmpty {
        operand: Operand,
        negated: bool,
        span: Span,
    },
    Operand(Operand),
}

impl Cond {
    pub fn span(&self) -> Span {
        match self {
            Cond::Or(v) | Cond::And(v) => v
                .iter()
                .map(Cond::span)
                .reduce(Span::to)
                .unwrap_or_default(),
            Cond::Not(_, s) => *s,
            Cond::Compare { left, right, .. } => left.span().to(right.span()),
            Cond::IsEmpty { span, .. } => *span,
            Cond::Operand(o) => o.span(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operand {
    /// `grounds` (the stage's own answer) or `gate.grounds`.
    Field {
        stage: Option<Name>,
        field: Name,
    },
    Bool(Spanned<bool>),
    Number(Spanned<f64>),
    Text(Spanned<String>),
    /// `2024-01-05`
    Date(Spanned<String>),
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Field { stage, field } => {
                stage.as_ref().map_or(field.span, |s| s.span.to(field.span))
            }
            Operand::Bool(s) => s.span,
            Operand::Number(s) => s.span,
            Operand::Text(s) | Operand::Date(s) => s.span,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDecl {
    pub name: Name,
    pub kind: Name,
    pub span: Span,
    pub reads: Vec<Name>,
    pub after: Vec<Name>,
    pub options: Vec<ToolOption>,
    /// Settings whose lines did not parse; the checker does not call them missing.
    pub broken: Vec<String>,
    /// A `production` declaration's own settings (its kind is then `production`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub production: Option<Box<ProductionDecl>>,
}

impl ToolDecl {
    /// A tool named `name` of `kind`, with nothing read, waited for or set yet.
    pub fn new(name: Name, kind: Name, span: Span) -> ToolDecl {
        ToolDecl {
            name,
            kind,
            span,
            reads: Vec::new(),
            after: Vec::new(),
            options: Vec::new(),
            broken: Vec::new(),
            production: None,
        }
    }
}

/// `production NAME { … }`: a volume of documents handed to the other side.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProductionDecl {
    pub volume: Option<Spanned<String>>,
    pub bates: Option<BatesDecl>,
    /// `legend NAME "WORDS"`, in the order written (later is more protective).
    pub legends: Vec<(Name, Spanned<String>)>,
    /// `designate NAME "GLOB", …`
    pub designate: Vec<(Name, Vec<Spanned<String>>)>,
    pub redact: Vec<RedactDecl>,
    pub withhold: Vec<WithholdDecl>,
    /// Documents produced natively, by pattern.
    pub natives: Vec<Spanned<String>>,
    /// `images pdf` or `images tiff`.
    pub images: Option<Name>,
    /// The load file's fields, in order.
    pub fields: Vec<Name>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RedactDecl {
    pub what: RedactWhat,
    /// The reason the box is labelled with: `PII`, `PRIVILEGE`.
    pub reason: Spanned<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedactWhat {
    /// `ssn`, `account`, `dob`: a pattern lexrun knows.
    Kind(Name),
    /// `pattern "REGEX"`
    Pattern(Spanned<String>),
    /// `box "FILE" page N at X, Y, W, H` (points from the page's top-left corner).
    Box {
        file: Spanned<String>,
        page: Spanned<u32>,
        rect: Spanned<[f64; 4]>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WithholdDecl {
    pub files: Vec<Spanned<String>>,
    /// The privilege asserted.
    pub privilege: Spanned<String>,
    /// The description for the privilege log.
    pub because: Option<Spanned<String>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolOption {
    pub key: Name,
    pub value: Spanned<OptionValue>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionValue {
    Text(String),
    Number(f64),
    Size(u64),
    DurationMs(u64),
    Word(String),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerifyDecl {
    pub target: Name,
    pub against: Vec<Name>,
    pub span: Span,
    pub body: VerifyBody,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RulesetDecl {
    pub name: Name,
    pub span: Span,
    pub body: VerifyBody,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VerifyBody {
    pub rules: Vec<Rule>,
    pub includes: Vec<Name>,
    pub on_failure: Option<OnFailure>,
    /// `allow reporter "…"`: what is allowed (`reporter`) and the abbreviations.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<(Name, Vec<Spanned<String>>)>,
    /// `ignore prefixes "…"`: what is ignored (`prefixes`) and the prefixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<(Name, Vec<Spanned<String>>)>,
    /// `judge MODEL`: the model that judges propositions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<Name>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rule {
    pub kind: Name,
    pub requirement: Name,
    pub policy: Option<Name>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OnFailure {
    pub policy: Name,
    pub max_rounds: Option<Spanned<u32>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutputDecl {
    pub path: Spanned<String>,
    pub from: Name,
    pub appendix: Option<Name>,
    /// `layout letter`: how a document is laid out.
    pub layout: Option<Name>,
    /// `unverified`: written although no `verify` block checks its stage, on purpose.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TemplateDecl {
    pub name: Name,
    pub body: Prompt,
    pub span: Span,
}
