//! The prompts lexrun sends for structured answers — the stdlib gate and adversary as
//! `workflows/live.lex` uses them, and the proposition judge's — sent to a small real
//! instruct model (SmolLM2-135M-Instruct, `scripts/small-model`, on the real llama.cpp
//! server) through lexrun's own backend, and each answer read by lexrun's own parser for its
//! schema. Each prompt is built from the workflow's plan as a run builds it: its template,
//! its `returns` schema, its stage's sampling and cap, the matter's evidence packet.
//! What the model concludes is its own; that the answer is well-formed under the schema, at
//! the cap the workflow gives it, is what is checked.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use lexrun::backend::{self, Call, Limits, ServerKind};
use lexrun::plan::workflow::{ModelStage, StepKind};
use lexrun::plan::Plan;
use lexrun::run::{prompt, schema};
use lexrun::verify::proposition;
use lexrun::verify::Location;
use serde_json::{json, Value};
use support::servers;

const WORKFLOW: &str = "workflows/live.lex";
const MATTER: &str = "workflows/matters/okafor-v-lakeside";

/// One server for every test here; calls take turns on its one slot.
fn server() -> &'static servers::Llama {
    static S: OnceLock<servers::Llama> = OnceLock::new();
    S.get_or_init(servers::start_small)
}

fn plan() -> Plan {
    let checked = lexrun::check::check_path(WORKFLOW.into());
    let w = checked
        .workflow
        .unwrap_or_else(|| panic!("{WORKFLOW} does not check: {:?}", checked.diagnostics));
    lexrun::plan::lower(&w)
}

fn stage<'a>(plan: &'a Plan, name: &str) -> &'a ModelStage {
    let step = plan
        .steps
        .iter()
        .find(|s| s.item.name == name)
        .unwrap_or_else(|| panic!("no stage `{name}` in {WORKFLOW}"));
    match &step.item.kind {
        StepKind::Model(ms) => ms,
        StepKind::Tool(_) => panic!("`{name}` is not a model stage"),
    }
}

/// The intake files, in order.
fn intake() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(Path::new(MATTER).join("intake"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files
}

/// The matter's evidence packet, as a stage that reads `client` gets it.
fn evidence() -> String {
    let mut files = Vec::new();
    for f in intake() {
        let shown = format!("intake/{}", f.file_name().unwrap().to_string_lossy());
        let docs = prompt::read(&f, false).unwrap();
        files.extend(prompt::evidence_files("client", &shown, &f, docs));
    }
    prompt::packet(&files)
}

/// Sends one prompt the way a run does and returns the answer's text.
fn ask(stage_name: &str, text: String, schema: Value, sampling: &BTreeMap<String, f64>) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let limits = Limits {
        // Room for a busy machine; what is checked is the answer, not how fast it came.
        idle: Duration::from_secs(1800),
        ..Limits::default()
    };
    let b = backend::connect(ServerKind::LlamaCpp, &server().url, &limits).unwrap();
    let call = Call {
        stage: stage_name.into(),
        model: "small".into(),
        prompt: text,
        schema: Some(schema),
        sampling: sampling.clone(),
        num_ctx: 8192,
        slot: Some(0),
        timeout: Duration::from_secs(1800),
        measure: false,
    };
    let (reply, _) = rt
        .block_on(backend::call(b.as_ref(), &call, &limits, &|_| {}, &|_| {}))
        .unwrap_or_else(|(e, _)| panic!("`{stage_name}`: {e}"));
    eprintln!(
        "{stage_name}: {} prompt tokens ({} cached), {} generated, finish {:?}:\n{}",
        reply.timings.prompt_n,
        reply.timings.cache_n,
        reply.timings.predicted_n,
        reply.finish,
        reply.text
    );
    reply.text
}

