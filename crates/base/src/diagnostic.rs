//! One diagnostic type for every phase, with stable codes.
//!
//! Every mistake a person can make in a `.lex` file becomes a [`Diagnostic`]: a code from
//! [`Code`] (stable across releases, grouped by phase), a message, labelled spans in one source
//! file, and a help line that says how to fix it. Rendering goes through miette.

use std::fmt;
use std::sync::Arc;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};
use serde::Serialize;

mod clip;
mod label;

pub use label::{Label, Span};

/// Index of a file in a [`SourceMap`].
pub type FileId = usize;

/// The text of every file a check has read, so diagnostics can show the lines they point at.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

#[derive(Debug)]
pub struct SourceFile {
    /// The name shown in diagnostics: a path as the user gave it, or `std/<module>.lex`.
    pub name: String,
    pub text: String,
}

impl SourceMap {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile {
            name: name.into(),
            text: text.into(),
        });
        self.files.len() - 1
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id]
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A place in another file that explains a diagnostic: the imported declaration a user's
/// own line clashes with, or the stdlib template line behind an error at the user's `prompt`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub file: FileId,
    pub span: Span,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    /// The file the labels point into; `None` for problems outside any file (e.g. unreadable).
    pub file: Option<FileId>,
    pub message: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    /// Places in other files, shown after the diagnostic.
    pub notes: Vec<Note>,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            file: None,
            message: message.into(),
            labels: Vec::new(),
            help: None,
            notes: Vec::new(),
        }
    }

    pub fn in_file(mut self, file: FileId) -> Self {
        self.file = Some(file);
        self
    }

    pub fn label(mut self, span: Span, text: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            text: text.into(),
        });
        self
    }

    /// A place in another file (an import, the stdlib) that the user should see too.
    pub fn note(mut self, file: FileId, span: Span, text: impl Into<String>) -> Self {
        self.notes.push(Note {
            file,
            span,
            text: text.into(),
        });
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }

    /// Where the first label points, for sorting.
    pub fn position(&self) -> (Option<FileId>, usize) {
        (self.file, self.labels.first().map_or(0, |l| l.span.start))
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $name:ident = $id:literal, $sev:ident, $summary:literal; )*) => {
        /// Stable diagnostic codes, grouped by phase: E00x syntax, E01x names and imports,
        /// E02x stage graph, E03x types and conditions, E04x templates, E05x–E06x hardware,
        /// E07x sources, E08x outputs and verification, E09x tools, E10x test files.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $(#[$doc])* $name, )*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$name),*];

            /// The number part, e.g. `E010`.
            pub fn id(self) -> &'static str {
                match self { $(Code::$name => $id,)* }
            }

            pub fn severity(self) -> Severity {
                match self { $(Code::$name => Severity::$sev,)* }
            }

            /// One line saying what the code means, for `lexrun explain` and the docs.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$name => $summary,)* }
            }
        }
    };
}

