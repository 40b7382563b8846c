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
    /// Warnings already shown (the same server fact is said once per run).
    said: Mutex<std::collections::BTreeSet<String>>,
    /// Plain mode: the stages under way, for the progress line every [`PROGRESS_EVERY`].
    active: Mutex<BTreeMap<String, Active>>,
    /// A program following the run besides the terminal (the MCP server), if any.
    watch: Option<Watch>,
}

/// What a watching program is handed for each event: its name and its JSON.
pub type OnEvent = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// A program following a run: it is handed every event as JSON (whatever the mode), and the
/// run stops when `stop` is cancelled, keeping every finished step, as on Ctrl-C.
#[derive(Clone)]
pub struct Watch {
    pub event: OnEvent,
    pub stop: tokio_util::sync::CancellationToken,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watch")
    }
}

/// Plain output says how a long stage is doing at least this often.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(10);

struct Active {
    pool: String,
    model: String,
    since: Instant,
    tokens: u64,
    /// When this stage's last line was printed.
    last: Instant,
}

impl Events {
    pub fn new(mode: Mode) -> Arc<Events> {
        Events::watched(mode, None)
    }

    /// Events shown in `mode` and handed to `watch`.
    pub fn watched(mode: Mode, watch: Option<Watch>) -> Arc<Events> {
        let multi = (mode == Mode::Live)
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8)));
        let events = Arc::new(Events {
            mode,
            multi,
            bars: Mutex::new(BTreeMap::new()),
            started: Instant::now(),
            said: Mutex::new(Default::default()),
            active: Mutex::new(BTreeMap::new()),
            watch,
        });
        if mode == Mode::Plain {
            // Ends with the run: it holds the events only weakly.
            let weak = Arc::downgrade(&events);
            std::thread::spawn(move || loop {
                std::thread::sleep(Duration::from_millis(500));
                let Some(ev) = weak.upgrade() else { return };
                ev.progress_lines();
            });
        }
        events
    }

    /// Plain mode: a line for every stage that has been quiet for [`PROGRESS_EVERY`].
    fn progress_lines(&self) {
        let Ok(mut active) = self.active.lock() else {
            return;
        };
        for (key, a) in active.iter_mut() {
            if a.last.elapsed() >= PROGRESS_EVERY {
                a.last = Instant::now();
                let s = a.since.elapsed().as_secs_f64();
                let rate = if a.tokens > 0 && s > 0.0 {
                    format!(", {:.1} tok/s", a.tokens as f64 / s)
                } else {
                    String::new()
                };
                eprintln!(
                    "  working {key} on {} ({}): {} tokens{rate}, {s:.0} s",
                    a.pool, a.model, a.tokens
                );
            }
        }
    }

    /// Resolves when the program watching the run asks it to stop; never without one.
    pub async fn stopped(&self) {
        match &self.watch {
            Some(w) => w.stop.cancelled().await,
            None => std::future::pending().await,
        }
    }

    fn emit(&self, event: &str, mut v: Value) {
        if let Some(w) = &self.watch {
            (w.event)(event, &v);
        }
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
            Mode::Plain => {
                eprintln!("  start   {key} on {pool} ({model}){}", round_note(round));
                if let Ok(mut a) = self.active.lock() {
                    a.insert(
                        key.to_string(),
                        Active {
                            pool: pool.to_string(),
                            model: model.to_string(),
                            since: Instant::now(),
                            tokens: 0,
                            last: Instant::now(),
                        },
                    );
                }
            }
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
        if self.mode == Mode::Plain {
            if let Some(a) = self
                .active
                .lock()
                .ok()
                .as_mut()
                .and_then(|a| a.get_mut(key))
            {
                a.tokens = n;
            }
        }
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
        // A status as long as its column (`incomplete`) still has a space after it.
        let gap = if status.chars().count() >= 8 { " " } else { "" };
        let text = format!("  {status:<8}{gap}{key}: {line}");
        if let Ok(mut a) = self.active.lock() {
            a.remove(key);
        }
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

    /// A warning about a fact of the servers, said once per run however many stages meet it.
    pub fn warn_once(&self, key: &str, text: &str) {
        let first = self
            .said
            .lock()
            .map(|mut s| s.insert(text.to_string()))
            .unwrap_or(true);
        if first {
            self.warn(key, text);
        }
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
