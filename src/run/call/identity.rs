//! The server behind a call: its identity, asked once per model and run, and the slot a
//! model keeps.

use crate::backend::{self, Identity};
use crate::plan::workflow::{Model, Weights};
use crate::run::failure::{server_failure, CallFailure};
use crate::run::shared::{PoolRt, Shared};

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
