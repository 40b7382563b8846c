//! Headless Chromium driven through the DevTools protocol over a pipe
//! (`--remote-debugging-pipe`: the browser reads commands on fd 3 and writes answers on fd 4,
//! each a JSON message ended by a NUL byte). No port, no HTTP, no extra crate: a few
//! commands (`Target`, `Page`, `Runtime`, `Input`, `Emulation`) are all the tests need.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The browser program: `LEXRUN_CHROMIUM`, else `chromium` (Debian's package) on PATH.
pub fn chromium() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("LEXRUN_CHROMIUM") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "LEXRUN_CHROMIUM is {}, which does not exist",
                p.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err("chromium is not installed (scripts/install-tools installs Debian's `chromium`)".into())
}

pub struct Browser {
    child: Child,
    to: std::fs::File,
    from: Receiver<Value>,
    next: u64,
    session: String,
    _profile: tempfile::TempDir,
}

fn pipe() -> (RawFd, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors; both are owned by this process from here on.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(r, 0, "pipe2 failed");
    (fds[0], fds[1])
}

impl Browser {
    /// Starts a headless browser with one page of the given size, or says why it cannot.
    pub fn launch(width: u32, height: u32) -> Result<Browser, String> {
        let exe = chromium()?;
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (child_reads, we_write) = pipe();
        let (we_read, child_writes) = pipe();
        let mut cmd = Command::new(&exe);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--mute-audio",
            "--font-render-hinting=none",
            "--remote-debugging-pipe",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={width},{height}"))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // Moved out of the way first, so that neither lands on the other's number.
                let r = libc::fcntl(child_reads, libc::F_DUPFD_CLOEXEC, 10);
                let w = libc::fcntl(child_writes, libc::F_DUPFD_CLOEXEC, 10);
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        // SAFETY: the descriptors came from pipe2 above and are closed exactly once here.
        unsafe {
            libc::close(child_reads);
            libc::close(child_writes);
        }
        // SAFETY: these two descriptors are ours alone; the Files own them from here on.
        let to = unsafe { std::fs::File::from_raw_fd(we_write) };
        let reader = unsafe { std::fs::File::from_raw_fd(we_read) };
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(reader);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        let mut b = Browser {
            child,
            to,
            from: rx,
            next: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = b.send(None, "Target.createTarget", json!({"url": "about:blank"}))?;
        let id = target["targetId"].as_str().unwrap_or_default().to_string();
        let att = b.send(
            None,
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
        )?;
        b.session = att["sessionId"].as_str().unwrap_or_default().to_string();
        b.call("Page.enable", json!({}))?;
        b.call("Runtime.enable", json!({}))?;
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )?;
        Ok(b)
    }

    fn send(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .map_err(|e| format!("{method}: the browser is gone: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .from
                .recv_timeout(left)
                .map_err(|_| format!("{method}: no answer from the browser"))?;
            if v["id"].as_u64() == Some(id) {
                if let Some(e) = v.get("error") {
                    return Err(format!("{method}: {e}"));
                }
                return Ok(v["result"].clone());
            }
        }
    }

    /// A command to the page.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let s = self.session.clone();
        self.send(Some(&s), method, params)
    }

    /// Evaluates an expression in the page; its value (promises awaited).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            )
            .unwrap();
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Opens a file and waits until `ready` (an expression) holds; the time that took.
    pub fn open(&mut self, file: &Path, ready: &str) -> Duration {
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.navigate(&url, ready)
    }

    /// Waits until `ready` (an expression) holds in the page, for up to a minute.
    pub fn wait_for(&mut self, ready: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            // A page being replaced answers with an error for a moment.
            let r = self.call(
                "Runtime.evaluate",
                json!({"expression": ready, "returnByValue": true}),
            );
            if r.is_ok_and(|r| r["result"]["value"] == json!(true)) {
                return;
            }
            assert!(Instant::now() < deadline, "never became true: {ready}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Opens a URL and waits until `ready` (an expression) holds; the time that took.
    pub fn navigate(&mut self, url: &str, ready: &str) -> Duration {
        let t = Instant::now();
        self.call("Page.navigate", json!({"url": url})).unwrap();
        let deadline = t + Duration::from_secs(60);
        loop {
            let r = self
                .call(
                    "Runtime.evaluate",
                    json!({"expression": ready, "returnByValue": true}),
                )
                .unwrap();
            if r["result"]["value"] == json!(true) {
                return t.elapsed();
            }
            assert!(Instant::now() < deadline, "the page never became ready");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Clicks the middle of the first element matching a selector, as a mouse would.
    pub fn click(&mut self, selector: &str) {
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getClientRects()[0]; \
             return [r.left + Math.min(r.width / 2, 4), r.top + r.height / 2]; }})()",
            serde_json::to_string(selector).unwrap()
        ));
        let (x, y) = (
            at[0]
                .as_f64()
                .unwrap_or_else(|| panic!("nothing matches {selector}")),
            at[1].as_f64().unwrap(),
        );
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .unwrap();
        }
    }

    /// Presses a key with a character (`n`, `p`, …).
    pub fn key(&mut self, key: &str) {
        let code = key.to_ascii_uppercase().chars().next().unwrap() as u32;
        for kind in ["keyDown", "keyUp"] {
            let mut p = json!({"type": kind, "key": key, "windowsVirtualKeyCode": code});
            if kind == "keyDown" {
                p["text"] = json!(key);
            }
            self.call("Input.dispatchKeyEvent", p).unwrap();
        }
    }

    /// A PNG of the page as shown.
    pub fn screenshot(&mut self) -> Vec<u8> {
        let r = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .unwrap();
        base64(r["data"].as_str().unwrap())
    }

    /// The page printed to PDF (print media, backgrounds off), as a browser's print does.
    pub fn print_pdf(&mut self) -> Vec<u8> {
        let r = self
            .call("Page.printToPDF", json!({"printBackground": false}))
            .unwrap();
        base64(r["data"].as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.send(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64, decoded.
pub fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= (val(c) as u32) << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    out
}
