//! `review`: the review page served on 127.0.0.1 for a reviewer's decisions. A random port and
//! a random token; the URL printed carries the token once, exchanged on first use for a
//! cookie (`SameSite=Strict`, `HttpOnly`), so the token in a browser's history or a copied
//! URL opens nothing later. Every request must come to `127.0.0.1:PORT` by name (no other
//! host, against DNS rebinding), a decision must come from the page's own origin with its
//! header, and nothing but the page, its data and the pages of the matter's own sources is
//! served: anything else is 403 or 404 and changes nothing. One request at a time, so two
//! decisions on one claim are recorded one after the other. The server stops on Ctrl-C or
//! after `--idle-timeout` without a request.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::store::{Store, Verdict};

use super::decide::{self, Ask, Subject};
use super::output::exit;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// A random token: 128 bits from the system's generator, as hex.
fn token() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Equal in constant time: a guess learns nothing from how long a refusal took.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

pub(super) struct ReviewArgs<'a> {
    pub target: &'a Path,
    pub reviewer: String,
    pub idle: Duration,
    pub store: Option<&'a Path>,
}

struct Server {
    subject: Subject,
    store: Store,
    reviewer: String,
    token: String,
    session: String,
    used: bool,
    origin: String,
    host: String,
    /// The session cookie's name, with the port in it: two review servers on one machine
    /// keep their sessions apart.
    cookie: String,
}

/// Connections read at once; more are closed unanswered.
const MAX_CONNECTIONS: usize = 32;

