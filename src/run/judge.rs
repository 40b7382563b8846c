//! Judging propositions (`propositions must hold`): every sentence of a verified stage that
//! cites pages goes to the `verify` block's judge model with the text of only those pages.
//! One call per distinct set of cited pages (the sentences citing it share it), on the judge's
//! pool and slots, cached like every model call, taped like every model call. The answer must
//! follow a JSON schema; one that does not gets one corrective retry, then the verification
//! fails naming the stage, the pages and the tokens. A judge that is down, or whose context
//! cannot hold the pages, fails the same way: never a silent pass.

use super::failure::{server_failure, CallFailure};
use super::*;
use crate::backend::CallError;
use crate::verify::proposition::{self, Batch, Page, Proposition};
use crate::verify::Location;

/// Why the propositions of a stage could not be judged.
#[derive(Debug, Clone, thiserror::Error)]
#[error("judging the sentences of `{stage}` that cite {pages} ({tokens}) with model `{model}` failed: {cause}")]
pub(super) struct JudgeFailure {
    pub stage: String,
    pub model: String,
    /// The cited pages of the call that failed.
    pub pages: String,
    /// The prompt's tokens, as counted or estimated.
    pub tokens: String,
    #[source]
    pub cause: JudgeCause,
}

#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum JudgeCause {
    #[error("{0}")]
    Call(CallFailure),
    #[error("the judge's answer is not one verdict per sentence after a corrective retry: {why} (the answer is in {})", file.display())]
    Malformed { why: String, file: PathBuf },
    #[error("a cited page could not be read again from the evidence ({0})")]
    MissingPage(String),
    /// Not sent, because another batch had failed.
    #[error("not sent: another set of pages failed first")]
    NotSent,
}

/// What judging did, for the run's record.
#[derive(Default)]
pub(super) struct Judged {
    pub outcomes: Vec<verify::Outcome>,
    pub calls: usize,
    pub cached: usize,
    pub retries: Vec<String>,
    pub prompt_tokens: u64,
    pub identity: String,
}

/// One judge: the model, its pool, its server's identity, and where its calls are written.
struct Judge<'a> {
    sh: &'a Shared,
    m: &'a Matter,
    stage: &'a str,
    model: &'a Model,
    node_hash: String,
    pool: &'a PoolRt,
    ident: Identity,
    dir: PathBuf,
    key: String,
    round: u32,
    /// Set when a batch has failed: the batches still waiting for a slot are not sent.
    stop: std::sync::atomic::AtomicBool,
}

/// Which judgement a step makes: the stage (or `verify-draft` tool) whose text is judged, with
/// its index among the plan's steps, the judge model, the round.
pub(super) struct JudgedStep<'a> {
    pub stage_idx: usize,
    pub stage: &'a str,
    pub model: &'a str,
    pub round: u32,
}

/// Judges `props` as a step of its own, `judge STAGE`: its record, and on success the
/// outcomes (none when it failed; the record says why).
pub(super) async fn judge_step(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    step: JudgedStep<'_>,
    ev: &verify::Evidence,
    props: &[Proposition],
) -> (StepRecord, Option<Vec<verify::Outcome>>) {
    let JudgedStep {
        stage_idx,
        stage,
        model,
        round,
    } = step;
    let began = Instant::now();
    let started_ms = sh.started.elapsed().as_millis() as u64;
    let result = judge(sh, m, stage, model, round, ev, props).await;
    let jkey = stage_key(sh.multi, &m.name, &format!("judge {stage}"));
    let mut r = base_record(sh, stage_idx);
    r.name = format!("judge {stage}");
    r.kind = "judge".into();
    r.model = Some(model.to_string());
    r.pool = model_of(sh, model).map(|x| x.pool.clone());
    r.round = round;
    r.started_ms = started_ms;
    r.duration_ms = began.elapsed().as_millis() as u64;
    match result {
        Ok(j) => {
            let n = props.len();
            r.status = Some(Status::Done);
            r.identity = Some(j.identity.clone()).filter(|s| !s.is_empty());
            r.retries = j.retries;
            r.prompt_tokens = Some(j.prompt_tokens);
            r.cached = j.calls == 0;
            r.summary = format!(
                "{n} sentence{} citing pages judged in {} call{}{}",
                if n == 1 { "" } else { "s" },
                j.calls + j.cached,
                if j.calls + j.cached == 1 { "" } else { "s" },
                if j.cached > 0 {
                    format!(" ({} from lexrun's cache)", j.cached)
                } else {
                    String::new()
                }
            );
            sh.events.stage_finished(
                &jkey,
                "done",
                &r.summary,
                json!({"matter": m.name, "calls": j.calls, "cached": j.cached}),
            );
            (r, Some(j.outcomes))
        }
        Err(e) => {
            let why = e.to_string();
            sh.events
                .stage_finished(&jkey, "failed", &why, json!({"matter": m.name, "why": why}));
            r.status = Some(Status::Failed);
            r.summary = format!("failed: {why}");
            r.why = Some(why);
            (r, None)
        }
    }
}

