//! `lexrun up`, `down`, `status` and `bench`: the exact command lines for the reference
//! cluster, and the whole cycle against the real llama.cpp server with the tiny model, with
//! the faults a user meets (port in use, missing binary or GGUF, a server that dies while
//! loading, a stale PID record).

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use support::servers::{self, Fake, Speaks};
use support::{stderr as err, Lexrun};

fn lexrun(args: &[&str], env: &[(&str, &str)]) -> Output {
    env.iter()
        .fold(Lexrun::new().args(args), |l, (k, v)| l.env(k, v))
        .output()
}

#[test]
fn dry_run_shows_each_server_pinned_to_its_board() {
    let o = Lexrun::new()
        .args(["up", "workflows/affidavit.lex", "--dry-run"])
        .env_remove("LEXRUN_LLAMA_SERVER")
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("CUDA_VISIBLE_DEVICES=4,5,8,9 llama-server"));
    assert!(text.contains("--tensor-split 2,1"));
    insta::assert_snapshot!("up-dry-run-affidavit", text);
}

/// A workflow of one tiny model on a free port, in a temporary folder.
struct Tiny {
    dir: tempfile::TempDir,
    file: PathBuf,
    port: u16,
}

fn tiny(min_decode: &str, gguf: &Path) -> Tiny {
    tiny_on(min_decode, gguf, servers::free_port())
}

fn tiny_on(min_decode: &str, gguf: &Path, port: u16) -> Tiny {
    let dir = tempfile::tempdir().unwrap();
    let lex = format!(
        "workflow tiny \"One tiny model\"\n\n\
         pool cpu {{\n  host \"localhost\"\n  gpus 0\n  vram 8 GiB\n  serve llama_cpp at \"http://127.0.0.1:{port}\"\n}}\n\n\
         model tiny on cpu {{\n  gguf \"{}\"\n  ctx 4k\n  temperature 0\n  min_decode {min_decode} tok/s\n}}\n\n\
         sources notes {{\n  files \"*.txt\"\n}}\n\n\
         stage answer {{\n  model tiny\n  prompt \"{{{{evidence}}}} Answer.\"\n  reads notes\n}}\n",
        gguf.display()
    );
    let file = dir.path().join("tiny.lex");
    fs::write(&file, lex).unwrap();
    Tiny { dir, file, port }
}

fn server_bin() -> String {
    let _ = servers::llama(); // builds or finds it, and the tiny model
    std::env::var("LEXRUN_LLAMA_SERVER").unwrap_or_else(|_| {
        let o = Command::new("scripts/llama-server").output().unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    })
}

fn tiny_model() -> PathBuf {
    servers::llama().model.clone()
}

fn alive(pid: u64) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
        .unwrap_or(false)
}

