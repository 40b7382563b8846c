//! One call of a model stage, in its steps: render the prompt, learn the server's identity,
//! check the prompt fits the context, answer from the cache or call the model, record the
//! answer. Each step returns why it failed; [`stage_call`] turns that into the step's record.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use crate::plan::workflow::StepKind;
use crate::record::{Status, StepRecord};
use crate::shared::{Matter, Produced, Shared};
use crate::unit::{base_record, stage_key};

mod identity;
mod model_call;
mod record;
mod steps;
mod template;

pub(super) use model_call::{CallLog, ModelCall, Parse};
use steps::StageCall;

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
                let at = crate::store::StepAt {
                    run_id: &sh.run_id,
                    workflow: &sh.plan.workflow.name,
                    file: &sh.workflow_file,
                    matter: &m.name,
                    stage: &step.name,
                    round,
                };
                let _ = store.add_failure(&at, &why);
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
