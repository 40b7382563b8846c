//! One call of a model stage, in its steps: render the prompt, learn the server's identity,
//! check the prompt fits the context, answer from the cache or call the model, record the
//! answer. Each step returns why it failed; [`stage_call`] turns that into the step's record.

use super::failure::{write_failure, CallFailure};
use super::*;
use crate::plan::Node;

mod identity;
mod model_call;
mod record;

pub(super) use model_call::{returns_parser, CallLog, ModelCall, Parse};

/// Renders, counts, sends and checks one call of a model stage; writes its files.
pub(super) async fn stage_call(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    i: usize,
    results: &BTreeMap<String, Arc<Produced>>,
    round: u32,
    feedback: Option<String>,
) -> Result<(Produced, StepRecord), Box<StepRecord>> {
    let step = &sh.plan.steps[i];
    let StepKind::Model(ms) = &step.kind else {
        return Err(Box::new(base_record(sh, i)));
    };
    let mut rec = base_record(sh, i);
    rec.round = round;
    let started = Instant::now();
    let key = stage_key(sh.multi, &m.name, &step.name);
    let mut call = StageCall {
        sh,
        m,
        step,
        ms,
        results,
        round,
        key: &key,
        rec: &mut rec,
    };
    match call.steps(feedback.as_deref()).await {
        Ok(p) => Ok((p, rec)),
        Err(failure) => {
            let why = failure.to_string();
            if let Some(store) = &sh.store {
                let _ = store.add_failure(
                    &sh.run_id,
                    &sh.plan.workflow.name,
                    &sh.workflow_file,
                    &m.name,
                    &step.name,
                    round,
                    &why,
                );
            }
            sh.events
                .stage_finished(&key, "failed", &why, json!({"matter": m.name, "why": why}));
            rec.status = Some(Status::Failed);
            rec.summary = format!("failed: {why}");
            rec.why = Some(why);
            rec.duration_ms = started.elapsed().as_millis() as u64;
            Err(Box::new(rec))
        }
    }
}

/// What every step of one call reads, and the record it fills in.
struct StageCall<'a> {
    sh: &'a Arc<Shared>,
    m: &'a Arc<Matter>,
    step: &'a Node<Step>,
    ms: &'a ModelStage,
    results: &'a BTreeMap<String, Arc<Produced>>,
    round: u32,
    /// The stage's name in events (`matter/stage` with several matters).
    key: &'a str,
    rec: &'a mut StepRecord,
}

/// The pool's model and its server.
struct Target<'a> {
    model: &'a Model,
    pool: &'a PoolRt,
}

impl<'a> StageCall<'a> {
    async fn steps(&mut self, feedback: Option<&str>) -> Result<Produced, CallFailure> {
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
