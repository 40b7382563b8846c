//! Judging propositions (`propositions must hold`): every sentence of a verified stage that
//! cites pages goes to the `verify` block's judge model with the text of only those pages.
//! One call per distinct set of cited pages (the sentences citing it share it), on the judge's
//! pool and slots, cached like every model call, taped like every model call. The answer must
//! follow a JSON schema; one that does not gets one corrective retry, then the verification
//! fails naming the stage, the pages and the tokens. A judge that is down, or whose context
//! cannot hold the pages, fails the same way: never a silent pass.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::backend::Identity;
use crate::call::{CallLog, ModelCall, Parse};
use crate::failure::CallFailure;
use crate::plan::workflow::Model;
use crate::record::{Status, StepRecord};
use crate::shared::{Matter, PoolRt, Shared};
use crate::unit::{base_record, model_of, stage_key};
use crate::verify;
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
    #[error("a cited page could not be read again from the evidence ({0})")]
    MissingPage(String),
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

/// One judge: the model, its pool, and where its calls are written.
struct Judge<'a> {
    sh: &'a Shared,
    m: &'a Matter,
    stage: &'a str,
    model: &'a Model,
    /// The judge's own plan node: its model's, marked as a judge's.
    node: String,
    /// The name its calls go by in the ledger and the cache (`judge STAGE`).
    judged_as: String,
    pool: &'a PoolRt,
    dir: PathBuf,
    key: String,
    round: u32,
    /// Set when a batch has failed: the batches still waiting for a slot are not sent.
    stop: AtomicBool,
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
    let unjudged = |cause: CallFailure| JudgeFailure {
        stage: stage.to_string(),
        model: model_name.to_string(),
        pages: "no page".to_string(),
        tokens: "no tokens".into(),
        cause: JudgeCause::Call(cause),
    };
    let Some(node) = sh.plan.models.iter().find(|x| x.name == model_name) else {
        return Err(unjudged(CallFailure::NoModel(model_name.to_string())));
    };
    let model = &node.item;
    let Some(pool) = sh.pools.get(&model.pool) else {
        return Err(unjudged(CallFailure::NoPool(model.pool.clone())));
    };
    let j = Judge::new(sh, m, stage, node, pool, round);
    // Every call's pages and prompt first, so that a failure can name them all.
    let batches = proposition::batches(props);
    let mut calls = Vec::with_capacity(batches.len());
    for b in &batches {
        let pages = pages_of(ev, b)
            .map_err(|e| j.fail(proposition::names(&b.pages), "no tokens".into(), e))?;
        let statements: Vec<&str> = b.members.iter().map(|&i| props[i].text.as_str()).collect();
        let text = proposition::prompt(&pages, &statements);
        calls.push((pages, text));
    }
    let _ = crate::atomic::private_dir(&j.dir);
    let mut out = Judged::default();
    let known = j.identities(&batches, &calls, &mut out).await?;
    j.send_all(batches, calls, known, ev, props, out).await
}

/// A batch's cited pages and the prompt that gives them to the judge.
type Prompt = (Vec<Page>, String);

impl<'a> Judge<'a> {
    /// The judge of `stage` on `pool`; its calls are written under the matter's run folder.
    fn new(
        sh: &'a Shared,
        m: &'a Matter,
        stage: &'a str,
        node: &'a crate::plan::Node<Model>,
        pool: &'a PoolRt,
        round: u32,
    ) -> Self {
        let dir = m
            .run_dir
            .join(format!("verify-{stage}"))
            .join(if round > 1 {
                format!("judge-round-{round}")
            } else {
                "judge".into()
            });
        Judge {
            sh,
            m,
            stage,
            model: &node.item,
            node: blake3::hash(format!("judge\0{}", node.hash).as_bytes())
                .to_hex()
                .to_string(),
            judged_as: format!("judge {stage}"),
            pool,
            dir,
            key: stage_key(sh.multi, &m.name, &format!("judge {stage}")),
            round,
            stop: Default::default(),
        }
    }

    /// A failure of this judge, on `pages`, with the prompt's `tokens`.
    fn fail(&self, pages: String, tokens: String, cause: JudgeCause) -> JudgeFailure {
        JudgeFailure {
            stage: self.stage.to_string(),
            model: self.model.name.clone(),
            pages,
            tokens,
            cause,
        }
    }

    /// The model that answers each batch, and whether the ledger named it. The server is
    /// asked once for all the batches, unless the ledger names the model of every one and
    /// each is in the cache (`--offline`, or a server that does not answer).
    async fn identities(
        &self,
        batches: &[Batch],
        calls: &[Prompt],
        out: &mut Judged,
    ) -> Result<Vec<Option<(Identity, bool)>>, JudgeFailure> {
        let mut known = Vec::with_capacity(calls.len());
        for (n, (b, (_, text))) in batches.iter().zip(calls).enumerate() {
            let parse = |t: &str| proposition::parse(t, b.members.len());
            let mut log = CallLog::default();
            let ident = self
                .call(n + 1, b.members.len(), &parse)
                .ledger_identity(text, &mut log)
                .await
                .map_err(|e| {
                    self.fail(
                        proposition::names(&b.pages),
                        "no tokens".into(),
                        JudgeCause::Call(e),
                    )
                })?;
            out.identity = log.identity.unwrap_or(std::mem::take(&mut out.identity));
            known.push(ident.map(|i| (i, true)));
        }
        if known.iter().any(Option::is_none) {
            let parse = |t: &str| proposition::parse(t, 0);
            let mut log = CallLog::default();
            let ident = self
                .call(1, 0, &parse)
                .server(&mut log)
                .await
                .map_err(|e| {
                    let all: Vec<Location> = batches.iter().flat_map(|b| b.pages.clone()).collect();
                    let tokens: u64 = calls
                        .iter()
                        .map(|(_, t)| (t.len() as u64).div_ceil(4))
                        .sum();
                    self.fail(
                        proposition::names(&all),
                        format!(
                            "about {tokens} prompt tokens in {} call{}",
                            calls.len(),
                            if calls.len() == 1 { "" } else { "s" }
                        ),
                        JudgeCause::Call(e),
                    )
                })?;
            out.identity = ident.model.clone();
            for k in known.iter_mut().filter(|k| k.is_none()) {
                *k = Some((ident.clone(), false));
            }
        }
        Ok(known)
    }

