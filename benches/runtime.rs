//! Runtime benchmarks, each reported as a ratio against its comparison in the same run.
//!
//! 1. Engine overhead: the affidavit example against the real llama.cpp server (tiny model;
//!    the Ollama pool on the protocol test server), `lexrun` end to end vs a plain HTTP loop
//!    sending the same requests one after another. Target ≤ 1.05.
//! 2. Prompt-cache reuse: the test pipeline with its two llama.cpp pools on two real servers;
//!    the second stage on the gatekeeper model (`review`) takes ≥ 90% of the evidence
//!    packet's tokens from the server's cache (`timings.cache_n`).
//! 3. Pipelining: 8 matters through a chain of 4 stages on 4 pools served by test servers with
//!    fixed per-token delays; makespan ≤ 1.05 × the bottleneck pool's total busy time. The
//!    one-matter-at-a-time makespan is shown beside it.
//!
//! Run: `cargo bench --bench runtime` (builds llama-server on first use via scripts/).

#[path = "../tests/support/servers.rs"]
mod servers;

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use servers::{Answer, Fake, Seen, Speaks};

const RUNS: usize = 11;

fn lexrun_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let st = Command::new("cargo")
        .args(["build", "--release", "--quiet", "--bin", "lexrun"])
        .current_dir(root)
        .status()
        .expect("cargo build");
    assert!(st.success());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    target.join("release").join("lexrun")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A blocking POST with a JSON body over one connection; reads the whole (streamed) answer.