codes! {
    Syntax = "E001", Error, "the text does not follow the .lex grammar";
    InvalidUtf8 = "E002", Error, "the file is not valid UTF-8 text";
    EmptyFile = "E003", Error, "the file is empty or holds only comments";
    BadUnit = "E004", Error, "a number has a unit lexrun does not know";
    NumberTooLarge = "E005", Error, "a number is too large";
    UnknownSetting = "E006", Error, "a setting that this kind of block does not have";
    InvalidValue = "E007", Error, "a setting's value has the wrong form";
    MissingWorkflow = "E008", Error, "the file has no `workflow` header, or more than one";
    DuplicateSetting = "E009", Error, "a setting is given twice in one block";
    UnknownName = "E010", Error, "a name that is not declared";
    DuplicateName = "E011", Error, "a name declared twice";
    ImportNotFound = "E012", Error, "a `use` that names no stdlib module or file";
    ImportCycle = "E013", Error, "files that `use` each other in a circle";
    WrongKind = "E014", Error, "a name of the wrong kind (e.g. a model where a stage is needed)";
    MissingSetting = "E015", Error, "a required setting is missing";
    UnreadableFile = "E016", Error, "a file could not be read";
    NonAscii = "E017", Error, "a character that is not ASCII where a name or symbol belongs (often a look-alike letter)";
    ImportOutside = "E018", Error, "a `use` of a file outside the workflow library";
    StageCycle = "E020", Error, "stages that wait on each other in a circle";
    ReadsLaterStage = "E021", Error, "a stage depends on a stage that does not run before it";
    BadRevise = "E022", Error, "a `revise` that cannot loop";
    UnknownField = "E030", Error, "a condition names a field that the stage does not return";
    NoReturns = "E031", Error, "a condition on a stage that has no `returns`";
    TypeMismatch = "E032", Error, "a condition compares values of different types";
    ForeignField = "E033", Error, "`stop when`/`until` must test the stage's own answer";
    DuplicateField = "E034", Error, "a field declared twice in `returns`";
    UnknownType = "E035", Error, "a type lexrun does not know in `returns`";
    TemplateSyntax = "E040", Error, "a prompt template does not parse";
    TemplateVariable = "E041", Error, "a prompt template uses a variable the stage does not provide";
    TemplateNotFound = "E042", Error, "a prompt template file does not exist";
    TemplateOutside = "E043", Error, "a prompt template outside the workflow library";
    TemplateUnreadable = "E044", Error, "a prompt names a file that is not a text template: a folder, or a binary file";
    EvidenceNotPlaced = "E045", Warning, "a stage reads sources, but its prompt never places the evidence (`{{evidence}}` or `{{sources.NAME}}`)";
    SharedGpu = "E050", Error, "two pools on one host claim the same GPU";
    VramExceeded = "E051", Error, "the models on a pool do not fit in its VRAM";
    QuantizedVNeedsFlash = "E052", Error, "a quantized V cache without flash attention";
    MixedKvWithFlash = "E053", Warning, "different K and V cache types with flash attention";
    PcieMultiGpu = "E054", Warning, "a model split across GPUs joined only by PCIe";
    ComputeTooLow = "E055", Error, "the pool's GPUs are too old for what the model asks of them";
    BadGguf = "E056", Error, "a GGUF file that cannot be read";
    NoWeights = "E057", Error, "a model with neither a GGUF file on disk nor a declared weight size";
    NoKvShape = "E058", Warning, "the KV cache cannot be estimated";
    ServerMismatch = "E059", Error, "a model's weights do not suit its pool's server";
    BadEndpoint = "E060", Error, "an endpoint URL that does not parse";
    VramCount = "E061", Error, "the VRAM list does not match the GPU list";
    DuplicateGpu = "E062", Error, "a GPU listed twice in one pool";
    CtxOverTrained = "E063", Warning, "a context larger than the model was trained for";
    UnusedPool = "E064", Warning, "a pool that no model uses";
    VramTight = "E065", Warning, "the models on a pool leave less than 10% of its VRAM free";
    DecodeUnderFloor = "E066", Warning, "the pool's memory bandwidth cannot decode the model at its min_decode";
    SelfPoisoning = "E070", Error, "a source glob that can read lexrun's own outputs";
    BadGlob = "E071", Error, "a file pattern that does not parse";
    BadBates = "E073", Error, "an invalid Bates numbering declaration";
    NoFiles = "E074", Error, "a `sources` block without `files`";
    BadAdmit = "E075", Error, "an `admit` without a reason, or of a file outside the matter";
    MatterOutside = "E076", Warning, "a matter folder outside the workflow's folder";
    NoMatchingFiles = "E077", Warning, "a `sources` block whose patterns match no file in the workflow's matter folder";
    NoMatter = "E078", Warning, "the workflow's `matter` folder does not exist";
    BadLedger = "E079", Error, "a `ledger` lexrun cannot use: not PostgreSQL, a password in the file, or two ledgers";
    BadOutput = "E080", Error, "an output path lexrun cannot write";
    DuplicateOutput = "E081", Error, "two outputs written to one path";
    VerifyAgainstOutput = "E082", Error, "verification against a stage's output instead of evidence";
    BadRule = "E083", Error, "a verification rule lexrun cannot apply";
    VerifyUnread = "E084", Error, "verification against sources the verified stage never reads";
    UnverifiedOutput = "E085", Warning, "a document (DOCX, PDF, Markdown) from a stage no `verify` block checks, not declared `unverified`";
    UnknownTool = "E090", Error, "a tool lexrun does not have";
    UnknownOption = "E091", Error, "a tool option that the tool does not take";
    TestFile = "E100", Error, "a line of a `.test.lex` file that `lexrun test` cannot read";
    UndefinedDesignation = "E110", Error, "a `designate` naming a legend the production does not declare";
    BadRedaction = "E111", Error, "a redaction rule lexrun cannot apply: an unknown or empty-matching pattern, a box outside the page";
    BadField = "E112", Error, "a load-file field lexrun does not write";
    ProductionPatternUnmatched = "E113", Warning, "a production's document pattern that matches no file in the matter";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lex::{}", self.id())
    }
}

/// More than this many diagnostics are summarised rather than shown: past the first hundred,
/// a person fixes the first ones and checks again.
pub const MAX_SHOWN: usize = 100;

