//! The server behind a call: its identity, asked once per model and run, and the slot a
//! model keeps.

use crate::backend::{self, CallError, Identity};
use crate::failure::CallFailure;
use crate::plan::workflow::{Model, Weights};
use crate::shared::{PoolRt, Shared};

/// The server's identity for a model: waited for while it loads, asked once per model and run.
pub(crate) async fn server_identity(
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
pub(crate) fn model_slot(sh: &Shared, model: &Model, ident: &Identity) -> Option<u32> {
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

pub(crate) fn served_name(model: &Model) -> String {
    match &model.weights {
        Weights::Tag { tag } => tag.clone(),
        Weights::Gguf { .. } => model.name.clone(),
    }
}

/// A server's failure, naming the pool and where it was asked. A "not found" is checked
/// against what the server does speak: another protocol is said in so many words.
pub(crate) async fn server_failure(
    pool: &PoolRt,
    e: &CallError,
    limits: &crate::backend::Limits,
) -> CallFailure {
    if matches!(
        e,
        CallError::Status {
            code: 404 | 405,
            ..
        }
    ) {
        if let Some(kind) = crate::backend::endpoint::detect(&pool.endpoint, limits).await {
            if kind != pool.pool.server {
                return CallFailure::Protocol {
                    declared: pool.pool.server,
                    pool: pool.pool.name.clone(),
                    endpoint: crate::credentials::url(&pool.endpoint),
                    why: crate::backend::endpoint::mismatch(
                        &pool.pool.name,
                        &pool.endpoint,
                        pool.pool.server,
                        kind,
                    ),
                };
            }
        }
    }
    server_error(pool, e)
}

/// A server's failure, naming the pool and where it was asked.
fn server_error(pool: &PoolRt, e: &CallError) -> CallFailure {
    CallFailure::Server {
        server: pool.pool.server.as_str(),
        pool: pool.pool.name.clone(),
        endpoint: crate::credentials::url(&pool.endpoint),
        source: e.clone(),
    }
}
