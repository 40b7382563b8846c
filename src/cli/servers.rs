//! `up`, `down`, `status` and `bench`: the model servers a workflow declares.

use camino::Utf8Path;

use super::args::ServerArgs;
use super::compile::checked_plan;
use super::failure::fail;
use super::output::{
    exit, print_out, table,
    Align::{Left, Right},
    Column,
};
use super::run::parse_endpoints;
use crate::plan;

/// The plan, the workflow's folder, the store, the endpoints and a runtime for the server
/// commands.
pub(super) struct ServerCx {
    pub(super) plan: plan::Plan,
    pub(super) dir: std::path::PathBuf,
    pub(super) store: std::path::PathBuf,
    pub(super) endpoints: crate::backend::endpoint::Overrides,
    pub(super) rt: tokio::runtime::Runtime,
}

pub(super) fn server_cx(
    file: &Utf8Path,
    a: &ServerArgs,
    color: bool,
    refusal: &str,
) -> Result<ServerCx, u8> {
    let plan = checked_plan(file, color, refusal)?;
    let dir = file
        .parent()
        .map(|d| d.as_std_path().to_path_buf())
        .unwrap_or_default();
    let store = a.store.clone().unwrap_or_else(|| dir.join(".lexrun"));
    let endpoints = parse_endpoints(&a.endpoint).ok_or(exit::USAGE)?;
    for pool in endpoints.keys() {
        if !plan.pools.iter().any(|p| &p.name == pool) {
            eprintln!("error: --endpoint {pool}: the workflow has no pool `{pool}`");
            return Err(exit::USAGE);
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the runtime: {e}");
            exit::USAGE
        })?;
    Ok(ServerCx {
        plan,
        dir,
        store,
        endpoints,
        rt,
    })
}

pub(super) fn cmd_up(
    file: &Utf8Path,
    only: &[String],
    dry_run: bool,
    a: &ServerArgs,
    timeout: u64,
    color: bool,
) -> u8 {
    use crate::serve;
    let cx = match server_cx(file, a, color, "nothing started") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    if dry_run {
        return match serve::dry_run(&cx.plan, &cx.dir, only, &cx.endpoints) {
            Ok(out) => print_out(&out),
            Err(e) => fail(&e),
        };
    }
    let limits = crate::backend::Limits {
        load: std::time::Duration::from_secs(timeout),
        ..Default::default()
    };
    match cx.rt.block_on(serve::up(
        &cx.plan,
        &cx.dir,
        &cx.store,
        only,
        &cx.endpoints,
        &limits,
    )) {
        Ok(started) => {
            eprintln!(
                "{} server{} up; `lexrun down {file}` stops {}",
                started.len(),
                if started.len() == 1 { "" } else { "s" },
                if started.len() == 1 { "it" } else { "them" }
            );
            exit::OK
        }
        Err(e) => fail(&e),
    }
}

pub(super) fn cmd_down(file: &Utf8Path, a: &ServerArgs, grace: u64, color: bool) -> u8 {
    let cx = match server_cx(file, a, color, "nothing stopped") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    match crate::serve::down(&cx.store, std::time::Duration::from_secs(grace)) {
        Ok(lines) if lines.is_empty() => {
            eprintln!(
                "no servers recorded in {}; nothing to stop",
                crate::serve::servers_dir(&cx.store).display()
            );
            exit::OK
        }
        Ok(lines) => {
            for l in lines {
                eprintln!("{l}");
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::ERRORS
        }
    }
}

pub(super) fn cmd_status(file: &Utf8Path, json: bool, a: &ServerArgs, color: bool) -> u8 {
    let cx = match server_cx(file, a, color, "no status") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    let limits = crate::backend::Limits {
        connect: std::time::Duration::from_secs(2),
        ..Default::default()
    };
    let rows = cx.rt.block_on(crate::serve::status(
        &cx.plan,
        &cx.store,
        &cx.endpoints,
        &limits,
    ));
    if json {
        return print_out(&(serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"));
    }
    let columns = [
        Column("pool", 10, Left),
        Column("model", 12, Left),
        Column("server", 10, Left),
        Column("state", 11, Left),
        Column("ctx", 8, Right),
        Column("busy", 6, Right),
        Column("decode", 10, Right),
        Column("build", 16, Left),
        Column("detail", 0, Left),
    ];
    let out = table(
        &columns,
        rows.iter().map(|r| {
            vec![
                r.pool.to_string(),
                r.model.to_string(),
                r.server.to_string(),
                r.state.to_string(),
                r.ctx.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
                match (r.slots_busy, r.slots) {
                    (Some(b), Some(n)) => format!("{b}/{n}"),
                    _ => "-".into(),
                },
                r.last_decode
                    .map(|d| format!("{d:.1} t/s"))
                    .unwrap_or_else(|| "-".into()),
                r.build.as_deref().unwrap_or("-").to_string(),
                if r.detail.is_empty() {
                    r.url.clone()
                } else {
                    format!("{} ({})", r.url, r.detail)
                },
            ]
        }),
    );
    print_out(&out)
}

pub(super) fn cmd_bench(
    file: &Utf8Path,
    runs: usize,
    enforce: bool,
    json: bool,
    a: &ServerArgs,
    color: bool,
) -> u8 {
    let cx = match server_cx(file, a, color, "no benchmark") {
        Ok(cx) => cx,
        Err(code) => return code,
    };
    let limits = crate::backend::Limits {
        retries: 1,
        ..Default::default()
    };
    let rows = cx.rt.block_on(crate::serve::bench(
        &cx.plan,
        &cx.store,
        &cx.endpoints,
        runs,
        &limits,
    ));
    let code = if enforce && rows.iter().any(|r| !r.ok) {
        exit::ERRORS
    } else {
        exit::OK
    };
    if json {
        let _ = print_out(&(serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"));
        return code;
    }
    let columns = [
        Column("model", 12, Left),
        Column("pool", 10, Left),
        Column("prompt", 8, Right),
        Column("prompt t/s", 12, Right),
        Column("decoded", 8, Right),
        Column("decode t/s", 12, Right),
        Column("min_decode", 11, Right),
        Column("predicted", 10, Right),
        Column("build", 16, Left),
        Column("verdict", 0, Left),
    ];
    let mut out = table(
        &columns,
        rows.iter().map(|r| {
            vec![
                r.model.to_string(),
                r.pool.to_string(),
                r.prompt_tokens.to_string(),
                format!("{:.1}", r.prompt_per_second),
                r.decode_tokens.to_string(),
                format!("{:.1}", r.decode_per_second),
                r.min_decode
                    .map(|m| format!("{m}"))
                    .unwrap_or_else(|| "-".into()),
                r.predicted
                    .map(|m| format!("{m:.0}"))
                    .unwrap_or_else(|| "-".into()),
                r.build.as_deref().unwrap_or("-").to_string(),
                match (&r.error, r.ok) {
                    (Some(e), _) => format!("error: {e}"),
                    (None, true) => "ok".into(),
                    (None, false) => "UNDER min_decode".into(),
                },
            ]
        }),
    );
    out.push_str(&format!(
        "median of {runs} run{} per model\n",
        if runs == 1 { "" } else { "s" }
    ));
    let _ = print_out(&out);
    code
}