    /// Sends the batches together (the pool's slots decide how many run at once, and each
    /// call takes the next slot so that they do not queue behind one) and grounds their
    /// verdicts; sentences that cite nothing are judged without a call. The first batch
    /// that failed is the error; those it stopped are not.
    async fn send_all(
        &self,
        batches: Vec<Batch>,
        calls: Vec<Prompt>,
        known: Vec<Option<(Identity, bool)>>,
        ev: &verify::Evidence,
        props: &[Proposition],
        mut out: Judged,
    ) -> Result<Judged, JudgeFailure> {
        let mut outcomes: Vec<Option<verify::Outcome>> = vec![None; props.len()];
        for (i, p) in props.iter().enumerate() {
            if p.cited.is_empty() {
                outcomes[i] = Some(proposition::uncited(p));
            }
        }
        let sends = batches.iter().zip(calls).zip(known).enumerate().map(
            |(n, ((batch, (pages, text)), ident))| async move {
                let mut done = Judged::default();
                let (ident, from_ledger) = ident.unwrap_or_default();
                let verdicts = self
                    .verdicts(
                        n + 1,
                        text,
                        batch.members.len(),
                        ident,
                        from_ledger,
                        &mut done,
                    )
                    .await;
                (batch, pages, done, verdicts)
            },
        );
        let results = futures::future::join_all(sends).await;
        let first_failure = results.iter().position(
            |r| matches!(&r.3, Err((_, c)) if !matches!(c, JudgeCause::Call(CallFailure::NotSent))),
        );
        for (k, (batch, pages, done, verdicts)) in results.into_iter().enumerate() {
            out.calls += done.calls;
            out.cached += done.cached;
            out.retries.extend(done.retries);
            out.prompt_tokens += done.prompt_tokens;
            let verdicts = match verdicts {
                Ok(v) => v,
                Err((tokens, e)) if first_failure == Some(k) => {
                    return Err(self.fail(proposition::names(&batch.pages), tokens, e))
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
    /// The model call of batch `n`, of `count` sentences.
    fn call<'b>(
        &'b self,
        n: usize,
        count: usize,
        parse: Parse<'b, Vec<proposition::Verdict>>,
    ) -> ModelCall<'b, Vec<proposition::Verdict>> {
        let sh = self.sh;
        ModelCall {
            sh,
            matter: &self.m.name,
            stage: &self.judged_as,
            refresh: sh.refresh.iter().any(|r| r == self.stage),
            key: &self.key,
            model: self.model,
            pool: self.pool,
            node: self.node.clone(),
            inputs: BTreeMap::new(),
            round: self.round,
            key_round: 1,
            sampling: self.model.sampling.clone(),
            schema: Some(proposition::schema(count)),
            slot_offset: (n as u32).saturating_sub(1),
            timeout: Duration::from_secs(30 * 60),
            retry_ask: ", one verdict per statement",
            rejected_as: "is not one verdict per sentence",
            rejected_file: self.dir.join(format!("call-{n}-rejected-answer.txt")),
            parse,
            stop: Some(&self.stop),
        }
    }

    /// The verdicts on one batch: from lexrun's cache, else from the judge (with one
    /// corrective retry). `Err` carries the prompt's tokens for the message.
    async fn verdicts(
        &self,
        n: usize,
        text: String,
        count: usize,
        ident: Identity,
        from_ledger: bool,
        out: &mut Judged,
    ) -> Result<Vec<proposition::Verdict>, (String, JudgeCause)> {
        let _ = crate::atomic::write_private(self.dir.join(format!("call-{n}-prompt.md")), &text);
        let parse = |t: &str| proposition::parse(t, count);
        let call = self.call(n, count, &parse);
        let mut log = CallLog::default();
        let checked = match from_ledger {
            true => Ok(()),
            false => call.check_context(&ident, &text, &mut log).await,
        };
        let estimate = (text.len() as u64).div_ceil(4);
        let tokens_said = match (log.prompt_tokens, log.counted) {
            (Some(t), "counted") => format!("{t} prompt tokens"),
            (Some(t), _) => format!("about {t} prompt tokens"),
            (None, _) => format!("about {estimate} prompt tokens"),
        };
        out.prompt_tokens += log.prompt_tokens.unwrap_or(estimate);
        if let Err(e) = checked {
            self.stop.store(true, Ordering::SeqCst);
            return Err((tokens_said, JudgeCause::Call(e)));
        }
        let answered = call.answer(ident, text, &mut log).await;
        out.calls += usize::from(log.sent);
        out.cached += usize::from(log.cached);
        out.retries.extend(log.retries);
        let a = answered.map_err(|e| (tokens_said, JudgeCause::Call(e)))?;
        if log.sent {
            let _ = crate::atomic::write_private(
                self.dir.join(format!("call-{n}-answer.json")),
                &a.reply.text,
            );
        }
        Ok(a.value)
    }
}
