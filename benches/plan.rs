//! `check` + `plan --format json` on a generated workflow of 1,000 stages, 200 models,
//! 100 pools and 50 verify blocks. Targets: under 50 ms wall and 50 MB peak memory.
//!
//! Run: `cargo bench --bench plan`. It times the release binary end to end (process start,
//! read, parse, check, lower, JSON to stdout) and reports medians as ratios to the targets.

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const POOLS: usize = 100;
const MODELS: usize = 200;
const STAGES: usize = 1000;
const VERIFY: usize = 50;
const RUNS: usize = 30;

fn generate() -> String {
    let mut s = String::from("workflow big \"A generated workflow for the benchmark\"\nuse std.prompts\nuse std.verify\n\n");
    for p in 0..POOLS {
        let host = p / 3;
        let gpus = (p % 3) * 4;
        let _ = writeln!(
            s,
            "pool pool_{p} {{\n  host \"host-{host}\"\n  gpus {}, {}, {}, {}\n  link nvlink\n  vram 4 x 32 GiB\n  compute 7.0\n  serve llama_cpp at \"http://10.0.{host}.1:{}\"\n  slots 2\n}}\n",
            gpus,
            gpus + 1,
            gpus + 2,
            gpus + 3,
            8000 + p
        );
    }
    for m in 0..MODELS {
        let _ = writeln!(
            s,
            "model model_{m} on pool_{} {{\n  gguf \"models/model-{m}.gguf\"\n  weights 30 GiB\n  layers 48  kv_heads 4  head_dim 128\n  ctx 32k  kv q8_0  flash_attn on\n  temperature 0.2  top_p 0.9\n  min_decode 40 tok/s\n}}\n",
            m / 2
        );
    }
    for src in 0..10 {
        let _ = writeln!(s, "sources src_{src} {{\n  files \"intake/{src}/**/*.pdf\", \"intake/{src}/**/*.txt\"\n  bates \"M{src}X\" width 6\n}}\n");
    }
    for i in 0..STAGES {
        let model = i % MODELS;
        let src = i % 10;
        if i % 10 == 0 {
            // A gate: its answer routes later stages.
            let after = if i == 0 {
                String::new()
            } else {
                format!(" after stage_{}", i - 1)
            };
            let _ = writeln!(
                s,
                "stage stage_{i}{after} {{\n  model model_{model}\n  prompt std.prompts.gate\n  reads src_{src}\n  returns {{ grounds: bool, reason: text, needs_figures: bool }}\n  stop when not grounds\n}}\n"
            );
        } else {
            let gate = i - i % 10;
            let when = if i % 10 == 5 {
                format!(" when stage_{gate}.needs_figures")
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "stage stage_{i} after stage_{}{when} {{\n  model model_{model}\n  reads src_{src}, stage_{}\n  prompt \"\"\"\n    {{{{evidence}}}}\n    Continue the work of stage_{} for {{{{matter.name}}}}:\n    {{{{stage_{}}}}}\n  \"\"\"\n  temperature 0.1\n  timeout 10m\n}}\n",
                i - 1,
                i - 1,
                i - 1,
                i - 1
            );
        }
    }
    for v in 0..VERIFY {
        let stage = v * 20 + 1;
        let _ = writeln!(s, "verify stage_{stage} against src_{} {{\n  rules std.verify.strict\n  amounts must appear or flag\n}}\n", stage % 10);
    }
    for o in 0..20 {
        let _ = writeln!(s, "output \"out-{o}.md\" from stage_{}", o * 50 + 9);
    }
    s
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.lex");
    let text = generate();
    std::fs::write(&path, &text).expect("write workflow");
    let exe = env!("CARGO_BIN_EXE_lexrun");

    // In-process: the library alone, without process start-up.
    let utf8 = camino::Utf8Path::from_path(&path).expect("utf-8 temp path");
    let mut lib_times = Vec::new();
    let mut json_len = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let checked = lexrun::check::check_path(utf8);
        let w = checked.workflow.unwrap_or_else(|| {
            panic!(
                "{}",
                lexrun::diagnostic::render(&checked.diagnostics, &checked.sources, false)
            )
        });
        json_len = lexrun::plan::lower(&w).to_json().len();
        lib_times.push(t.elapsed());
    }

    // End to end: the release binary as a user runs it.
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let status = Command::new(exe)
            .args(["plan", "--format", "json"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("lexrun runs");
        times.push(t.elapsed());
        assert!(
            status.success(),
            "lexrun plan failed on the generated workflow"
        );
    }
    let peak_kib = {
        // Largest resident set of any child waited for so far: every child ran the same plan.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
        usage.ru_maxrss as f64
    };
    let wall = median(&mut times);
    let lib = median(&mut lib_times);
    let peak_mb = peak_kib * 1024.0 / 1e6;
    println!("workflow: {STAGES} stages, {MODELS} models, {POOLS} pools, {VERIFY} verify blocks; {} KiB of .lex, {} KiB of plan JSON", text.len() / 1024, json_len / 1024);
    println!("lexrun plan --format json (end to end, median of {RUNS}): {:.1} ms  = {:.2} × the 50 ms target", wall.as_secs_f64() * 1e3, wall.as_secs_f64() * 1e3 / 50.0);
    println!("check + lower + JSON in process (median of {RUNS}):        {:.1} ms  = {:.2} × the 50 ms target", lib.as_secs_f64() * 1e3, lib.as_secs_f64() * 1e3 / 50.0);
    println!("peak resident memory of lexrun:                            {peak_mb:.1} MB  = {:.2} × the 50 MB target", peak_mb / 50.0);
}
