//! The server behind a call: its identity (asked once per model and run, or taken from the
//! ledger when a fully cached stage needs no server), the build and context it reports, and
//! the slot a model keeps.

use super::super::failure::{server_failure, CallFailure};
use super::super::*;
use super::{StageCall, Target};
use crate::plan::workflow::ServerKind;

impl StageCall<'_> {
    /// The server: ready, and serving what it should. Asked once per model and run.
    pub(super) async fn identity(&mut self, t: &Target<'_>) -> Result<Identity, CallFailure> {
        let (sh, pool, model) = (self.sh, t.pool, t.model);
        let ident = server_identity(sh, pool, model, &self.on_note()).await?;
        self.rec.identity = Some(ident.model.clone()).filter(|s| !s.is_empty());
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
        // What the server says that the workflow does not: once per model, on the terminal.
        let mut said = Vec::new();
        if let (Weights::Gguf { path, .. }, false) = (&model.weights, ident.model.is_empty()) {
            let want = Path::new(path)
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
            self.rec.warnings.push(w);
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

    /// A fully cached stage needs no server. With `--offline`, or when nothing listens at the
    /// pool's endpoint, the model identity is the one the ledger recorded for this stage's
    /// plan node; if the answer is in the cache under it, the server is not asked. Offline,
    /// anything else is a failure; online, the server is asked as usual (and its retries and
    /// errors say what is wrong).
    pub(super) async fn ledger_identity(
        &mut self,
        t: &Target<'_>,
        text: &str,
    ) -> Result<Option<Identity>, CallFailure> {
        let sh = self.sh;
        if !sh.offline && (!sh.cache || sh.store.is_none() || t.pool.reachable().await) {
            return Ok(None);
        }
        let stage = &self.step.name;
        let found = sh
            .store
            .as_ref()
            .and_then(|s| s.last_identity(&sh.plan.workflow.name, stage, &self.step.hash));
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
        self.rec.identity = Some(ident.model.clone());
        self.rec.identity_note = Some(note);
        Ok(Some(ident))
    }
}

/// The server's identity for a model: waited for while it loads, asked once per model and run.
pub(in crate::run) async fn server_identity(
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
                        Err(e) => return Err(server_failure(pool, &e, &sh.limits).await),
                    }
                }
            })
            .await
            .clone(),
        None => Ok(Identity::default()),
    }
}

/// The server slot a model keeps, so its prompt cache survives between calls.
pub(in crate::run) fn model_slot(sh: &Shared, model: &Model, ident: &Identity) -> Option<u32> {
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

pub(in crate::run) fn served_name(model: &Model) -> String {
    match &model.weights {
        Weights::Tag { tag } => tag.clone(),
        Weights::Gguf { .. } => model.name.clone(),
    }
}