pub(super) fn cmd_review(a: ReviewArgs) -> u8 {
    let ctx = match decide::context_of(a.target) {
        Ok((c, _)) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let store = match super::open::open_at(a.store, Path::new("."), super::open::ledger_url(None)) {
        Ok(s) => s,
        Err(e) => return super::failure::fail(&e),
    };
    let subject = match Subject::load(ctx, &store) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let listener = match TcpListener::bind(("127.0.0.1", 0)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1: {e}");
            return exit::USAGE;
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let (Ok(token), Ok(session)) = (token(), token()) else {
        eprintln!("error: no random token could be made (/dev/urandom cannot be read)");
        return exit::USAGE;
    };
    let _ = listener.set_nonblocking(true);
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let host = format!("127.0.0.1:{port}");
    let s = Server {
        subject,
        store,
        reviewer: a.reviewer,
        token,
        session,
        used: false,
        origin: format!("http://{host}"),
        host,
        cookie: format!("lexrun_review_{port}"),
    };
    println!("{}/?t={}", s.origin, s.token);
    eprintln!(
        "Serving the review of matter {} to 127.0.0.1 only; decisions are recorded as {}. Ctrl-C stops it (it stops by itself after {} s without a request).",
        s.subject.ctx.matter,
        s.reviewer,
        a.idle.as_secs()
    );
    let _ = std::io::stdout().flush();
    // Each connection is read on a thread of its own (a browser opens some it never uses);
    // requests are answered one at a time.
    let s = std::sync::Arc::new(std::sync::Mutex::new(s));
    // The idle timer counts from the last request the server answered as its reviewer's:
    // requests without the session keep nothing open.
    let last = std::sync::Arc::new(std::sync::Mutex::new(Instant::now()));
    let open = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    while !STOP.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((mut stream, peer)) => {
                if peer.ip().is_loopback() && open.load(Ordering::SeqCst) < MAX_CONNECTIONS {
                    let s = s.clone();
                    let last = last.clone();
                    let open = open.clone();
                    open.fetch_add(1, Ordering::SeqCst);
                    std::thread::spawn(move || {
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
                        let req = read_request(&mut stream);
                        let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
                        if req.as_ref().is_some_and(|r| s.authorised(r)) {
                            *last.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                        }
                        s.serve(stream, req);
                        drop(s);
                        open.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let idle = last.lock().map(|t| t.elapsed()).unwrap_or_default();
                if idle >= a.idle {
                    eprintln!(
                        "Stopped: no request for {} s. Decisions made are in the ledger.",
                        a.idle.as_secs()
                    );
                    return exit::OK;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    eprintln!("Stopped. Decisions made are in the ledger.");
    exit::OK
}

/// A request as read: method, path, query, the headers that matter, the body.
struct Request {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn cookie(&self, name: &str) -> Option<&str> {
        self.header("cookie")?.split(';').find_map(|c| {
            let (k, v) = c.trim().split_once('=')?;
            (k == name).then_some(v)
        })
    }
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        if buf.len() > 16 * 1024 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let (path, q) = target.split_once('?').unwrap_or((&target, ""));
    let query = q
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unescape(k), unescape(v))
        })
        .collect();
    let mut req = Request {
        method,
        path: path.to_string(),
        query,
        headers,
        body: buf[head_end + 4..].to_vec(),
    };
    let len: usize = req
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if len > 64 * 1024 {
        return None;
    }
    while req.body.len() < len {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        req.body.extend_from_slice(&chunk[..n]);
    }
    req.body.truncate(len);
    Some(req)
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, extra: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n\
         Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'\r\n\
         {extra}Connection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

fn json_reply(stream: &mut TcpStream, status: &str, v: &Value) {
    respond(
        stream,
        status,
        "application/json; charset=utf-8",
        "",
        v.to_string().as_bytes(),
    );
}

fn refuse(stream: &mut TcpStream, status: &str, why: &str) {
    json_reply(stream, status, &json!({ "error": why }));
}

impl Server {
    /// Whether a request is the reviewer's: this server by its name, from its own origin, and
    /// with the session, or the one-time token not yet used.
    fn authorised(&self, req: &Request) -> bool {
        req.header("host") == Some(self.host.as_str())
            && req.header("origin").is_none_or(|o| o == self.origin)
            && (req
                .cookie(&self.cookie)
                .is_some_and(|c| same(c, &self.session))
                || (req.method == "GET"
                    && req.path == "/"
                    && !self.used
                    && req.param("t").is_some_and(|t| same(t, &self.token))))
    }

    fn serve(&mut self, mut stream: TcpStream, req: Option<Request>) {
        let Some(req) = req else {
            return refuse(&mut stream, "400 Bad Request", "unreadable request");
        };
        // Only this server, by the name it printed.
        if req.header("host") != Some(self.host.as_str()) {
            return refuse(&mut stream, "403 Forbidden", "wrong host");
        }
        if let Some(o) = req.header("origin") {
            if o != self.origin {
                return refuse(&mut stream, "403 Forbidden", "another origin");
            }
        }
        let signed_in = req
            .cookie(&self.cookie)
            .is_some_and(|c| same(c, &self.session));
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/") if !signed_in => match req.param("t") {
                Some(t) if same(t, &self.token) && !self.used => {
                    self.used = true;
                    let cookie = format!(
                        "Set-Cookie: {}={}; HttpOnly; SameSite=Strict; Path=/\r\nLocation: /\r\n",
                        self.cookie, self.session
                    );
                    respond(&mut stream, "303 See Other", "text/plain", &cookie, b"");
                }
                Some(t) if same(t, &self.token) => refuse(
                    &mut stream,
                    "403 Forbidden",
                    "this link was used already: open the page in the browser that used it, or start `lexrun review` again",
                ),
                _ => refuse(&mut stream, "403 Forbidden", "no valid token"),
            },
            _ if !signed_in => refuse(&mut stream, "403 Forbidden", "no valid session"),
            ("GET", "/") => {
                let page = self.page();
                respond(
                    &mut stream,
                    "200 OK",
                    "text/html; charset=utf-8",
                    "",
                    page.as_bytes(),
                );
            }
            ("GET", "/state") => json_reply(&mut stream, "200 OK", &self.state()),
            ("GET", "/page") => self.source_page(&mut stream, &req),
            ("POST", "/decide") => {
                // A decision only from the page itself.
                if req.header("origin") != Some(self.origin.as_str())
                    || req.header("x-lexrun-review") != Some("1")
                {
                    return refuse(&mut stream, "403 Forbidden", "not from the review page");
                }
                self.decide(&mut stream, &req);
            }
            _ => refuse(&mut stream, "404 Not Found", "nothing here"),
        }
    }

    /// The review page with the decision panel and its script.
    fn page(&self) -> String {
        let s = &self.subject;
        let html = crate::review::page(&crate::review::Review {
            title: &format!(
                "{}{}",
                s.ctx.matter,
                if s.ctx.stage.is_empty() {
                    String::new()
                } else {
                    format!(" (stage `{}`)", s.ctx.stage)
                }
            ),
            draft: &s.ctx.draft,
            outcomes: &s.v.outcomes,
            files: &s.v.files,
            evidence: &s.evidence,
            provenance: vec![
                ("matter".into(), s.ctx.matter.clone()),
                ("run".into(), s.ctx.run_id.clone()),
                ("stage".into(), s.ctx.stage.clone()),
                ("reviewer".into(), self.reviewer.clone()),
            ],
            images: false,
            ids: &s.v.ids,
        });
        let panel = format!(
            "<section id=\"decide\" aria-labelledby=\"decide-h\"><h2 id=\"decide-h\">Decide</h2><div id=\"decide-body\"></div></section>\n\
             <style>\n{}</style>\n<script type=\"application/json\" id=\"decide-data\">{}</script>\n<script>\n{}</script>\n",
            include_str!("decide.css"),
            crate::escape::script_json(&self.state().to_string()),
            include_str!("decide.js")
        );
        match html.rfind("</body>") {
            Some(at) => format!("{}{panel}{}", &html[..at], &html[at..]),
            None => html + &panel,
        }
    }

    /// What the page's script needs: each claim's id, the sources and their page counts,
    /// the decisions met.
    fn state(&self) -> Value {
        let s = &self.subject;
        let sources: Vec<Value> = s
            .ctx
            .sources
            .iter()
            .map(|(name, _)| {
                let mut pages = 0;
                s.evidence.find_page(|f, p, _| {
                    if f == name {
                        pages = pages.max(p);
                    }
                    None::<()>
                });
                json!({"name": name, "pages": pages})
            })
            .collect();
        let claims: Vec<Value> = s
            .v
            .outcomes
            .iter()
            .zip(&s.v.ids)
            .map(|(o, id)| {
                json!({"id": id, "kind": o.claim.kind.as_str(), "text": o.claim.text, "status": o.status.as_str(),
                       "reason": o.reason, "page": o.source.as_ref().map(|l| json!({"file": l.file, "page": l.page}))})
            })
            .collect();
        let decisions: Vec<Value> = s
            .v
            .reviewed
            .iter()
            .map(|r| {
                let d = &r.decision;
                json!({"id": r.id, "text": d.claim, "decision": d.verdict.as_str(), "reviewer": d.reviewer,
                       "when": crate::calendar::utc_minute(d.created), "page": d.page, "note": d.note,
                       "reason": d.reason, "lapsed": r.lapsed})
            })
            .collect();
        json!({"matter": s.ctx.matter, "reviewer": self.reviewer, "claims": claims,
               "decisions": decisions, "sources": sources})
    }

    /// A page of one of the matter's sources, for the page picker: nothing else.
    fn source_page(&self, stream: &mut TcpStream, req: &Request) {
        let s = &self.subject;
        let (Some(f), Some(p)) = (
            req.param("f"),
            req.param("p").and_then(|p| p.parse::<u32>().ok()),
        ) else {
            return refuse(stream, "404 Not Found", "no such page");
        };
        let Ok(f) = s.source_named(f) else {
            return refuse(stream, "404 Not Found", "not a source of this matter");
        };
        match s.evidence.page_texts(&[(f.clone(), p)]).pop().flatten() {
            Some(text) => json_reply(
                stream,
                "200 OK",
                &json!({"file": f, "page": p, "text": text}),
            ),
            None => refuse(stream, "404 Not Found", "no such page"),
        }
    }

    fn decide(&mut self, stream: &mut TcpStream, req: &Request) {
        let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
            return refuse(stream, "400 Bad Request", "the decision is not JSON");
        };
        let text = |k: &str| body[k].as_str().map(str::to_string);
        let Some(verdict) = body["decision"].as_str().and_then(Verdict::parse) else {
            return refuse(
                stream,
                "400 Bad Request",
                "a decision is confirmed, struck, waived or withdrawn",
            );
        };
        let ask = Ask {
            claim: text("claim").unwrap_or_default(),
            verdict,
            page: text("page").filter(|p| !p.trim().is_empty()),
            note: text("note"),
            reason: text("reason"),
            reviewer: self.reviewer.clone(),
        };
        let d = match self.subject.decision(&self.store, &ask) {
            Ok(d) => d,
            Err(e) if e.0.starts_with(decide::LEDGER_DOWN) => {
                return refuse(stream, "503 Service Unavailable", &e.0)
            }
            Err(e) => return refuse(stream, "422 Unprocessable Entity", &e.0),
        };
        if let Err(e) = self.store.add_decision(&d) {
            return refuse(
                stream,
                "503 Service Unavailable",
                &format!("the decision was not recorded: the ledger cannot be written ({e}); try again when it is back"),
            );
        }
        eprintln!("{}", decide::describe(&d));
        match Subject::load(self.subject.ctx.clone(), &self.store) {
            Ok(s) => self.subject = s,
            Err(e) => {
                return refuse(
                    stream,
                    "503 Service Unavailable",
                    &format!(
                    "the decision was recorded, but the verification could not be run again: {e}"
                ),
                )
            }
        }
        json_reply(
            stream,
            "200 OK",
            &json!({"recorded": decide::describe(&d), "state": self.state()}),
        );
    }
}