#[test]
fn up_status_bench_down_against_the_real_server() {
    let bin = server_bin();
    let t = tiny("1", &tiny_model());
    let f = t.file.to_str().unwrap();
    let env = [("LEXRUN_LLAMA_SERVER", bin.as_str())];

    let o = lexrun(&["up", f], &env);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("ready"), "{}", err(&o));
    let rec: Value =
        serde_json::from_slice(&fs::read(t.dir.path().join(".lexrun/servers/tiny.json")).unwrap())
            .unwrap();
    let pid = rec["pid"].as_u64().unwrap();
    assert!(alive(pid));
    assert!(t.dir.path().join(".lexrun/servers/tiny.log").is_file());

    // Up again: it says so, and starts nothing.
    let o = lexrun(&["up", f], &env);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("already served by process"), "{}", err(&o));

    let o = lexrun(&["status", f, "--json"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let st: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(st[0]["state"], "up", "{st:#}");
    assert!(st[0]["served"].as_str().unwrap().contains("tiny-llama"));
    assert_eq!(st[0]["ctx"], 4096);

    let o = lexrun(&["bench", f, "--runs", "2", "--json", "--enforce"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let b: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(b[0]["decode_per_second"].as_f64().unwrap() > 0.0, "{b:#}");
    assert!(b[0]["prompt_per_second"].as_f64().unwrap() > 0.0, "{b:#}");
    assert!(b[0]["prompt_tokens"].as_u64().unwrap() > 100);
    // status now shows the measured speed.
    let o = lexrun(&["status", f], &env);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(" t/s"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // A floor no CPU reaches: --enforce fails.
    let fast = fs::read_to_string(&t.file)
        .unwrap()
        .replace("min_decode 1 tok/s", "min_decode 1000000 tok/s");
    let fast_file = t.dir.path().join("fast.lex");
    fs::write(&fast_file, fast).unwrap();
    let o = lexrun(
        &[
            "bench",
            fast_file.to_str().unwrap(),
            "--runs",
            "1",
            "--enforce",
        ],
        &env,
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("UNDER min_decode"));

    let o = lexrun(&["down", f], &env);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("stopped"), "{}", err(&o));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(pid), "the server is gone");
    assert!(!t.dir.path().join(".lexrun/servers/tiny.json").exists());
    let o = lexrun(&["status", f, "--json"], &env);
    let st: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(st[0]["state"], "down");
}

#[test]
fn faults_at_startup_are_clear() {
    let bin = server_bin();
    let model = tiny_model();

    // Port in use: held from the start, so no other test can take it in between.
    let _held = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let t = tiny_on("1", &model, _held.local_addr().unwrap().port());
    let o = lexrun(
        &["up", t.file.to_str().unwrap()],
        &[("LEXRUN_LLAMA_SERVER", &bin)],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains(&format!("port {} on 127.0.0.1 is already in use", t.port)),
        "{}",
        err(&o)
    );

    // No binary.
    let t = tiny("1", &model);
    let o = lexrun(
        &["up", t.file.to_str().unwrap()],
        &[("LEXRUN_LLAMA_SERVER", "/nonexistent/llama-server")],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("does not exist") && err(&o).contains("scripts/llama-server"),
        "{}",
        err(&o)
    );

    // No GGUF: checked before anything starts (the checker warns, `up` refuses).
    let t = tiny("1", Path::new("/nonexistent/model.gguf"));
    fs::write(
        &t.file,
        fs::read_to_string(&t.file).unwrap().replace(
            "ctx 4k",
            "weights 1 GiB\n  layers 2  kv_heads 4  head_dim 16\n  ctx 4k",
        ),
    )
    .unwrap();
    let o = lexrun(
        &["up", t.file.to_str().unwrap()],
        &[("LEXRUN_LLAMA_SERVER", &bin)],
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(
        err(&o).contains("the GGUF file `/nonexistent/model.gguf` does not exist"),
        "{}",
        err(&o)
    );

    // A server that dies while loading: its log's tail is shown.
    let broken = tempfile::tempdir().unwrap();
    let bytes = fs::read(&model).unwrap();
    let cut = broken.path().join("cut.gguf");
    fs::write(&cut, &bytes[..bytes.len() - 200_000]).unwrap();
    let t = tiny("1", &cut);
    let o = lexrun(
        &["up", t.file.to_str().unwrap()],
        &[("LEXRUN_LLAMA_SERVER", &bin)],
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("exited while loading") && err(&o).contains("tiny.log"),
        "{}",
        err(&o)
    );
    let o = lexrun(&["down", t.file.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(err(&o).contains("not signalled"), "{}", err(&o));
}

#[test]
fn a_stale_record_never_signals_another_process() {
    let t = tiny("1", &tiny_model());
    let mut other = Command::new("sleep").arg("30").spawn().unwrap();
    let dir = t.dir.path().join(".lexrun/servers");
    fs::create_dir_all(&dir).unwrap();
    // The PID of a live process that lexrun did not start.
    let rec = serde_json::json!({
        "model": "tiny", "pool": "cpu", "url": "http://127.0.0.1:1", "pid": other.id(),
        "start_ticks": 1, "program": "/usr/bin/llama-server", "args": ["-m", "x.gguf"],
        "log": dir.join("tiny.log"),
    });
    fs::write(dir.join("tiny.json"), rec.to_string()).unwrap();
    let o = lexrun(&["down", t.file.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("not signalled"), "{}", err(&o));
    assert!(
        other.try_wait().unwrap().is_none(),
        "the other process is untouched"
    );
    assert!(!dir.join("tiny.json").exists());
    other.kill().unwrap();
    let _ = other.wait();
}

#[test]
fn ollama_models_are_checked_and_preloaded() {
    let ollama = Fake::start(Speaks::Ollama, Duration::ZERO, |_| Default::default());
    let store = tempfile::tempdir().unwrap();
    let o = lexrun(
        &[
            "up",
            "workflows/affidavit.lex",
            "--only",
            "extractor",
            "--endpoint",
            &format!("rtx={}", ollama.url),
            "--store",
            store.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let r = ollama.requests();
    let load = r
        .iter()
        .find(|s| s.path == "/api/generate")
        .expect("a preload request");
    assert_eq!(load.body["model"], "gemma4:26b");
    assert_eq!(load.body["keep_alive"], -1);
    assert_eq!(load.body["options"]["num_ctx"], 32768);
    // A model the server does not have.
    let t = fs::read_to_string("workflows/lib/cluster.lex").unwrap();
    assert!(t.contains("gemma4:26b"));
    let o = lexrun(
        &[
            "status",
            "workflows/affidavit.lex",
            "--json",
            "--endpoint",
            &format!("rtx={}", ollama.url),
        ],
        &[],
    );
    let st: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ex = st
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["model"] == "extractor")
        .unwrap();
    assert_eq!(ex["state"], "up", "{ex:#}");
    let dead = st
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["model"] == "drafter")
        .unwrap();
    assert_eq!(dead["state"], "down");
}
