//! What a run shows while it works: a live line per active stage on a terminal (pool, model,
//! tokens, tok/s, elapsed), plain lines otherwise, or a JSON event per line with `--json`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Live lines on a terminal.
    Live,
    /// One line per event, for logs and pipes.
    Plain,
    /// One JSON object per line on stdout.
    Json,
    Quiet,
}

pub struct Events {
    mode: Mode,
    multi: Option<MultiProgress>,
    bars: Mutex<BTreeMap<String, ProgressBar>>,
    started: Instant,
}

impl Events {
    pub fn new(mode: Mode) -> Arc<Events> {
        let multi = (mode == Mode::Live)
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8)));
        Arc::new(Events {
            mode,
            multi,
            bars: Mutex::new(BTreeMap::new()),
            started: Instant::now(),
        })
    }

    fn emit(&self, event: &str, mut v: Value) {
        if self.mode != Mode::Json {
            return;
        }
        v["event"] = json!(event);
        v["t_ms"] = json!(self.started.elapsed().as_millis() as u64);
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{v}");
    }

    /// A line for people (plain and live modes).
    pub fn say(&self, line: &str) {
        match self.mode {
            Mode::Plain => eprintln!("{line}"),
            Mode::Live => match &self.multi {
                Some(m) => {
                    let _ = m.println(line);
                }
                None => eprintln!("{line}"),
            },
            _ => {}
        }
    }

    pub fn stage_started(&self, key: &str, pool: &str, model: &str, round: u32) {
        self.emit(
            "stage_started",
            json!({"stage": key, "pool": pool, "model": model, "round": round}),
        );
        match self.mode {
            Mode::Plain => eprintln!("  start   {key} on {pool} ({model}){}", round_note(round)),
            Mode::Live => {
                if let Some(m) = &self.multi {
                    let bar = m.add(ProgressBar::new_spinner());
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {prefix:<24} {msg} {elapsed}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.set_prefix(key.to_string());
                    bar.set_message(format!("{pool} · {model}{}", round_note(round)));
                    bar.enable_steady_tick(Duration::from_millis(120));
                    if let Ok(mut bars) = self.bars.lock() {
                        bars.insert(key.to_string(), bar);
                    }
                }
            }
            _ => {}
        }
    }

    pub fn tokens(&self, key: &str, pool: &str, model: &str, n: u64, since: Instant) {
        if self.mode == Mode::Live {
            if let Ok(bars) = self.bars.lock() {
                if let Some(bar) = bars.get(key) {
                    let s = since.elapsed().as_secs_f64();
                    let rate = if s > 0.0 { n as f64 / s } else { 0.0 };
                    bar.set_message(format!("{pool} · {model} · {n} tokens · {rate:.1} tok/s"));
                }
            }
        }
    }

    pub fn stage_finished(&self, key: &str, status: &str, line: &str, detail: Value) {
        let mut v = detail;
        v["stage"] = json!(key);
        v["status"] = json!(status);
        self.emit("stage_finished", v);
        let text = format!("  {status:<8}{key}: {line}");
        match self.mode {
            Mode::Plain => eprintln!("{text}"),
            Mode::Live => {
                let bar = self.bars.lock().ok().and_then(|mut b| b.remove(key));
                if let Some(bar) = bar {
                    bar.finish_and_clear();
                    if let Some(m) = &self.multi {
                        m.remove(&bar);
                    }
                }
                self.say(&text);
            }
            _ => {}
        }
    }

    pub fn note(&self, key: &str, text: &str) {
        self.emit("note", json!({"stage": key, "text": text}));
        self.say(&format!("          {key}: {text}"));
    }

    pub fn warn(&self, key: &str, text: &str) {
        self.emit("warning", json!({"stage": key, "text": text}));
        self.say(&format!("  warning {key}: {text}"));
    }

    pub fn run_finished(&self, v: Value) {
        self.emit("run_finished", v);
    }
}

fn round_note(round: u32) -> String {
    if round > 1 {
        format!(", round {round}")
    } else {
        String::new()
    }
}
