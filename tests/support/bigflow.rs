//! The generated workflow the benchmarks time: 1,000 stages, 200 models, 100 pools and 50
//! verify blocks, with gates, routing and inline prompts, as a large firm's file might be.

use std::fmt::Write as _;

pub const POOLS: usize = 100;
pub const MODELS: usize = 200;
pub const STAGES: usize = 1000;
pub const VERIFY: usize = 50;

/// The text of the workflow; it checks without errors.
pub fn generate() -> String {
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
