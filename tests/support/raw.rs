//! A bare OpenAI-compatible server that records every request's headers and can misbehave at
//! the byte level: answers that are not UTF-8, streams that never end, answers of any size.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What the chat endpoint streams.
#[derive(Clone, Debug)]
pub enum Reply {
    /// This text, one piece per word, then a finish and `[DONE]`.
    Text(String),
    /// These bytes as one piece's content, as is (need not be UTF-8).
    Bytes(Vec<u8>),
    /// Word after word, never finishing, until the client goes away.
    Endless,
    /// Pieces of `1 MiB` of text, this many, then a finish.
    Huge(usize),
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header lines, as sent (`Name: value`).
    pub headers: Vec<String>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.iter().find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

pub struct Raw {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Request>>>,
}

impl Raw {
    /// Serves the models `ids` and answers every chat with `reply`.
    pub fn start(ids: &[&str], reply: Reply) -> Raw {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let s2 = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (seen, ids, reply) = (s2.clone(), ids.clone(), reply.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, &seen, &ids, &reply);
                });
            }
        });
        Raw { url, seen }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(
    conn: TcpStream,
    seen: &Mutex<Vec<Request>>,
    ids: &[String],
    reply: &Reply,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        if h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        headers.push(h.trim_end().to_string());
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    seen.lock().unwrap().push(Request {
        method: method.clone(),
        path: path.clone(),
        headers,
    });
    match (method.as_str(), path.as_str()) {
        ("GET", "/v1/models") => {
            let data: Vec<String> = ids
                .iter()
                .map(|i| format!(r#"{{"id":"{i}","object":"model"}}"#))
                .collect();
            let b = format!(r#"{{"object":"list","data":[{}]}}"#, data.join(","));
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
                b.len()
            )
        }
        ("POST", "/v1/chat/completions") => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )?;
            let piece = |content: &[u8]| {
                let mut e = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".to_vec();
                e.extend_from_slice(content);
                e.extend_from_slice(b"\"},\"finish_reason\":null}]}\n\n");
                e
            };
            match reply {
                Reply::Text(t) => {
                    for w in t.split_inclusive(' ') {
                        let j = serde_json::to_string(w).unwrap();
                        chunk(&mut out, &piece(&j.as_bytes()[1..j.len() - 1]))?;
                    }
                }
                Reply::Bytes(b) => chunk(&mut out, &piece(b))?,
                // Never the same passage twice, so that only the token limit ends it (a
                // stream that repeats itself is cut sooner).
                Reply::Endless => {
                    for n in 0u64.. {
                        chunk(&mut out, &piece(format!("more{n} ").as_bytes()))?;
                    }
                }
                Reply::Huge(n) => {
                    let mib = vec![b'x'; 1 << 20];
                    for _ in 0..*n {
                        chunk(&mut out, &piece(&mib))?;
                    }
                }
            }
            chunk(
                &mut out,
                b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
            )?;
            out.write_all(b"0\r\n\r\n")
        }
        _ => write!(
            out,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    }
}

fn chunk(out: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    write!(out, "{:x}\r\n", bytes.len())?;
    out.write_all(bytes)?;
    out.write_all(b"\r\n")?;
    out.flush()
}

/// A workflow with two OpenAI-compatible pools, `firm` (with `api_key env "KEYVAR"`) and
/// `other`, a stage on each, and a source folder of text files.
pub fn two_pool_workflow(firm: &str, other: &str, keyvar: &str, max_tokens: u32) -> String {
    format!(
        r#"workflow keys "Two pools, one key"

pool firm {{
  host "a"
  gpus 0
  vram 32 GiB
  serve openai at "{firm}"
  api_key env "{keyvar}"
}}

pool other {{
  host "b"
  gpus 0
  vram 32 GiB
  serve openai at "{other}"
}}

model drafter on firm {{
  tag "drafter"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
  max_tokens {max_tokens}
}}

model gatekeeper on other {{
  tag "gatekeeper"
  weights 1 GiB
  layers 2  kv_heads 4  head_dim 16
  ctx 16k
}}

sources client {{
  files "*.txt"
}}

stage draft {{
  model drafter
  reads client
  prompt """
    {{{{evidence}}}}
    Write the draft.
  """
}}

stage check after draft {{
  model gatekeeper
  reads draft
  prompt """
    Check: {{{{draft}}}}
  """
}}

output "draft.md" from draft
"#
    )
}
