//! Every model with its pool and where its server answers: what `status` and `bench` ask.

use crate::backend::endpoint::{self, Overrides};
use crate::plan::workflow::{Model, Pool, ServerKind};
use crate::plan::Plan;

/// Every model with its pool and where its server answers (the pool's endpoint, or an
/// `--endpoint` override with its protocol): what `status` and `bench` ask, model by model.
pub(super) fn served<'a>(
    plan: &'a Plan,
    endpoints: &'a Overrides,
) -> impl Iterator<Item = (&'a Model, &'a Pool, ServerKind, String)> + 'a {
    plan.models.iter().filter_map(move |m| {
        let pool = plan.pools.iter().find(|p| p.name == m.pool)?;
        let (kind, url) = endpoint::resolve(endpoints, &pool.name, pool.server, &pool.endpoint);
        Some((&m.item, &pool.item, kind, url))
    })
}
