//! One call of a model stage, in its steps: render the prompt, learn the server's identity,
//! check the prompt fits the context, answer from the cache or call the model, record the
//! answer. Each step returns why it failed; [`stage_call`] turns that into the step's record.

use super::failure::{server_failure, write_failure, CallFailure};
use super::*;
use crate::backend::{CallError, Reply};
use crate::plan::Node;

mod identity;
mod record;

pub(super) use identity::{model_slot, served_name, server_identity};

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
        let ident = match self.ledger_identity(&target, &text).await? {
            Some(ident) => ident,
            None => {
                let ident = self.identity(&target).await?;
                self.check_context(&target, &ident, &text).await?;
                ident
            }
        };
        let cache_key = self.cache_key(&ident, &text);
        let (reply, answer) = self
            .cached_or_call(&target, &ident, &cache_key, text, &dir)
            .await?;
        self.record_answer(
            &target,
            &ident,
            &cache_key,
            reply,
            answer,
            &dir,
            &prompt_file,
        )
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

    fn on_note(&self) -> impl Fn(String) + Send + Sync + 'static {
        let ev = self.sh.events.clone();
        let key = self.key.to_string();
        move |n: String| ev.note(&key, &n)
    }

    /// Counts before sending: a prompt over the context is an error, never truncated.
    async fn check_context(
        &mut self,
        t: &Target<'_>,
        ident: &Identity,
        text: &str,
    ) -> Result<(), CallFailure> {
        let model = t.model;
        let ctx = ident.n_ctx.map_or(model.ctx, |n| n.min(model.ctx));
        // No tokenizer makes more tokens than bytes (plus a few specials), so a prompt that
        // fits by bytes needs no count; the server's timings give the exact figure afterwards.
        let reserve = self.ms.sampling.get("max_tokens").map_or(0, |n| *n as u64);
        let fits_by_bytes = text.len() as u64 + 64 + reserve <= ctx;
        let (tokens, counted) = if fits_by_bytes {
            (None, "")
        } else {
            match t.pool.backend.count_tokens(text).await {
                Ok(Some(n)) => (Some(n), "counted"),
                _ => (Some((text.len() as u64).div_ceil(4)), "estimated"),
            }
        };
        self.rec.prompt_tokens = tokens;
        let tokens = tokens.unwrap_or(0);
        if tokens + reserve > ctx {
            return Err(CallFailure::TooLong {
                tokens,
                counted,
                reserve,
                model: model.name.clone(),
                ctx,
                slot_ctx: ident.n_ctx.filter(|n| *n < model.ctx),
            });
        }
        Ok(())
    }

    /// The same plan node, model, sampling, prompt and inputs give the same answer.
    fn cache_key(&self, ident: &Identity, text: &str) -> CacheKey {
        let sh = self.sh;
        CacheKey {
            format: CACHE_FORMAT,
            inputs: self
                .step
                .reads
                .iter()
                .map(|r| {
                    let text = self.results.get(r).and_then(|p| p.text.as_ref());
                    let hash = text.map(|t| blake3::hash(t.as_bytes()).to_hex().to_string());
                    (r.clone(), hash)
                })
                .collect(),
            model_identity: ident.model.clone(),
            node: self.step.hash.clone(),
            prompt: sh
                .store
                .as_ref()
                .and_then(|s| s.put(text.as_bytes()).ok())
                .unwrap_or_else(|| blake3::hash(text.as_bytes()).to_hex().to_string()),
            round: self.round,
            sampling: self.ms.sampling.clone(),
            schema: self.ms.returns.as_ref().map(|f| schema::schema(f)),
        }
    }

    /// The answer from lexrun's cache when its key is there; otherwise from the model, with
    /// one corrective retry when the answer does not match `returns`.
    async fn cached_or_call(
        &mut self,
        t: &Target<'_>,
        ident: &Identity,
        cache_key: &CacheKey,
        text: String,
        dir: &Path,
    ) -> Result<(Reply, Option<Value>), CallFailure> {
        let (sh, step) = (self.sh, self.step);
        let hash = cache_key.hash();
        let hit = self.cached(&hash);
        if let Some(store) = &sh.store {
            let _ = store.record_key(
                &sh.run_id,
                &sh.plan.workflow.name,
                &self.m.name,
                &step.name,
                self.round,
                &hash,
                &serde_json::to_value(cache_key).unwrap_or_default(),
                hit.is_some(),
                &sh.workflow_file,
            );
            for w in store
                .warnings
                .lock()
                .map(|mut w| std::mem::take(&mut *w))
                .unwrap_or_default()
            {
                sh.events.warn(self.key, &w);
                self.rec.warnings.push(w);
            }
        }
        tracing::debug!(stage = %step.name, round = self.round, key = %hash, hit = hit.is_some(), "cache");
        if let Some(h) = hit {
            self.rec.cached = true;
            self.rec.started_ms = sh.started.elapsed().as_millis() as u64;
            return Ok(h);
        }
        let call = backend::Call {
            stage: step.name.clone(),
            model: served_name(t.model),
            prompt: text,
            schema: cache_key.schema.clone(),
            sampling: self.ms.sampling.clone(),
            num_ctx: t.model.ctx,
            slot: self.slot(t, ident),
            timeout: Duration::from_millis(self.ms.timeout_ms.unwrap_or(30 * 60 * 1000)),
            measure: false,
        };
        let (reply, answer) = self.call_model(t, call, dir).await?;
        if let Some(store) = &sh.store {
            if let Ok(h) = store.put(reply.text.as_bytes()) {
                let _ = store.cache_put(&crate::store::CacheEntry {
                    key: hash,
                    stage: step.name.clone(),
                    text_hash: h,
                    timings: serde_json::to_value(&reply.timings).unwrap_or_default(),
                    identity: ident.model.clone(),
                    created: crate::store::now(),
                });
            }
        }
        Ok((reply, answer))
    }

    /// A cached answer: its text re-hashed by the store, its answer still valid.
    fn cached(&self, hash: &str) -> Option<(Reply, Option<Value>)> {
        let sh = self.sh;
        if !sh.cache || sh.refresh.contains(&self.step.name) {
            return None;
        }
        let store = sh.store.as_ref()?;
        let e = store.cache_get(hash)?;
        let bytes = store.get(&e.text_hash)?;
        let text = String::from_utf8(bytes).ok()?;
        let answer = match &self.ms.returns {
            Some(fields) => Some(schema::validate(&text, fields).ok()?),
            None => None,
        };
        let timings: Timings = serde_json::from_value(e.timings).unwrap_or_default();
        Some((
            Reply {
                text,
                timings,
                finish: Some("stop".into()),
            },
            answer,
        ))
    }

    /// The server slot this model keeps, so its prompt cache survives between stages.
    fn slot(&self, t: &Target<'_>, ident: &Identity) -> Option<u32> {
        model_slot(self.sh, t.model, ident)
    }

    /// Calls the model, holding one of the pool's slots.
    async fn call_model(
        &mut self,
        t: &Target<'_>,
        mut call: backend::Call,
        dir: &Path,
    ) -> Result<(Reply, Option<Value>), CallFailure> {
        let (sh, pool, model) = (self.sh, t.pool, t.model);
        let _permit = pool.slots.clone().acquire_owned().await;
        let began = Instant::now();
        self.rec.started_ms = sh.started.elapsed().as_millis() as u64;
        sh.events
            .stage_started(self.key, &pool.pool.name, &model.name, self.round);
        let key = self.key;
        let tokens_so_far = AtomicU64::new(0);
        let on_token = |n: u64| {
            let last = tokens_so_far.swap(n, Ordering::Relaxed);
            if n / 8 != last / 8 {
                sh.events
                    .tokens(key, &pool.pool.name, &model.name, n, began);
            }
        };
        let on_note = self.on_note();
        let text = call.prompt.clone();
        let mut corrected = false;
        let answered = loop {
            let (reply, attempts) = match backend::call(
                pool.backend.as_ref(),
                &call,
                &sh.limits,
                &on_token,
                &on_note,
            )
            .await
            {
                Ok(x) => x,
                Err((CallError::NotRecorded(msg), _)) => return Err(CallFailure::NotRecorded(msg)),
                Err((e, attempts)) => {
                    self.rec.retries.extend(attempts.retries);
                    self.rec.waited_for_load_ms += attempts.waited_for_load_ms;
                    return Err(server_failure(pool, &e, &sh.limits).await);
                }
            };
            self.rec.retries.extend(attempts.retries);
            self.rec.waited_for_load_ms += attempts.waited_for_load_ms;
            let Some(fields) = &self.ms.returns else {
                break (reply, None);
            };
            match schema::validate(&reply.text, fields) {
                Ok(v) => break (reply, Some(v)),
                Err(e) if !corrected => {
                    corrected = true;
                    on_note(format!(
                        "the answer does not match `returns` ({e}); asking once more"
                    ));
                    self.rec.retries.push(format!("answer rejected: {e}"));
                    call.prompt = format!(
                        "{text}\n\nYour previous answer was rejected: {e}.\nReply again with only a JSON object that matches the schema."
                    );
                }
                Err(e) => {
                    let rejected = dir.join("rejected-answer.txt");
                    let _ = crate::atomic::write_private(&rejected, &reply.text);
                    return Err(CallFailure::Rejected {
                        source: Arc::new(e),
                        file: rejected,
                    });
                }
            }
        };
        self.rec.duration_ms = began.elapsed().as_millis() as u64;
        Ok(answered)
    }
}
