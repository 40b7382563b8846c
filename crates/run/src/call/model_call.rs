//! One model call, whoever makes it — a stage, or the judge of a stage's propositions: the
//! server's identity (from the ledger when the answer is cached and no server is needed, or
//! `--offline`), the prompt held to the context, the answer from lexrun's cache or from the
//! model with one corrective retry, the key and the answer recorded, the store's warnings said.
//! A caller supplies only what differs: its prompt, its schema and how its answer is read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::identity::{model_slot, served_name, server_failure, server_identity};
use crate::backend::{self, CallError, Identity, Reply, Timings};
use crate::cache_key::{CacheKey, CACHE_FORMAT};
use crate::failure::CallFailure;
use crate::plan::workflow::{Model, ServerKind, Weights};
use crate::shared::{PoolRt, Shared};

/// How a caller reads its answer: the value it wants, or why the text is not an answer.
pub(crate) type Parse<'a, T> = &'a (dyn Fn(&str) -> Result<T, String> + Send + Sync);

/// Everything one model call needs to know.
pub(crate) struct ModelCall<'a, T> {
    pub sh: &'a Shared,
    pub matter: &'a str,
    /// The step's name in the ledger and the cache (`draft`, `judge draft`).
    pub stage: &'a str,
    /// Whether `--refresh` names this call's step.
    pub refresh: bool,
    /// The step's name on the terminal (`matter/stage` with several matters).
    pub key: &'a str,
    pub model: &'a Model,
    pub pool: &'a PoolRt,
    /// The plan node the answer belongs to; also how the ledger finds the model's identity.
    pub node: String,
    /// The hashes of the texts the prompt was made from.
    pub inputs: BTreeMap<String, Option<String>>,
    /// The revision round, as the ledger records it.
    pub round: u32,
    /// The round the cache key holds (a judge's verdicts do not depend on it).
    pub key_round: u32,
    pub sampling: BTreeMap<String, f64>,
    pub schema: Option<Value>,
    /// Which of the model's slots, counted from the one it keeps (a judge's batches spread).
    pub slot_offset: u32,
    pub timeout: Duration,
    /// What the corrective retry asks for, after "Reply again with only a JSON object that
    /// matches the schema".
    pub retry_ask: &'a str,
    /// What a rejected answer is not, for the failure ("does not match `returns`").
    pub rejected_as: &'static str,
    /// Where the answer is written when it is rejected twice.
    pub rejected_file: PathBuf,
    pub parse: Parse<'a, T>,
    /// Set by another call that failed: a call still waiting for its slot is not sent.
    pub stop: Option<&'a AtomicBool>,
}

/// What a call did, for the caller's record.
#[derive(Default, Debug)]
pub(crate) struct CallLog {
    pub identity: Option<String>,
    /// Why the server was not asked, when the identity came from the ledger.
    pub identity_note: Option<String>,
    /// The prompt's tokens: counted or estimated when it did not fit by its bytes.
    pub prompt_tokens: Option<u64>,
    pub counted: &'static str,
    pub retries: Vec<String>,
    pub waited_for_load_ms: u64,
    pub warnings: Vec<String>,
    pub cached: bool,
    /// Whether the model was asked.
    pub sent: bool,
    /// When the model was first asked, from the run's start.
    pub started_ms: Option<u64>,
    pub duration_ms: u64,
}

/// A call's answer.
pub(crate) struct Answered<T> {
    pub reply: Reply,
    pub value: T,
    pub ident: Identity,
    pub cache_key: CacheKey,
}