/// Renders diagnostics the way a terminal shows them. `color` is for a TTY; tests and CI use
/// plain Unicode so snapshots are stable.
pub fn render(diagnostics: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    // A password written in a URL (`postgres://user:pass@…`) is starred out of every excerpt,
    // byte for byte, so that the spans still point where they did and an error pasted into
    // a ticket or a log carries no secret.
    let texts: Vec<Arc<str>> = sources
        .files
        .iter()
        .map(|f| Arc::from(crate::credentials::urls_in_place(&f.text).as_ref()))
        .collect();
    let mut out = String::new();
    for d in diagnostics.iter().take(MAX_SHOWN) {
        let view = View::new(d, sources, &texts);
        if handler.render_report(&mut out, &view).is_err() {
            out.push_str(&format!("{}: {}\n", d.code, clip::words(&d.message)));
        }
    }
    if diagnostics.len() > MAX_SHOWN {
        out.push_str(&format!(
            "… and {} more not shown; fix the first ones and check again\n",
            diagnostics.len() - MAX_SHOWN
        ));
    }
    out
}

/// A borrowed diagnostic (or one of its notes) with its source, in the shape miette renders.
/// Text is clipped on the way: a pasted 40 KB line is shown as a window around the mistake.
struct View {
    code: Option<Code>,
    severity: miette::Severity,
    message: String,
    help: Option<String>,
    labels: Vec<Label>,
    source: Option<NamedSource<Arc<str>>>,
    notes: Vec<View>,
}

impl View {
    fn new(d: &Diagnostic, sources: &SourceMap, texts: &[Arc<str>]) -> Self {
        let severity = match d.severity() {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        };
        let notes = d
            .notes
            .iter()
            .filter(|n| n.file < sources.len())
            .map(|n| {
                let label = Label {
                    span: n.span,
                    text: String::new(),
                };
                View::part(
                    None,
                    miette::Severity::Advice,
                    &n.text,
                    None,
                    &[label],
                    Some(n.file),
                    sources,
                    texts,
                )
            })
            .collect();
        let mut v = View::part(
            Some(d.code),
            severity,
            &d.message,
            d.help.as_deref(),
            &d.labels,
            d.file,
            sources,
            texts,
        );
        v.notes = notes;
        v
    }

    #[allow(clippy::too_many_arguments)]
    fn part(
        code: Option<Code>,
        severity: miette::Severity,
        message: &str,
        help: Option<&str>,
        labels: &[Label],
        file: Option<FileId>,
        sources: &SourceMap,
        texts: &[Arc<str>],
    ) -> Self {
        let mut labels: Vec<Label> = labels
            .iter()
            .map(|l| Label {
                span: l.span,
                text: clip::words(&l.text),
            })
            .collect();
        let source = file.filter(|&f| f < sources.len()).map(|f| {
            let text = match clip::long_lines(&texts[f], &mut labels) {
                Some(clipped) => Arc::from(clipped.as_str()),
                None => texts[f].clone(),
            };
            NamedSource::new(&sources.get(f).name, text)
        });
        View {
            code,
            severity,
            message: clip::words(message),
            help: help.map(clip::words),
            labels,
            source,
            notes: Vec::new(),
        }
    }
}

impl fmt::Debug for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for View {}

impl miette::Diagnostic for View {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.code.map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let len = self.source.as_ref()?.inner().len();
        Some(Box::new(self.labels.iter().map(move |l| {
            let start = l.span.start.min(len);
            let end = l.span.end.clamp(start, len);
            let text = (!l.text.is_empty()).then(|| l.text.clone());
            LabeledSpan::new_with_span(text, SourceSpan::from(start..end))
        })))
    }

    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn miette::Diagnostic> + 'b>> {
        if self.notes.is_empty() {
            return None;
        }
        Some(Box::new(
            self.notes.iter().map(|n| n as &dyn miette::Diagnostic),
        ))
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn codes_are_unique_and_stable_in_form() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.id()), "duplicate code {}", c.id());
            assert!(c.id().starts_with('E') && c.id().len() == 4);
        }
    }

    #[test]
    fn renders_label_and_help() {
        let mut map = SourceMap::default();
        let f = map.add("x.lex", "pool a {\n  gpus 1\n}\n");
        let d = Diagnostic::new(Code::UnknownName, "unknown pool `b`")
            .in_file(f)
            .label(Span::new(5, 6), "here")
            .help("declare it");
        let out = render(&[d], &map, false);
        assert!(out.contains("lex::E010"), "{out}");
        assert!(out.contains("here"), "{out}");
        assert!(out.contains("declare it"), "{out}");
    }

    #[test]
    fn out_of_range_spans_do_not_panic() {
        let mut map = SourceMap::default();
        let f = map.add("x.lex", "ab");
        let d = Diagnostic::new(Code::Syntax, "x")
            .in_file(f)
            .label(Span::new(10, 20), "");
        render(&[d], &map, false);
    }
}
