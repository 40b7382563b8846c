//! The edges the runtime schedules by, stated by the plan so the runtime decides none of them:
//! which stage reviews which, and which unit waits for which.

use std::collections::{BTreeMap, BTreeSet};

use super::types::Plan;
use super::workflow::StepKind;

/// A unit of scheduling: a step (by its index in `Plan::steps`), or the verification of a
/// stage's text (by its index in `Plan::verify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    Step(usize),
    Verify(usize),
}

impl Plan {
    /// Target stage → the stage whose `revise` loop reviews it.
    pub fn reviewer_of(&self) -> BTreeMap<String, String> {
        self.steps
            .iter()
            .filter_map(|s| match &s.kind {
                StepKind::Model(m) => m
                    .revise
                    .as_ref()
                    .map(|r| (r.target.clone(), s.name.clone())),
                StepKind::Tool(_) => None,
            })
            .collect()
    }

    /// The units each unit waits for. A step waits for what it reads and runs after; when
    /// one of those is reviewed, also for its reviewer (so it reads the final version) and its
    /// verification. The reviewer itself reads each version before it is verified. A
    /// verification waits for its stage and the stage's reviewer.
    pub fn dependencies(&self) -> BTreeMap<Unit, Vec<Unit>> {
        let reviewer_of = self.reviewer_of();
        let index: BTreeMap<&str, usize> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let verifies_of = |stage: &str| -> Vec<usize> {
            self.verify
                .iter()
                .enumerate()
                .filter(|(_, v)| v.stage == stage)
                .map(|(i, _)| i)
                .collect()
        };
        let mut deps = BTreeMap::new();
        for (i, s) in self.steps.iter().enumerate() {
            let mut d = BTreeSet::new();
            for name in s.after.iter().chain(&s.reads) {
                let Some(&j) = index.get(name.as_str()) else {
                    continue;
                };
                d.insert(Unit::Step(j));
                let reviewer = reviewer_of.get(name);
                if reviewer == Some(&s.name) {
                    continue;
                }
                if let Some(r) = reviewer.and_then(|r| index.get(r.as_str())) {
                    d.insert(Unit::Step(*r));
                }
                for v in verifies_of(name) {
                    d.insert(Unit::Verify(v));
                }
            }
            deps.insert(Unit::Step(i), d.into_iter().collect());
        }
        for (i, v) in self.verify.iter().enumerate() {
            let mut d = Vec::new();
            if let Some(&j) = index.get(v.stage.as_str()) {
                d.push(Unit::Step(j));
            }
            if let Some(r) = reviewer_of
                .get(&v.stage)
                .and_then(|r| index.get(r.as_str()))
            {
                d.push(Unit::Step(*r));
            }
            deps.insert(Unit::Verify(i), d);
        }
        deps
    }
}