impl<T> ModelCall<'_, T> {
    /// The whole call: identity, context, cache or model, record.
    pub async fn run(&self, text: String, log: &mut CallLog) -> Result<Answered<T>, CallFailure> {
        let ident = match self.ledger_identity(&text, log).await? {
            Some(ident) => ident,
            None => {
                let ident = self.server(log).await?;
                self.check_context(&ident, &text, log).await?;
                ident
            }
        };
        self.answer(ident, text, log).await
    }

    /// A fully cached call needs no server. With `--offline`, or when nothing listens at the
    /// pool's endpoint, the model identity is the one the ledger recorded for this call's
    /// plan node; if the answer is in the cache under it, the server is not asked. Offline,
    /// anything else is a failure; online, the server is asked as usual (and its retries and
    /// errors say what is wrong).
    pub async fn ledger_identity(
        &self,
        text: &str,
        log: &mut CallLog,
    ) -> Result<Option<Identity>, CallFailure> {
        let sh = self.sh;
        if !sh.offline && (!sh.cache || sh.store.is_none() || self.pool.reachable().await) {
            return Ok(None);
        }
        let stage = self.stage;
        let found = sh
            .store
            .as_ref()
            .and_then(|s| s.last_identity(&sh.plan.workflow.name, stage, &self.node));
        let Some((model, run)) = found else {
            return match sh.offline {
                true => Err(CallFailure::Offline(format!(
                    "no earlier run of stage `{stage}` with this model and declaration is in the ledger, so its answer cannot be in the cache"
                ))),
                false => Ok(None),
            };
        };
        let ident = Identity {
            model,
            ..Identity::default()
        };
        let hash = self.cache_key(&ident, text).hash();
        if self.cached(&hash).is_none() {
            return match sh.offline {
                true => Err(CallFailure::Offline(format!(
                    "stage `{stage}` is not in the cache (its prompt, inputs or settings changed since run {run} answered it)"
                ))),
                false => Ok(None),
            };
        }
        let note = format!(
            "the server was not asked{}: model identity `{}` from the ledger (run {run})",
            if sh.offline {
                " (--offline)"
            } else {
                " (it does not answer)"
            },
            ident.model
        );
        tracing::info!(stage = %stage, "{note}");
        log.identity = Some(ident.model.clone());
        log.identity_note = Some(note);
        Ok(Some(ident))
    }

    /// The server: ready, and serving what it should. Asked once per model and run; what it
    /// says that the workflow does not is said once per model.
    pub async fn server(&self, log: &mut CallLog) -> Result<Identity, CallFailure> {
        let (sh, pool, model) = (self.sh, self.pool, self.model);
        let ident = server_identity(sh, pool, model, &self.on_note()).await?;
        log.identity = Some(ident.model.clone()).filter(|s| !s.is_empty());
        if let (Some(min), ServerKind::LlamaCpp) = (&pool.pool.min_build, pool.pool.server) {
            if let Some(why) = backend::endpoint::build_refusal(
                min,
                &pool.pool.name,
                &pool.endpoint,
                ident.build.as_deref(),
            ) {
                return Err(CallFailure::OldBuild(why));
            }
        }
        let mut said = Vec::new();
        if let (Weights::Gguf { path, .. }, false) = (&model.weights, ident.model.is_empty()) {
            let want = std::path::Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            if let Some(want) = want {
                if !ident.model.ends_with(&want) {
                    said.push(format!(
                        "the server serves `{}`, not the declared `{path}`",
                        ident.model
                    ));
                }
            }
        }
        if let Some(n) = ident.n_ctx.filter(|n| *n < model.ctx) {
            said.push(format!(
                "the server gives model `{}` a context of {n} tokens per slot; the workflow declares {}",
                model.name, model.ctx
            ));
        }
        for w in said {
            sh.events.warn_once(self.key, &w);
            log.warnings.push(w);
        }
        // More context than declared costs memory the plan did not count: said, not recorded.
        if let Some(n) = ident.n_ctx.filter(|n| *n > model.ctx) {
            sh.events.warn_once(
                self.key,
                &format!(
                    "the server gives model `{}` a context of {n} tokens per slot; the workflow declares {} (the memory check counted {})",
                    model.name, model.ctx, model.ctx
                ),
            );
        }
        Ok(ident)
    }

    /// Counts before sending: a prompt over the context is an error, never truncated.
    pub async fn check_context(
        &self,
        ident: &Identity,
        text: &str,
        log: &mut CallLog,
    ) -> Result<(), CallFailure> {
        let model = self.model;
        let ctx = ident.n_ctx.map_or(model.ctx, |n| n.min(model.ctx));
        // No tokenizer makes more tokens than bytes (plus a few specials), so a prompt that
        // fits by bytes needs no count; the server's timings give the exact figure afterwards.
        let reserve = self.sampling.get("max_tokens").map_or(0, |n| *n as u64);
        if text.len() as u64 + 64 + reserve <= ctx {
            return Ok(());
        }
        let (tokens, counted) = match self.pool.backend.count_tokens(text).await {
            Ok(Some(n)) => (n, "counted"),
            _ => ((text.len() as u64).div_ceil(4), "estimated"),
        };
        log.prompt_tokens = Some(tokens);
        log.counted = counted;
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

    /// The same node, model, sampling, prompt and inputs give the same answer.
    pub fn cache_key(&self, ident: &Identity, text: &str) -> CacheKey {
        CacheKey {
            format: CACHE_FORMAT,
            inputs: self.inputs.clone(),
            model_identity: ident.model.clone(),
            node: self.node.clone(),
            prompt: self
                .sh
                .store
                .as_ref()
                .and_then(|s| s.put(text.as_bytes()).ok())
                .unwrap_or_else(|| blake3::hash(text.as_bytes()).to_hex().to_string()),
            round: self.key_round,
            sampling: self.sampling.clone(),
            schema: self.schema.clone(),
        }
    }

    /// A cached answer: its text re-hashed by the store, still read as an answer.
    fn cached(&self, hash: &str) -> Option<(Reply, T)> {
        let sh = self.sh;
        if !sh.cache || self.refresh {
            return None;
        }
        let store = sh.store.as_ref()?;
        let e = store.cache_get(hash)?;
        let text = String::from_utf8(store.get(&e.text_hash)?).ok()?;
        // An empty answer is no answer: the model is asked again.
        if text.trim().is_empty() {
            return None;
        }
        let value = (self.parse)(&text).ok()?;
        // Why the answer ended is kept beside its timings: a cut answer stays cut.
        let finish = e.timings["finish"].as_str().unwrap_or("stop").to_string();
        let timings: Timings = serde_json::from_value(e.timings).unwrap_or_default();
        let reply = Reply {
            text,
            timings,
            finish: Some(finish),
        };
        Some((reply, value))
    }

    /// Enters the call's key in the ledger, and says what the store has to say. A ledger
    /// that is gone fails the call: no model is asked anything more.
    fn record_key(
        &self,
        hash: &str,
        cache_key: &CacheKey,
        hit: bool,
        log: &mut CallLog,
    ) -> Result<(), CallFailure> {
        let sh = self.sh;
        let Some(store) = &sh.store else {
            return Ok(());
        };
        let at = crate::store::StepAt {
            run_id: &sh.run_id,
            workflow: &sh.plan.workflow.name,
            file: &sh.workflow_file,
            matter: self.matter,
            stage: self.stage,
            round: self.round,
        };
        let components = serde_json::to_value(cache_key).unwrap_or_default();
        let recorded = store.record_key(&at, hash, &components, hit);
        for w in store
            .warnings
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default()
        {
            sh.events.warn(self.key, &w);
            log.warnings.push(w);
        }
        match recorded {
            Err(_) if store.lost().is_some() => {
                if let Some(stop) = self.stop {
                    stop.store(true, Ordering::SeqCst);
                }
                Err(CallFailure::LedgerLost(false))
            }
            _ => Ok(()),
        }
    }

    /// The answer from lexrun's cache when its key is there; otherwise from the model.
    pub async fn answer(
        &self,
        ident: Identity,
        text: String,
        log: &mut CallLog,
    ) -> Result<Answered<T>, CallFailure> {
        let sh = self.sh;
        let cache_key = self.cache_key(&ident, &text);
        let hash = cache_key.hash();
        if let Some((reply, value)) = self.cached(&hash) {
            tracing::debug!(stage = %self.stage, round = self.round, key = %hash, "cache hit");
            // A cassette being recorded keeps the cached answer as the server's.
            self.pool
                .backend
                .answered_elsewhere(&self.call(text, None), &reply);
            self.record_key(&hash, &cache_key, true, log)?;
            log.cached = true;
            log.started_ms = Some(sh.started.elapsed().as_millis() as u64);
            return Ok(Answered {
                reply,
                value,
                ident,
                cache_key,
            });
        }
        tracing::debug!(stage = %self.stage, round = self.round, key = %hash, "cache miss");
        let slot = model_slot(sh, self.model, &ident)
            .zip(ident.slots.filter(|k| *k > 0))
            .map(|(s, k)| (s + self.slot_offset) % k);
        let call = self.call(text, slot);
        // One slot for the call, its corrective retry included; a call still waiting when
        // another has failed is not sent, and only the calls made enter the ledger.
        let _permit = self.pool.slots.clone().acquire_owned().await;
        if self.stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
            return Err(CallFailure::NotSent);
        }
        if sh.store.as_ref().is_some_and(|s| s.lost().is_some()) {
            return Err(CallFailure::LedgerLost(false));
        }
        self.record_key(&hash, &cache_key, false, log)?;
        let result = self.call_model(call, log).await;
        if result.is_err() {
            if let Some(stop) = self.stop {
                stop.store(true, Ordering::SeqCst);
            }
        }
        let (reply, value) = result?;
        if let Some(store) = &sh.store {
            if let Ok(h) = store.put(reply.text.as_bytes()) {
                let _ = store.cache_put(&crate::store::CacheEntry {
                    key: hash,
                    stage: self.stage.to_string(),
                    text_hash: h,
                    timings: cached_timings(&reply),
                    identity: ident.model.clone(),
                    created: crate::store::now(),
                });
            }
        }
        Ok(Answered {
            reply,
            value,
            ident,
            cache_key,
        })
    }

    /// The call that asks the model for this prompt.
    fn call(&self, text: String, slot: Option<u32>) -> backend::Call {
        backend::Call {
            stage: self.stage.to_string(),
            model: served_name(self.model),
            prompt: text,
            schema: self.schema.clone(),
            sampling: self.sampling.clone(),
            num_ctx: self.model.ctx,
            slot,
            timeout: self.timeout,
            measure: false,
        }
    }

    fn on_note(&self) -> impl Fn(String) + Send + Sync + 'static {
        let ev = self.sh.events.clone();
        let key = self.key.to_string();
        move |n: String| ev.note(&key, &n)
    }

    /// Asks the model, with one corrective retry when the answer cannot be read.
    async fn call_model(
        &self,
        mut call: backend::Call,
        log: &mut CallLog,
    ) -> Result<(Reply, T), CallFailure> {
        let (sh, pool, model) = (self.sh, self.pool, self.model);
        let began = Instant::now();
        log.sent = true;
        log.started_ms = Some(sh.started.elapsed().as_millis() as u64);
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
        let mut emptied: Option<(u64, String)> = None;
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
                // A replayed empty answer whose second asking was never recorded: the
                // failure is the empty answer, not the cassette.
                Err((CallError::NotRecorded(_), _)) if emptied.is_some() => {
                    let (tokens, finish) = emptied.unwrap_or_default();
                    return Err(CallFailure::Empty { tokens, finish });
                }
                Err((CallError::NotRecorded(msg), _)) => return Err(CallFailure::NotRecorded(msg)),
                Err((e, attempts)) => {
                    log.retries.extend(attempts.retries);
                    log.waited_for_load_ms += attempts.waited_for_load_ms;
                    return Err(server_failure(pool, &e, &sh.limits).await);
                }
            };
            log.retries.extend(attempts.retries);
            log.waited_for_load_ms += attempts.waited_for_load_ms;
            // An empty answer is asked for once more, then fails the call.
            if reply.text.trim().is_empty() {
                let (tokens, finish) = (
                    reply.timings.predicted_n,
                    reply.finish.clone().unwrap_or_else(|| "none".into()),
                );
                if emptied.is_some() {
                    return Err(CallFailure::Empty { tokens, finish });
                }
                emptied = Some((tokens, finish.clone()));
                on_note(format!(
                    "the model answered with no text ({tokens} tokens, finish `{finish}`); asking once more"
                ));
                log.retries
                    .push(format!("empty answer ({tokens} tokens, finish `{finish}`)"));
                continue;
            }
            match (self.parse)(&reply.text) {
                Ok(v) => break (reply, v),
                Err(why) if !corrected => {
                    corrected = true;
                    on_note(format!(
                        "the answer {} ({why}); asking once more",
                        self.rejected_as
                    ));
                    log.retries.push(format!("answer rejected: {why}"));
                    call.prompt = format!(
                        "{text}\n\nYour previous answer was rejected: {why}.\nReply again with only a JSON object that matches the schema{}.",
                        self.retry_ask
                    );
                }
                Err(why) => {
                    let _ = crate::atomic::write_private(&self.rejected_file, &reply.text);
                    return Err(CallFailure::Rejected {
                        rejected_as: self.rejected_as,
                        why,
                        file: self.rejected_file.clone(),
                    });
                }
            }
        };
        log.duration_ms = began.elapsed().as_millis() as u64;
        Ok(answered)
    }
}

/// A reply's timings as the cache keeps them, with why the answer ended (`finish`), so that
/// an answer cut short is still known as cut when it is taken from the cache.
fn cached_timings(reply: &Reply) -> Value {
    let mut v = serde_json::to_value(&reply.timings).unwrap_or_default();
    if let (Value::Object(o), Some(f)) = (&mut v, &reply.finish) {
        o.insert("finish".into(), Value::String(f.clone()));
    }
    v
}

/// A schema answer's reader: the `returns` fields a stage declares.
pub(crate) fn returns_parser(
    fields: Option<&[crate::plan::workflow::FieldType]>,
) -> impl Fn(&str) -> Result<Option<Value>, String> + Send + Sync + '_ {
    move |text: &str| match fields {
        Some(f) => crate::schema::validate(text, f)
            .map(Some)
            .map_err(|e| e.to_string()),
        None => Ok(None),
    }
}