fn post(url: &str, path: &str, body: &Value) -> String {
    let addr = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).expect("connect");
    let b = body.to_string();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
        b.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn run_lexrun(
    bin: &Path,
    workflow: &str,
    out: &Path,
    endpoints: &[(String, String)],
    extra: &[&str],
) -> (Duration, Value) {
    let mut cmd = Command::new(bin);
    // A fresh store each time: every run calls the models (and stores their answers).
    let store = tempfile::tempdir().unwrap();
    cmd.args(["run", workflow, "--out"])
        .arg(out)
        .arg("--store")
        .arg(store.path());
    for (pool, url) in endpoints {
        cmd.arg("--endpoint").arg(format!("{pool}={url}"));
    }
    cmd.args(extra);
    let t = Instant::now();
    let o = cmd.output().expect("lexrun");
    let took = t.elapsed();
    assert!(
        o.status.code() == Some(0),
        "lexrun failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .max()
        .unwrap();
    let rec: Value = serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    (took, rec)
}

/// A `returns` list of the plan as JSON schema (as `lexrun::run::schema` builds it).
fn record_schema(fields: &Value) -> Value {
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    for f in fields.as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        props.insert(name.into(), type_schema(&f["type"]));
        required.push(json!(name));
    }
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn type_schema(t: &Value) -> Value {
    match t["is"].as_str().unwrap() {
        "bool" => json!({"type": "boolean"}),
        "text" => json!({"type": "string"}),
        "number" => json!({"type": "number"}),
        "date" => json!({"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}),
        "list" => json!({"type": "array", "items": type_schema(&t["of"])}),
        _ => record_schema(&t["fields"]),
    }
}

fn overhead(bin: &Path) {
    let llama = servers::start_llama(&["-np", "1", "-c", "32768"]);
    let ollama = Fake::start(Speaks::Ollama, Duration::ZERO, |_| Answer {
        text: r#"{"amounts": [], "total": 0}"#.into(),
        fault: None,
    });
    let mut endpoints: Vec<(String, String)> = ["board_a", "board_b", "pair_01", "pair_23"]
        .iter()
        .map(|p| (p.to_string(), llama.url.clone()))
        .collect();
    endpoints.push(("rtx".into(), ollama.url.clone()));
    let plan: Value = serde_json::from_slice(
        &Command::new(bin)
            .args(["plan", "workflows/affidavit.lex", "--format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    // Each round: lexrun runs the workflow, then the plain loop sends exactly the requests
    // that run sent (its rendered prompts, sampling and schemas), one after another.
    let (mut engine, mut plain, mut ratios, mut calls) = (Vec::new(), Vec::new(), Vec::new(), 0);
    let out = tempfile::tempdir().unwrap();
    let (_, first) = run_lexrun(bin, "workflows/affidavit.lex", out.path(), &endpoints, &[]);
    let mut requests = requests_of(&first, &plan, &llama.url, &ollama.url);
    // (wall seconds, seconds the llama.cpp server spent on the prompts and answers)
    let plain_loop = |requests: &[(String, &str, Value)]| {
        let t = Instant::now();
        let mut server = 0.0;
        for (url, path, body) in requests {
            let r = post(url, path, body);
            assert!(r.starts_with("HTTP/1.1 200"), "{}", &r[..r.len().min(200)]);
            server += server_seconds(&r);
        }
        (t.elapsed().as_secs_f64(), server)
    };
    let mut normalised = Vec::new();
    for i in 0..RUNS {
        // Alternate which goes first, so neither always meets the other's cache.
        let mut p = (0.0, 0.0);
        if i % 2 == 1 {
            p = plain_loop(&requests);
        }
        let out = tempfile::tempdir().unwrap();
        let (took, rec) = run_lexrun(bin, "workflows/affidavit.lex", out.path(), &endpoints, &[]);
        requests = requests_of(&rec, &plan, &llama.url, &ollama.url);
        calls = requests.len();
        if i % 2 == 0 {
            p = plain_loop(&requests);
        }
        let took = took.as_secs_f64();
        let engine_server: f64 = rec["matters"][0]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["pool"] != "rtx")
            .map(|s| {
                let t = &s["timings"];
                (t["prompt_ms"].as_f64().unwrap_or(0.0) + t["predicted_ms"].as_f64().unwrap_or(0.0))
                    / 1000.0
            })
            .sum();
        engine.push(took);
        plain.push(p.0);
        ratios.push(took / p.0);
        // Wall time per second of the server's own work: the model's output length varies
        // from run to run (cached prefixes change the arithmetic), this does not.
        normalised.push((took / engine_server) / (p.0 / p.1));
    }
    println!(
        "engine overhead: lexrun {:.1} ms vs plain HTTP loop {:.1} ms (medians); median ratio {:.3}×, per second of server work {:.3}× (target ≤ 1.05); {calls} calls per run, {RUNS} runs",
        median(engine) * 1000.0,
        median(plain) * 1000.0,
        median(ratios),
        median(normalised),
    );
}

/// Seconds the server reports for a streamed answer (`timings` in its last events).
fn server_seconds(response: &str) -> f64 {
    response
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            let t = &v["timings"];
            Some((t["prompt_ms"].as_f64()? + t["predicted_ms"].as_f64()?) / 1000.0)
        })
        .next()
        .unwrap_or(0.0)
}

/// The requests a run sent, rebuilt from its record and the plan.
fn requests_of(
    rec: &Value,
    plan: &Value,
    llama: &str,
    ollama: &str,
) -> Vec<(String, &'static str, Value)> {
    let mut requests = Vec::new();
    for s in rec["matters"][0]["steps"].as_array().unwrap() {
        if s["kind"] != "model" {
            continue;
        }
        let name = s["name"].as_str().unwrap();
        let node = plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap();
        let prompt = std::fs::read_to_string(s["outputs"][0].as_str().unwrap()).unwrap();
        let rtx = s["pool"] == "rtx";
        let mut body = json!({"messages": [{"role": "user", "content": prompt}], "stream": true, "cache_prompt": true});
        for (k, v) in node["sampling"].as_object().unwrap() {
            body[k] = v.clone();
        }
        if node["returns"].is_array() {
            // The same schema lexrun sends, from the plan's `returns`.
            let sch = record_schema(&node["returns"]);
            if rtx {
                body["format"] = sch;
            } else {
                body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": "answer", "strict": true, "schema": sch}});
            }
        }
        let (url, path) = if rtx {
            (ollama, "/api/chat")
        } else {
            (llama, "/v1/chat/completions")
        };
        requests.push((url.to_string(), path, body));
    }
    requests
}

fn cache_reuse(bin: &Path) {
    let a = servers::start_llama(&["-np", "1", "-c", "32768"]);
    let b = servers::start_llama(&["-np", "1", "-c", "32768"]);
    let ollama = Fake::start(Speaks::Ollama, Duration::ZERO, |_| Answer {
        text: r#"{"amounts": [], "total": 0}"#.into(),
        fault: None,
    });
    let endpoints = vec![
        ("gpu_a".to_string(), a.url.clone()),
        ("gpu_b".to_string(), b.url.clone()),
        ("rtx".to_string(), ollama.url.clone()),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (_, rec) = run_lexrun(
        bin,
        "tests/runtime/pipeline.lex",
        dir.path(),
        &endpoints,
        &[],
    );
    let run = dir.path().join(rec["run_id"].as_str().unwrap());
    // The packet's own token count, by the server's tokenizer.
    let prompt = std::fs::read_to_string(run.join("review/prompt.md")).unwrap();
    let packet_end = prompt.find("You are opposing counsel").unwrap();
    let packet = &prompt[..packet_end];
    let r = post(
        &a.url,
        "/tokenize",
        &json!({"content": packet, "add_special": true}),
    );
    let body = r.split_once("\r\n\r\n").unwrap().1;
    let n = serde_json::from_str::<Value>(body).unwrap()["tokens"]
        .as_array()
        .unwrap()
        .len();
    let review = rec["matters"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "review")
        .unwrap();
    let cache_n = review["timings"]["cache_n"].as_u64().unwrap();
    println!(
        "prompt cache: second stage on the gatekeeper (`review`) took {cache_n} of the packet's {n} tokens from cache = {:.1}% (target ≥ 90%)",
        cache_n as f64 * 100.0 / n as f64
    );
}

fn pipelining(bin: &Path) {
    const MATTERS: usize = 8;
    // (tokens per answer, ms per token) per pool: pool 1 is the bottleneck.
    let shape = [(5usize, 5u64), (20, 30), (5, 5), (5, 5)];
    let servers: Vec<Fake> = shape
        .iter()
        .map(|&(n, ms)| {
            let text = vec!["word"; n].join(" ");
            Fake::start(Speaks::Llama, Duration::from_millis(ms), move |_: &Seen| {
                Answer {
                    text: text.clone(),
                    fault: None,
                }
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut lex = String::from("workflow chain \"Four stages on four pools\"\n\n");
    for p in 0..4 {
        let _ = writeln!(
            lex,
            "pool p{p} {{\n  host \"bench\"\n  gpus {p}\n  vram 32 GiB\n  serve llama_cpp at \"http://127.0.0.1:9\"\n}}\n\nmodel m{p} on p{p} {{\n  gguf \"m{p}.gguf\"\n  weights 1 GiB\n  layers 2  kv_heads 4  head_dim 16\n  ctx 8k\n  temperature 0\n}}\n"
        );
    }
    lex.push_str("sources client {\n  files \"*.txt\"\n}\n\n");
    for s in 0..4 {
        let after = if s == 0 {
            String::new()
        } else {
            format!(" after s{}", s - 1)
        };
        let reads = if s == 0 {
            "client".to_string()
        } else {
            format!("client, s{}", s - 1)
        };
        let _ = writeln!(
            lex,
            "stage s{s}{after} {{\n  model m{s}\n  prompt \"{{{{evidence}}}} Stage {s} of {{{{matter.name}}}}.\"\n  reads {reads}\n}}\n"
        );
    }
    let file = dir.path().join("chain.lex");
    std::fs::write(&file, lex).unwrap();
    let mut matters = Vec::new();
    for m in 0..MATTERS {
        let d = dir.path().join(format!("matter-{m}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("note.txt"), format!("Matter {m}: a short note.\n")).unwrap();
        matters.push(d);
    }
    let endpoints: Vec<(String, String)> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("p{i}"), s.url.clone()))
        .collect();
    let mut extra: Vec<String> = Vec::new();
    for m in &matters {
        extra.push("--matter".into());
        extra.push(m.display().to_string());
    }
    let refs: Vec<&str> = extra.iter().map(String::as_str).collect();
    let out = dir.path().join("out");
    let (_, _) = run_lexrun(bin, file.to_str().unwrap(), &out, &endpoints, &refs);
    // Makespan and busy time from the servers' own clocks.
    let all: Vec<Vec<Seen>> = servers.iter().map(|s| s.requests()).collect();
    let first = all.iter().flatten().map(|s| s.at).min().unwrap();
    let last = all.iter().flatten().map(|s| s.done.unwrap()).max().unwrap();
    let makespan = last.duration_since(first).as_secs_f64();
    let busy: Vec<f64> = all
        .iter()
        .map(|r| {
            r.iter()
                .map(|s| s.done.unwrap().duration_since(s.at).as_secs_f64())
                .sum()
        })
        .collect();
    let bottleneck = busy.iter().cloned().fold(0.0, f64::max);
    let per_matter: f64 = busy.iter().sum::<f64>() / MATTERS as f64;
    println!(
        "pipelining: {MATTERS} matters × 4 pools: makespan {:.0} ms vs bottleneck pool busy {:.0} ms = {:.3}× (target ≤ 1.05); one matter at a time would take ≈ {:.0} ms",
        makespan * 1000.0,
        bottleneck * 1000.0,
        makespan / bottleneck,
        per_matter * MATTERS as f64 * 1000.0
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(root).unwrap();
    let bin = lexrun_bin();
    overhead(&bin);
    cache_reuse(&bin);
    pipelining(&bin);
}
