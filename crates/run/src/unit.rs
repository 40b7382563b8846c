//! What a unit of the run reports when it finishes, and what each of its steps starts
//! from: its record, its key in the progress shown, the model it names.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::plan::workflow::{Model, StepKind};
use crate::plan::Unit;
use crate::record::{Status, StepRecord, VerifyRecord};
use crate::shared::{Produced, Shared};

/// What a finished task reports.
pub(super) struct Done {
    pub(super) matter: usize,
    pub(super) unit: Unit,
    pub(super) status: Status,
    pub(super) why: Option<String>,
    /// New results by step name (a revise loop updates its target too).
    pub(super) results: Vec<(String, Produced)>,
    pub(super) records: Vec<StepRecord>,
    pub(super) verification: Vec<VerifyRecord>,
}

impl Done {
    /// Unit `unit` of matter `mi`, done so far, with nothing recorded yet.
    pub(super) fn new(matter: usize, unit: Unit) -> Done {
        Done {
            matter,
            unit,
            status: Status::Done,
            why: None,
            results: Vec::new(),
            records: Vec::new(),
            verification: Vec::new(),
        }
    }

    /// The unit failed, for `why`, with nothing of its own step left to mark.
    pub(super) fn fail(&mut self, why: impl Into<String>) {
        self.status = Status::Failed;
        self.why = Some(why.into());
    }

    /// The unit failed at the step recorded last, for `why`: the unit and that step's record
    /// both say so.
    pub(super) fn fail_step(&mut self, why: impl Into<String>) {
        self.fail(why);
        if let Some(r) = self.records.last_mut() {
            r.status = Some(Status::Failed);
            r.why = self.why.clone();
        }
    }

    /// Records one model call: its record, and its text on success; a failure fails the unit.
    pub(super) fn call(
        &mut self,
        r: Result<(Produced, StepRecord), Box<StepRecord>>,
    ) -> Option<Produced> {
        match r {
            Ok((p, rec)) => {
                self.records.push(rec);
                Some(p)
            }
            Err(rec) => {
                self.status = Status::Failed;
                self.why = rec.why.clone();
                self.records.push(*rec);
                None
            }
        }
    }

    /// A new version of `stage` (a revision): later rounds and steps read it.
    pub(super) fn replace(
        &mut self,
        results: &mut BTreeMap<String, Arc<Produced>>,
        stage: &str,
        p: Produced,
    ) {
        results.insert(stage.to_string(), Arc::new(p.clone()));
        self.results.push((stage.to_string(), p));
    }
}

pub(super) fn base_record(sh: &Shared, i: usize) -> StepRecord {
    let step = &sh.plan.steps[i];
    let (kind, tool, pool, model) = match &step.kind {
        StepKind::Model(m) => {
            let pool = sh
                .plan
                .models
                .iter()
                .find(|x| x.name == m.model)
                .map(|x| x.pool.clone());
            ("model", None, pool, Some(m.model.clone()))
        }
        StepKind::Tool(t) => ("tool", Some(t.tool.clone()), None, None),
    };
    StepRecord {
        name: step.name.clone(),
        kind: kind.into(),
        tool,
        pool,
        model,
        node_hash: step.hash.clone(),
        round: 1,
        started_ms: sh.started.elapsed().as_millis() as u64,
        ..StepRecord::default()
    }
}

pub(super) fn stage_key(multi: bool, matter: &str, stage: &str) -> String {
    if multi {
        format!("{matter}/{stage}")
    } else {
        stage.to_string()
    }
}

pub(super) fn model_of<'a>(sh: &'a Shared, name: &str) -> Option<&'a Model> {
    sh.plan
        .models
        .iter()
        .find(|m| m.name == name)
        .map(|n| &n.item)
}