/// Judges every proposition; outcomes in the order of `props`.
async fn judge(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    stage: &str,
    model_name: &str,
    round: u32,
    ev: &verify::Evidence,
    props: &[Proposition],
) -> Result<Judged, JudgeFailure> {
    let model_name = model_name.to_string();
    let fail = |pages: String, tokens: String, cause: JudgeCause| JudgeFailure {
        stage: stage.to_string(),
        model: model_name.clone(),
        pages,
        tokens,
        cause,
    };
    let none = || "no page".to_string();
    let Some(node) = sh.plan.models.iter().find(|x| x.name == model_name) else {
        return Err(fail(
            none(),
            "no tokens".into(),
            JudgeCause::Call(CallFailure::NoModel(model_name.clone())),
        ));
    };
    let model = &node.item;
    let Some(pool) = sh.pools.get(&model.pool) else {
        return Err(fail(
            none(),
            "no tokens".into(),
            JudgeCause::Call(CallFailure::NoPool(model.pool.clone())),
        ));
    };
    let key = stage_key(sh.multi, &m.name, &format!("judge {stage}"));
    // Every call's pages and prompt first, so that a failure can name them all.
    let batches = proposition::batches(props);
    let mut calls = Vec::with_capacity(batches.len());
    for b in &batches {
        let pages = pages_of(ev, b)
            .map_err(|e| fail(proposition::names(&b.pages), "no tokens".into(), e))?;
        let statements: Vec<&str> = b.members.iter().map(|&i| props[i].text.as_str()).collect();
        let text = proposition::prompt(&pages, &statements);
        calls.push((pages, text));
    }
    let ev_note = sh.events.clone();
    let k2 = key.clone();
    let on_note = move |n: String| ev_note.note(&k2, &n);
    let ident = server_identity(sh, pool, model, &on_note)
        .await
        .map_err(|e| {
            let all: Vec<Location> = batches.iter().flat_map(|b| b.pages.clone()).collect();
            let tokens: u64 = calls
                .iter()
                .map(|(_, t)| (t.len() as u64).div_ceil(4))
                .sum();
            fail(
                proposition::names(&all),
                format!(
                    "about {tokens} prompt tokens in {} call{}",
                    calls.len(),
                    if calls.len() == 1 { "" } else { "s" }
                ),
                JudgeCause::Call(e),
            )
        })?;
    let dir = m
        .run_dir
        .join(format!("verify-{stage}"))
        .join(if round > 1 {
            format!("judge-round-{round}")
        } else {
            "judge".into()
        });
    let _ = std::fs::create_dir_all(&dir);
    let j = Judge {
        sh,
        m,
        stage,
        model,
        node_hash: node.hash.clone(),
        pool,
        ident,
        dir,
        key,
        round,
        stop: Default::default(),
    };
    let mut out = Judged {
        identity: j.ident.model.clone(),
        ..Judged::default()
    };
    let mut outcomes: Vec<Option<verify::Outcome>> = vec![None; props.len()];
    for (i, p) in props.iter().enumerate() {
        if p.cited.is_empty() {
            outcomes[i] = Some(proposition::uncited(p));
        }
    }
    // The batches go out together; the pool's slots decide how many run at once, and each
    // call takes the next slot so that they do not queue behind one.
    let sends = batches
        .iter()
        .zip(calls)
        .enumerate()
        .map(|(n, (batch, (pages, text)))| {
            let j = &j;
            async move {
                let mut done = Judged::default();
                let verdicts = j
                    .verdicts(n + 1, text, batch.members.len(), &mut done)
                    .await;
                (batch, pages, done, verdicts)
            }
        });
    let results = futures::future::join_all(sends).await;
    // The first batch that failed is the error; those it stopped are not.
    let first_failure = results
        .iter()
        .position(|r| matches!(&r.3, Err((_, c)) if !matches!(c, JudgeCause::NotSent)));
    for (k, (batch, pages, done, verdicts)) in results.into_iter().enumerate() {
        out.calls += done.calls;
        out.cached += done.cached;
        out.retries.extend(done.retries);
        out.prompt_tokens += done.prompt_tokens;
        let verdicts = match verdicts {
            Ok(v) => v,
            Err((tokens, e)) if first_failure == Some(k) => {
                return Err(fail(proposition::names(&batch.pages), tokens, e))
            }
            Err(_) => continue,
        };
        for (&i, v) in batch.members.iter().zip(&verdicts) {
            outcomes[i] = Some(proposition::ground(&props[i], v, &pages, &|q| {
                proposition::find_in(ev, q)
            }));
        }
    }
    out.outcomes = outcomes.into_iter().flatten().collect();
    Ok(out)
}