/// A stage's prompt as its template renders it, with the variables a run gives it.
fn render(plan: &Plan, name: &str, reviewed: Option<&str>) -> String {
    let ms = stage(plan, name);
    let mut vars = prompt::base_vars(
        (&plan.workflow.name, &plan.workflow.description),
        ("okafor-v-lakeside", MATTER),
        name,
    );
    vars["evidence"] = json!(evidence());
    if let Some(r) = reviewed {
        vars["reviewed"] = json!(r);
    }
    let fields = ms.returns.as_ref().expect("the stage returns a record");
    vars["schema"] = json!(serde_json::to_string_pretty(&schema::schema(fields)).unwrap());
    prompt::render(&ms.prompt.text, &vars).unwrap()
}

#[test]
fn the_gate_answers_grounds_and_reason_under_its_schema() {
    let plan = plan();
    let ms = stage(&plan, "gate");
    assert!(
        ms.prompt.origin.starts_with("std.prompts.gate "),
        "{}",
        ms.prompt.origin
    );
    let fields = ms.returns.as_ref().unwrap();
    let text = render(&plan, "gate", None);
    let answer = ask("gate", text, schema::schema(fields), &ms.sampling);
    let v = schema::validate(&answer, fields)
        .unwrap_or_else(|e| panic!("the gate's answer does not parse: {e}\n{answer}"));
    assert!(v["grounds"].is_boolean() && v["reason"].is_string(), "{v}");
}

/// A draft with one fact the record contradicts (the deposit was kept, not returned).
const DRAFT: &str = "1. Grace Okafor paid a security deposit of $1,800.00 (OKAFOR000002).\n\
2. She moved out on February 28, 2025 and returned both keys (OKAFOR000001).\n\
3. Lakeside Rentals LLC returned the whole deposit on March 10, 2025 (OKAFOR000003).\n";

#[test]
fn the_adversary_answers_passes_and_objections_under_its_schema() {
    let plan = plan();
    let ms = stage(&plan, "attack");
    assert!(
        ms.prompt.origin.starts_with("std.prompts.adversary "),
        "{}",
        ms.prompt.origin
    );
    let fields = ms.returns.as_ref().unwrap();
    let text = render(&plan, "attack", Some(DRAFT));
    assert!(
        text.contains(DRAFT.trim_end()),
        "the draft is in the prompt"
    );
    let answer = ask("attack", text, schema::schema(fields), &ms.sampling);
    let v = schema::validate(&answer, fields)
        .unwrap_or_else(|e| panic!("the adversary's answer does not parse: {e}\n{answer}"));
    assert!(v["passes"].is_boolean(), "{v}");
    let objections = v["objections"].as_array().expect("objections is a list");
    assert!(objections.iter().all(Value::is_string), "{v}");
}

#[test]
fn the_judge_gives_one_verdict_per_statement_under_its_schema() {
    let plan = plan();
    let verify = plan
        .verify
        .iter()
        .find(|v| v.item.stage == "draft")
        .expect("the draft is verified");
    let judge = verify
        .item
        .judge
        .clone()
        .expect("the verification has a judge");
    let model = plan
        .models
        .iter()
        .find(|m| m.item.name == judge)
        .expect("the judge is a declared model");
    // The pages a judge reads: each intake page with its Bates stamp.
    let mut pages = Vec::new();
    for f in intake() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, page) in text.split('\u{c}').enumerate() {
            let bates = page.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
            pages.push(proposition::Page {
                location: Location {
                    file: f.display().to_string(),
                    page: i as u32 + 1,
                    bates: Some(bates.trim().to_string()),
                    star: None,
                    snippet: String::new(),
                    span: (0, 0),
                },
                text: page.to_string(),
            });
        }
    }
    let statements: Vec<&str> = DRAFT
        .lines()
        .map(|l| l.split_once(". ").unwrap().1)
        .collect();
    let text = proposition::prompt(&pages, &statements);
    let sampling = &model.item.sampling;
    let answer = ask(
        "judge draft",
        text,
        proposition::schema(statements.len()),
        sampling,
    );
    let verdicts = proposition::parse(&answer, statements.len())
        .unwrap_or_else(|e| panic!("the judge's answer does not parse: {e}\n{answer}"));
    assert_eq!(verdicts.len(), statements.len());
}
