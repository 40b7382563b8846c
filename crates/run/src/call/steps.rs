//! The steps of one call of a model stage, and what each of them reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::call::model_call::{returns_parser, CallLog, ModelCall};
use crate::call::template::template_vars;
use crate::failure::{write_failure, CallFailure};
use crate::plan::workflow::{Model, ModelStage, Step};
use crate::plan::Node;
use crate::record::StepRecord;
use crate::shared::{Matter, PoolRt, Produced, Shared};
use crate::unit::model_of;
use crate::{prompt, schema};

/// What every step of one call reads, and the record it fills in.
pub(super) struct StageCall<'a> {
    pub(super) sh: &'a Arc<Shared>,
    pub(super) m: &'a Arc<Matter>,
    pub(super) step: &'a Node<Step>,
    pub(super) ms: &'a ModelStage,
    pub(super) results: &'a BTreeMap<String, Arc<Produced>>,
    pub(super) round: u32,
    /// The stage's name in events (`matter/stage` with several matters).
    pub(super) key: &'a str,
    pub(super) rec: &'a mut StepRecord,
}

/// The pool's model and its server.
pub(super) struct Target<'a> {
    pub(super) model: &'a Model,
    pub(super) pool: &'a PoolRt,
}

impl<'a> StageCall<'a> {
    pub(super) async fn steps(&mut self, feedback: Option<&str>) -> Result<Produced, CallFailure> {
        let target = self.target()?;
        let dir = self.folder()?;
        self.rec.inputs = self.step.reads.clone();
        let (text, prompt_file) = self.render_prompt(feedback, &dir)?;
        let parse = returns_parser(self.ms.returns.as_deref());
        let call = ModelCall {
            sh: self.sh,
            matter: &self.m.name,
            stage: &self.step.name,
            refresh: self.sh.refresh.contains(&self.step.name),
            key: self.key,
            model: target.model,
            pool: target.pool,
            node: self.step.hash.clone(),
            inputs: self.input_hashes(),
            round: self.round,
            key_round: self.round,
            sampling: self.ms.sampling.clone(),
            schema: self.ms.returns.as_ref().map(|f| schema::schema(f)),
            slot_offset: 0,
            timeout: Duration::from_millis(self.ms.timeout_ms.unwrap_or(30 * 60 * 1000)),
            retry_ask: "",
            rejected_as: "does not match `returns`",
            rejected_file: dir.join("rejected-answer.txt"),
            parse: &parse,
            stop: None,
        };
        let mut log = CallLog::default();
        let answered = call.run(text, &mut log).await;
        self.absorb(log);
        let a = answered?;
        self.record_answer(
            &target,
            &a.ident,
            &a.cache_key,
            a.reply,
            a.value,
            &dir,
            &prompt_file,
        )
    }

    /// The hashes of the texts this stage reads.
    fn input_hashes(&self) -> BTreeMap<String, Option<String>> {
        self.step
            .reads
            .iter()
            .map(|r| {
                let text = self.results.get(r).and_then(|p| p.text.as_ref());
                let hash = text.map(|t| blake3::hash(t.as_bytes()).to_hex().to_string());
                (r.clone(), hash)
            })
            .collect()
    }

    /// What the call did, in the step's record.
    fn absorb(&mut self, log: CallLog) {
        let rec = &mut *self.rec;
        if log.identity.is_some() {
            rec.identity = log.identity;
        }
        if log.identity_note.is_some() {
            rec.identity_note = log.identity_note;
        }
        if log.prompt_tokens.is_some() {
            rec.prompt_tokens = log.prompt_tokens;
        }
        rec.retries.extend(log.retries);
        rec.waited_for_load_ms += log.waited_for_load_ms;
        rec.warnings.extend(log.warnings);
        rec.cached |= log.cached;
        if let Some(ms) = log.started_ms {
            rec.started_ms = ms;
        }
        if log.sent {
            rec.duration_ms = log.duration_ms;
        }
    }

    fn target(&self) -> Result<Target<'a>, CallFailure> {
        let sh: &'a Shared = self.sh;
        let model = model_of(sh, &self.ms.model)
            .ok_or_else(|| CallFailure::NoModel(self.ms.model.clone()))?;
        let pool = sh
            .pools
            .get(&model.pool)
            .ok_or_else(|| CallFailure::NoPool(model.pool.clone()))?;
        Ok(Target { model, pool })
    }

    /// The call's folder: the stage's, or `round-N` inside it for a revision.
    fn folder(&self) -> Result<PathBuf, CallFailure> {
        let dir = if self.round > 1 {
            self.m
                .run_dir
                .join(&self.step.name)
                .join(format!("round-{}", self.round))
        } else {
            self.m.run_dir.join(&self.step.name)
        };
        crate::atomic::private_dir(&dir).map_err(|e| CallFailure::Create {
            path: dir.clone(),
            source: Arc::new(e),
        })?;
        Ok(dir)
    }

    /// The prompt from the stage's template, written as `prompt.md`.
    fn render_prompt(
        &self,
        feedback: Option<&str>,
        dir: &Path,
    ) -> Result<(String, PathBuf), CallFailure> {
        let (sh, m, step, ms, round) = (self.sh, self.m, self.step, self.ms, self.round);
        if let Some(field) = missing_matter_field(&ms.prompt.text, &m.record) {
            return Err(CallFailure::MatterField {
                field,
                dir: m.dir.clone(),
            });
        }
        let vars = template_vars(sh, m, step, ms, self.results, round, feedback);
        let mut text = prompt::render(&ms.prompt.text, &vars).map_err(|e| CallFailure::Render {
            origin: ms.prompt.origin.clone(),
            source: Arc::new(e),
        })?;
        // A revision round of a stage whose template has no place for feedback still gets it.
        if let Some(f) = feedback {
            if !ms.prompt.text.contains("revision") {
                text.push_str(&format!(
                    "\n\nThis is revision {round}. A reviewer found these problems in the previous version; fix every one:\n{f}\n"
                ));
            }
        }
        let prompt_file = dir.join("prompt.md");
        crate::atomic::write_private(&prompt_file, &text).map_err(write_failure(&prompt_file))?;
        Ok((text, prompt_file))
    }
}

/// The first field of the matter's record a template uses (`{{matter.client}}`) that the
/// matter's record does not hold: rendered, it would be an empty space in the prompt.
fn missing_matter_field(
    template: &str,
    record: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    static USE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\{\{[^{}]*?\bmatter\.([A-Za-z_][A-Za-z0-9_]*)")
            .expect("a valid pattern")
    });
    USE.captures_iter(template)
        // A block that asks whether the field is there handles its absence itself.
        .filter(|c| {
            let open = c[0]
                .trim_start_matches("{{")
                .trim_start_matches('~')
                .trim_start();
            !open.starts_with("#if") && !open.starts_with("#unless") && !open.starts_with("else")
        })
        .map(|c| c[1].to_string())
        .find(|f| {
            crate::plan::workflow::MATTER_RECORD_FIELDS.contains(&f.as_str())
                && record
                    .get(f)
                    .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
        })
}