/// The text of a batch's pages, from the evidence the verification read.
fn pages_of(ev: &verify::Evidence, batch: &Batch) -> Result<Vec<Page>, JudgeCause> {
    let want: Vec<(String, u32)> = batch
        .pages
        .iter()
        .map(|l| (l.file.clone(), l.page))
        .collect();
    ev.page_texts(&want)
        .into_iter()
        .zip(&batch.pages)
        .map(|(t, l)| {
            t.map(|text| Page {
                location: l.clone(),
                text,
            })
            .ok_or_else(|| JudgeCause::MissingPage(proposition::names(std::slice::from_ref(l))))
        })
        .collect()
}

impl Judge<'_> {
    /// The verdicts on one batch: from lexrun's cache, else from the judge (with one
    /// corrective retry). `Err` carries the prompt's tokens for the message.
    async fn verdicts(
        &self,
        n: usize,
        text: String,
        count: usize,
        out: &mut Judged,
    ) -> Result<Vec<proposition::Verdict>, (String, JudgeCause)> {
        let sh = self.sh;
        let schema = proposition::schema(count);
        let _ = std::fs::write(self.dir.join(format!("call-{n}-prompt.md")), &text);
        // A failure stops the batches still waiting for a slot.
        let failed = |e| {
            self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
            e
        };
        let tokens = self.check_context(&text).await.map_err(failed)?;
        out.prompt_tokens += tokens.0;
        let tokens_said = format!("{}{} prompt tokens", tokens.1, tokens.0);
        let stage = format!("judge {}", self.stage);
        let cache_key = CacheKey {
            format: CACHE_FORMAT,
            inputs: BTreeMap::new(),
            model_identity: self.ident.model.clone(),
            node: blake3::hash(format!("judge\0{}", self.node_hash).as_bytes())
                .to_hex()
                .to_string(),
            prompt: sh
                .store
                .as_ref()
                .and_then(|s| s.put(text.as_bytes()).ok())
                .unwrap_or_else(|| blake3::hash(text.as_bytes()).to_hex().to_string()),
            round: 1,
            sampling: self.model.sampling.clone(),
            schema: Some(schema.clone()),
        };
        let hash = cache_key.hash();
        let hit = self.cached(&hash, count);
        let was_hit = hit.is_some();
        let record_key = || {
            if let Some(store) = &sh.store {
                let _ = store.record_key(
                    &sh.run_id,
                    &sh.plan.workflow.name,
                    &self.m.name,
                    &stage,
                    self.round,
                    &hash,
                    &serde_json::to_value(&cache_key).unwrap_or_default(),
                    was_hit,
                    &sh.workflow_file,
                );
            }
        };
        if let Some(v) = hit {
            record_key();
            out.cached += 1;
            return Ok(v);
        }
        let mut call = backend::Call {
            stage: stage.clone(),
            model: served_name(self.model),
            prompt: text.clone(),
            schema: Some(schema),
            sampling: self.model.sampling.clone(),
            num_ctx: self.model.ctx,
            slot: model_slot(sh, self.model, &self.ident)
                .zip(self.ident.slots.filter(|k| *k > 0))
                .map(|(s, k)| (s + (n as u32).saturating_sub(1)) % k),
            timeout: Duration::from_secs(30 * 60),
            measure: false,
        };
        // One slot for the batch, its corrective retry included; a batch still waiting when
        // another has failed is not sent.
        let _permit = self.pool.slots.clone().acquire_owned().await;
        if self.stop.load(std::sync::atomic::Ordering::SeqCst) {
            return Err((tokens_said, JudgeCause::NotSent));
        }
        // In the ledger only the calls that are made.
        record_key();
        let mut corrected = false;
        loop {
            let reply = self
                .send(&call, out)
                .await
                .map_err(|e| failed((tokens_said.clone(), e)))?;
            match proposition::parse(&reply.text, count) {
                Ok(v) => {
                    let _ =
                        std::fs::write(self.dir.join(format!("call-{n}-answer.json")), &reply.text);
                    self.remember(&hash, &stage, &reply);
                    return Ok(v);
                }
                Err(why) if !corrected => {
                    corrected = true;
                    sh.events.note(
                        &self.key,
                        &format!("the judge's answer is not a verdict per sentence ({why}); asking once more"),
                    );
                    out.retries.push(format!("answer rejected: {why}"));
                    call.prompt = format!(
                        "{text}\n\nYour previous answer was rejected: {why}.\nReply again with only a JSON object that matches the schema, one verdict per statement."
                    );
                }
                Err(why) => {
                    let file = self.dir.join(format!("call-{n}-rejected-answer.txt"));
                    let _ = std::fs::write(&file, &reply.text);
                    return Err(failed((tokens_said, JudgeCause::Malformed { why, file })));
                }
            }
        }
    }

    /// Counts before sending: pages that do not fit the judge's context are an error, never
    /// cut. Returns the tokens and how they were found.
    async fn check_context(&self, text: &str) -> Result<(u64, &'static str), (String, JudgeCause)> {
        let model = self.model;
        let ctx = self.ident.n_ctx.map_or(model.ctx, |n| n.min(model.ctx));
        let reserve = model.sampling.get("max_tokens").map_or(0, |n| *n as u64);
        let estimate = (text.len() as u64).div_ceil(4);
        if text.len() as u64 + 64 + reserve <= ctx {
            return Ok((estimate, "about "));
        }
        let (tokens, how) = match self.pool.backend.count_tokens(text).await {
            Ok(Some(n)) => (n, ""),
            _ => (estimate, "about "),
        };
        if tokens + reserve > ctx {
            return Err((
                format!("{how}{tokens} prompt tokens"),
                JudgeCause::Call(CallFailure::TooLong {
                    tokens,
                    counted: if how.is_empty() {
                        "counted"
                    } else {
                        "estimated"
                    },
                    reserve,
                    model: model.name.clone(),
                    ctx,
                    slot_ctx: self.ident.n_ctx.filter(|n| *n < model.ctx),
                }),
            ));
        }
        Ok((tokens, how))
    }

    /// A cached answer that still reads as verdicts.
    fn cached(&self, hash: &str, n: usize) -> Option<Vec<proposition::Verdict>> {
        let sh = self.sh;
        if !sh.cache || sh.refresh.iter().any(|r| r == self.stage) {
            return None;
        }
        let store = sh.store.as_ref()?;
        let e = store.cache_get(hash)?;
        let text = String::from_utf8(store.get(&e.text_hash)?).ok()?;
        proposition::parse(&text, n).ok()
    }

    fn remember(&self, hash: &str, stage: &str, reply: &backend::Reply) {
        if let Some(store) = &self.sh.store {
            if let Ok(h) = store.put(reply.text.as_bytes()) {
                let _ = store.cache_put(&crate::store::CacheEntry {
                    key: hash.to_string(),
                    stage: stage.to_string(),
                    text_hash: h,
                    timings: serde_json::to_value(&reply.timings).unwrap_or_default(),
                    identity: self.ident.model.clone(),
                    created: crate::store::now(),
                });
            }
        }
    }

    /// One call (its batch holds one of the pool's slots), with the usual retries.
    async fn send(
        &self,
        call: &backend::Call,
        out: &mut Judged,
    ) -> Result<backend::Reply, JudgeCause> {
        let (sh, pool) = (self.sh, self.pool);
        sh.events
            .stage_started(&self.key, &pool.pool.name, &self.model.name, self.round);
        out.calls += 1;
        let ev = sh.events.clone();
        let key = self.key.clone();
        let on_note = move |n: String| ev.note(&key, &n);
        match backend::call(pool.backend.as_ref(), call, &sh.limits, &|_| {}, &on_note).await {
            Ok((reply, attempts)) => {
                out.retries.extend(attempts.retries);
                Ok(reply)
            }
            Err((CallError::NotRecorded(msg), _)) => {
                Err(JudgeCause::Call(CallFailure::NotRecorded(msg)))
            }
            Err((e, attempts)) => {
                out.retries.extend(attempts.retries);
                Err(JudgeCause::Call(server_failure(pool, &e, &sh.limits).await))
            }
        }
    }
}
