//! Recording an answer: the ledger first (so the intake guard knows the text from the moment
//! it exists, with every claim the model wrote), then `output.md` and `answer.json`, then the
//! step's record and the terminal line.

use std::path::Path;

use serde_json::{json, Value};

use crate::answer::{flatten_answer, settle_contradiction};
use crate::backend::Identity;
use crate::backend::Reply;
use crate::cache_key::CacheKey;
use crate::call::steps::{StageCall, Target};
use crate::failure::{write_failure, CallFailure};
use crate::intake;
use crate::plan::workflow::Step;
use crate::record::Status;
use crate::shared::{Matter, Produced, Shared};
use crate::verify;

impl StageCall<'_> {
    /// Writes the answer (`output.md`, `answer.json`), enters it in the ledger, and fills in
    /// the record: speed warnings, summary, timings.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_answer(
        &mut self,
        t: &Target<'_>,
        ident: &Identity,
        cache_key: &CacheKey,
        reply: Reply,
        mut answer: Option<Value>,
        dir: &Path,
        prompt_file: &Path,
    ) -> Result<Produced, CallFailure> {
        self.reply_warnings(t, &reply);
        // A review that passes while listing objections does not pass: every condition
        // (`until`, `stop when`, `when`) reads the settled answer, `answer.json` holds it, and
        // `output.md` keeps what the model wrote.
        if let Some(why) = answer.as_mut().and_then(settle_contradiction) {
            self.warn(why);
        }
        // Entered in the ledger before it is written: the intake guard knows it from the
        // moment it exists.
        self.enter_in_ledger(ident, cache_key, &reply.text, answer.as_ref(), dir)?;
        let p = write_answer(&reply.text, answer, dir)?;
        let (sh, m, round) = (self.sh, self.m, self.round);
        let rec = &mut *self.rec;
        let t_ = &reply.timings;
        rec.outputs = std::iter::once(prompt_file.display().to_string())
            .chain(p.files.iter().map(|f| f.display().to_string()))
            .collect();
        let incomplete =
            crate::incomplete::why_incomplete(&reply.text, reply.finish.as_deref(), t_.predicted_n);
        rec.status = Some(match incomplete {
            Some(_) => Status::Incomplete,
            None => Status::Done,
        });
        rec.why = incomplete.clone();
        rec.summary = format!(
            "{}{} prompt tokens ({} from cache), {} generated at {:.1} tok/s",
            match (rec.cached, rec.identity_note.is_some()) {
                (true, true) => "from lexrun's cache (server not asked): ",
                (true, false) => "from lexrun's cache: ",
                _ => "",
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
        let line = format!("{} ({:.1} s)", rec.summary, rec.duration_ms as f64 / 1000.0);
        let (status, line) = match &incomplete {
            Some(why) => ("incomplete", format!("{line}; incomplete: {why}")),
            None => ("done", line),
        };
        sh.events.stage_finished(
            self.key,
            status,
            &line,
            json!({"matter": m.name, "round": round, "timings": reply.timings, "prompt_tokens": rec.prompt_tokens, "why": incomplete}),
        );
        Ok(p)
    }

    /// A warning on the stage: said, and kept in its record.
    fn warn(&mut self, w: String) {
        self.sh.events.warn(self.key, &w);
        self.rec.warnings.push(w);
    }

    /// Warns of a reply decoded under the model's `min_decode`, cut at a repetition, or
    /// stopped at the token limit.
    fn reply_warnings(&mut self, t: &Target<'_>, reply: &Reply) {
        let t_ = &reply.timings;
        if let Some(floor) = t.model.min_decode {
            if t_.predicted_n >= 8
                && t_.predicted_per_second > 0.0
                && t_.predicted_per_second < floor
            {
                self.warn(format!(
                    "decoded at {:.1} tok/s, under the model's min_decode of {floor} tok/s",
                    t_.predicted_per_second
                ));
            }
        }
        if reply.finish.as_deref() == Some(crate::backend::stream::REPETITION) {
            self.warn(format!(
                "the model was repeating itself (the same passage of {} words {} times): lexrun cut the answer after {} tokens and kept the text up to the passage's second time; the answer is incomplete",
                crate::backend::stream::LOOP_WORDS,
                crate::backend::stream::LOOP_TIMES,
                t_.predicted_n
            ));
        }
        if reply.finish.as_deref() == Some("length") {
            self.warn(format!(
                "the answer stopped at the token limit ({} tokens); it may be cut short",
                t_.predicted_n
            ));
        }
    }

    /// Enters the stage's text and its claims in the ledger, if there is one. A ledger that
    /// is gone fails the call: the answer stays in the store (the next run takes it from the
    /// cache), and nothing the guard would not know of is written.
    fn enter_in_ledger(
        &mut self,
        ident: &Identity,
        cache_key: &CacheKey,
        text: &str,
        answer: Option<&Value>,
        dir: &Path,
    ) -> Result<(), CallFailure> {
        let (sh, m, step, round) = (self.sh, self.m, self.step, self.round);
        let Some(store) = &sh.store else {
            return Ok(());
        };
        let h = blake3::hash(text.as_bytes()).to_hex().to_string();
        let registered = store.add_artifact(
            &crate::store::Artifact {
                hash: h,
                text_hash: intake::text_hash(text),
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
            text,
            &m.evidence_fps,
        );
        if registered.is_err() && store.lost().is_some() {
            return Err(CallFailure::LedgerLost(true));
        }
        if let Err(e) = registered {
            self.warn(format!(
                "this stage's text could not be entered in the ledger, so the intake guard will not recognise a copy of it: {e}"
            ));
        }
        let _ = store.add_claims(&model_claims(sh, m, step, text, answer));
        Ok(())
    }
}

/// Writes `output.md` and, for a structured answer, `answer.json`: what the stage produced.
fn write_answer(text: &str, answer: Option<Value>, dir: &Path) -> Result<Produced, CallFailure> {
    let mut p = Produced {
        text: Some(text.to_string()),
        answer: answer.clone(),
        ..Produced::default()
    };
    let out_md = dir.join("output.md");
    crate::atomic::write_private(&out_md, text).map_err(write_failure(&out_md))?;
    p.files.push(out_md.clone());
    p.primary.insert("md".into(), out_md.clone());
    p.primary.insert("txt".into(), out_md.clone());
    if let Some(a) = &answer {
        let aj = dir.join("answer.json");
        let _ = crate::atomic::write_private(&aj, serde_json::to_vec_pretty(a).unwrap_or_default());
        p.primary.insert("json".into(), aj.clone());
        p.files.push(aj);
    } else {
        p.primary.insert("json".into(), out_md.clone());
    }
    Ok(p)
}

/// Every claim in a model's text (a structured answer read value by value, as verification
/// reads it), for the ledger: what lexrun first saw a model write, and when.
fn model_claims(
    sh: &Shared,
    m: &Matter,
    step: &Step,
    text: &str,
    answer: Option<&Value>,
) -> Vec<crate::store::ClaimRecord> {
    let flat;
    let text = match answer {
        Some(a) => {
            flat = flatten_answer(a);
            flat.as_str()
        }
        None => text,
    };
    let at = crate::store::now_ms();
    verify::claims(text, &sh.prefixes)
        .into_iter()
        .map(|c| crate::store::ClaimRecord {
            matter: m.name.clone(),
            kind: c.kind.as_str().to_string(),
            ident: c.identity(),
            key: serde_json::to_string(&c.key).unwrap_or_default(),
            text: c.text.clone(),
            run_id: sh.run_id.clone(),
            stage: step.name.clone(),
            created: at,
            status: "unchecked".into(),
        })
        .collect()
}
