//! One call of a model stage, in its steps: render the prompt, learn the server's identity,
//! check the prompt fits the context, answer from the cache or call the model, record the
//! answer. Each step returns why it failed; [`stage_call`] turns that into the step's record.

use super::failure::{server_error, write_failure, CallFailure};
use super::*;
use crate::backend::{CallError, Reply};
use crate::plan::Node;

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
        let ident = self.identity(&target).await?;
        self.check_context(&target, &ident, &text).await?;
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

    /// The server: ready, and serving what it should. Asked once per model and run.
    async fn identity(&mut self, t: &Target<'_>) -> Result<Identity, CallFailure> {
        let (pool, model) = (t.pool, t.model);
        let ident = server_identity(self.sh, pool, model, &self.on_note()).await?;
        self.rec.identity = Some(ident.model.clone()).filter(|s| !s.is_empty());
        if let (Weights::Gguf { path, .. }, false) = (&model.weights, ident.model.is_empty()) {
            let want = Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            if let Some(want) = want {
                if !ident.model.ends_with(&want) {
                    self.rec.warnings.push(format!(
                        "the server serves `{}`, not the declared `{path}`",
                        ident.model
                    ));
                }
            }
        }
        Ok(ident)
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
                    return Err(server_error(pool, &e));
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

    /// Writes the answer (`output.md`, `answer.json`), enters it in the ledger, and fills in
    /// the record: speed warnings, summary, timings.
    #[allow(clippy::too_many_arguments)]
    fn record_answer(
        &mut self,
        t: &Target<'_>,
        ident: &Identity,
        cache_key: &CacheKey,
        reply: Reply,
        answer: Option<Value>,
        dir: &Path,
        prompt_file: &Path,
    ) -> Result<Produced, CallFailure> {
        let (sh, m, step, round) = (self.sh, self.m, self.step, self.round);
        let rec = &mut *self.rec;
        let t_ = &reply.timings;
        if let Some(floor) = t.model.min_decode {
            if t_.predicted_n >= 8
                && t_.predicted_per_second > 0.0
                && t_.predicted_per_second < floor
            {
                let w = format!(
                    "decoded at {:.1} tok/s, under the model's min_decode of {floor} tok/s",
                    t_.predicted_per_second
                );
                sh.events.warn(self.key, &w);
                rec.warnings.push(w);
            }
        }
        if reply.finish.as_deref() == Some("length") {
            let w = format!(
                "the answer stopped at the token limit ({} tokens); it may be cut short",
                t_.predicted_n
            );
            sh.events.warn(self.key, &w);
            rec.warnings.push(w);
        }
        let mut p = Produced {
            text: Some(reply.text.clone()),
            answer: answer.clone(),
            ..Produced::default()
        };
        // Entered in the ledger before it is written: the intake guard knows it from the
        // moment it exists.
        if let Some(store) = &sh.store {
            let h = blake3::hash(reply.text.as_bytes()).to_hex().to_string();
            let registered = store.add_artifact(
                &crate::store::Artifact {
                    hash: h,
                    text_hash: intake::text_hash(&reply.text),
                    run_id: sh.run_id.clone(),
                    matter: m.name.clone(),
                    stage: step.name.clone(),
                    round,
                    kind: "stage".into(),
                    path: dir.join("output.md").display().to_string(),
                    model: ident.model.clone(),
                    inputs: serde_json::to_value(&cache_key.inputs).unwrap_or_default(),
                    plan_hash: sh.plan.hash.clone(),
                    node_hash: step.hash.clone(),
                    created: crate::store::now(),
                },
                &reply.text,
                &m.evidence_fps,
            );
            if let Err(e) = registered {
                let w = format!(
                    "this stage's text could not be entered in the ledger, so the intake guard will not recognise a copy of it: {e}"
                );
                sh.events.warn(self.key, &w);
                rec.warnings.push(w);
            }
        }
        let out_md = dir.join("output.md");
        crate::atomic::write_private(&out_md, &reply.text).map_err(write_failure(&out_md))?;
        p.files.push(out_md.clone());
        p.primary.insert("md".into(), out_md.clone());
        p.primary.insert("txt".into(), out_md.clone());
        if let Some(a) = &answer {
            let aj = dir.join("answer.json");
            let _ =
                crate::atomic::write_private(&aj, serde_json::to_vec_pretty(a).unwrap_or_default());
            p.primary.insert("json".into(), aj.clone());
            p.files.push(aj);
        } else {
            p.primary.insert("json".into(), out_md.clone());
        }
        rec.outputs = std::iter::once(prompt_file.display().to_string())
            .chain(p.files.iter().map(|f| f.display().to_string()))
            .collect();
        rec.status = Some(Status::Done);
        rec.summary = format!(
            "{}{} prompt tokens ({} from cache), {} generated at {:.1} tok/s",
            if rec.cached {
                "from lexrun's cache: "
            } else {
                ""
            },
            t_.prompt_n + t_.cache_n,
            t_.cache_n,
            t_.predicted_n,
            t_.predicted_per_second
        );
        rec.timings = Some(reply.timings.clone());
        if rec.prompt_tokens.is_none() && t_.prompt_n + t_.cache_n > 0 {
            rec.prompt_tokens = Some(t_.prompt_n + t_.cache_n);
        }
        sh.events.stage_finished(
            self.key,
            "done",
            &format!("{} ({:.1} s)", rec.summary, rec.duration_ms as f64 / 1000.0),
            json!({"matter": m.name, "round": round, "timings": reply.timings, "prompt_tokens": rec.prompt_tokens}),
        );
        Ok(p)
    }
}

/// The server's identity for a model: waited for while it loads, asked once per model and run.
pub(super) async fn server_identity(
    sh: &Shared,
    pool: &PoolRt,
    model: &Model,
    on_note: &(dyn Fn(String) + Send + Sync),
) -> Result<Identity, CallFailure> {
    match pool.identity.get(&model.name) {
        Some(cell) => cell
            .get_or_init(|| async {
                backend::wait_ready(pool.backend.as_ref(), &sh.limits, on_note).await;
                let served = served_name(model);
                let mut tries = 0;
                loop {
                    match pool.backend.identity(&served).await {
                        Ok(id) => return Ok(id),
                        Err(e) if e.retryable() && tries < sh.limits.retries => {
                            tries += 1;
                            tokio::time::sleep(sh.limits.backoff * tries).await;
                        }
                        Err(e) => return Err(server_error(pool, &e)),
                    }
                }
            })
            .await
            .clone(),
        None => Ok(Identity::default()),
    }
}

/// The server slot a model keeps, so its prompt cache survives between calls.
pub(super) fn model_slot(sh: &Shared, model: &Model, ident: &Identity) -> Option<u32> {
    ident.slots.filter(|n| *n > 0).map(|n| {
        let idx = sh
            .plan
            .models
            .iter()
            .filter(|x| x.pool == model.pool)
            .position(|x| x.name == model.name)
            .unwrap_or(0) as u32;
        idx % n
    })
}

pub(super) fn served_name(model: &Model) -> String {
    match &model.weights {
        Weights::Tag { tag } => tag.clone(),
        Weights::Gguf { .. } => model.name.clone(),
    }
}
