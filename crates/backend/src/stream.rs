//! Framing of streamed answers: server-sent events (llama.cpp, OpenAI-compatible) and
//! newline-delimited JSON (Ollama). Both decoders take bytes as they arrive, in chunks cut
//! anywhere, and hand back whole messages.
//!
//! A stream is bounded whatever the server does: bytes that are not UTF-8 are an error (never
//! silently replaced), a stream past [`MAX_STREAM_BYTES`] is refused, and [`Budget`] ends an
//! answer at the stage's token limit (or the model's context) when the server does not.

use super::types::{Call, CallError, OnToken, Reply, Timings};

/// The most bytes one answer's stream may carry, framing included: far above any answer a
/// stage's token limit allows, far below what would exhaust memory.
pub const MAX_STREAM_BYTES: usize = 64 << 20;

/// What makes a stream unreadable.
fn not_utf8(at: usize) -> CallError {
    CallError::Malformed(format!(
        "the answer holds bytes that are not UTF-8 (at byte {at} of the stream); lexrun does not guess at them"
    ))
}

fn too_large() -> CallError {
    CallError::TooLarge(format!(
        "the answer stream passed {} MiB; the server ignores the stage's limits",
        MAX_STREAM_BYTES >> 20
    ))
}

/// Counts an answer's tokens against the stage's limit: `max_tokens`, else the model's
/// context, which no answer can outgrow; and watches for a model repeating itself.
pub struct Budget {
    pub limit: u64,
    pub tokens: u64,
    started: std::time::Instant,
    repeats: Repeats,
    /// Whether a model repeating itself ends the answer (not in a speed measurement).
    watch_loops: bool,
    /// The server's timings so far (llama.cpp sends them with every piece when asked for
    /// `timings_per_token`): an answer lexrun ends before the server's last event still
    /// says how long its prompt was and how much of it came from the cache.
    server: Option<Timings>,
}

/// The finish reason of an answer lexrun ended because the model was repeating itself.
pub const REPETITION: &str = "repetition";

/// How many words make a passage long enough that saying it again is a loop, not style.
pub const LOOP_WORDS: usize = 16;
/// How many times the same passage may appear before the answer is ended.
pub const LOOP_TIMES: usize = 3;

/// Watches an answer as it grows for the same long run of words ([`LOOP_WORDS`] words, the
/// same words in the same order, case, spacing and punctuation aside) coming [`LOOP_TIMES`] times: a
/// small model caught in a loop says one paragraph again and again until its token limit.
#[derive(Default)]
struct Repeats {
    /// Bytes of the answer already split into words.
    scanned: usize,
    /// Each word's hash and where it starts.
    words: Vec<(u64, usize)>,
    /// Each passage's hash → where it started, the first [`LOOP_TIMES`] times.
    seen: std::collections::HashMap<u64, Vec<usize>>,
}

fn word_hash(w: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for c in w.chars().flat_map(char::to_lowercase) {
        c.hash(&mut h);
    }
    h.finish()
}

impl Repeats {
    /// Takes the answer so far; when a passage has come [`LOOP_TIMES`] times, where its
    /// second time begins (the answer is kept up to there).
    fn check(&mut self, text: &str) -> Option<usize> {
        // Words are runs of letters and digits (`Lakeside-Lakeside-…` loops too); only those
        // followed by something else are complete.
        let end = text.rfind(|c: char| !c.is_alphanumeric())?;
        if end < self.scanned {
            return None;
        }
        let fresh = &text[self.scanned..end];
        let base = self.scanned;
        self.scanned = end;
        for (off, w) in fresh
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| (w.as_ptr() as usize - fresh.as_ptr() as usize, w))
        {
            self.words.push((word_hash(w), base + off));
            if self.words.len() < LOOP_WORDS {
                continue;
            }
            let window = &self.words[self.words.len() - LOOP_WORDS..];
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for (wh, _) in window {
                h = (h ^ wh).wrapping_mul(0x0100_0000_01b3);
            }
            let at = window[0].1;
            let starts = self.seen.entry(h).or_default();
            starts.push(at);
            if starts.len() >= LOOP_TIMES {
                return Some(starts[1]);
            }
        }
        None
    }
}

impl Budget {
    pub fn of(call: &Call) -> Budget {
        let limit = call
            .sampling
            .get("max_tokens")
            .map(|n| *n as u64)
            .filter(|n| *n > 0)
            .unwrap_or(call.num_ctx.max(1));
        Budget {
            limit,
            tokens: 0,
            started: std::time::Instant::now(),
            repeats: Repeats::default(),
            // A speed measurement runs to its length whatever the model says.
            watch_loops: !call.measure,
            server: None,
        }
    }

    /// Takes the server's timings as of the latest piece.
    pub fn note_timings(&mut self, t: Timings) {
        self.server = Some(t);
    }

    /// Takes the answer so far, after each piece: when the model is repeating itself, the
    /// answer ended there, kept up to where the passage it repeats began a second time.
    pub fn looped(&mut self, text: &mut String) -> Option<Reply> {
        if !self.watch_loops {
            return None;
        }
        let at = self.repeats.check(text)?;
        let mut kept = std::mem::take(text);
        kept.truncate(at);
        let kept_len = kept.trim_end().len();
        kept.truncate(kept_len);
        let mut r = self.cut(kept);
        r.finish = Some(REPETITION.into());
        Some(r)
    }

    /// Adds one piece of the answer to `text`, counting it in `tokens` and saying so to
    /// `on_token`. A reply when lexrun stops reading here: a server going on past the
    /// stage's limit (the piece is left out), or a model saying the same passage again and
    /// again.
    pub fn piece(
        &mut self,
        text: &mut String,
        piece: &str,
        tokens: &mut u64,
        on_token: OnToken<'_>,
    ) -> Option<Reply> {
        if self.take() {
            return Some(self.cut(std::mem::take(text)));
        }
        text.push_str(piece);
        *tokens += 1;
        on_token(*tokens);
        self.looped(text)
    }

    /// Counts one more piece; true when it would pass the limit, and the answer ends
    /// without it.
    pub fn take(&mut self) -> bool {
        if self.tokens >= self.limit {
            return true;
        }
        self.tokens += 1;
        false
    }

    /// An answer ended by lexrun at the limit: `length`, with the prompt's timings as the
    /// server last gave them, and the tokens lexrun read; decoding time is the server's when
    /// it gave one, else the clock's.
    pub fn cut(&self, text: String) -> Reply {
        let server = self.server.clone().unwrap_or_default();
        let ms = if server.predicted_ms > 0.0 {
            server.predicted_ms
        } else {
            self.started.elapsed().as_secs_f64() * 1000.0
        };
        Reply {
            text,
            timings: Timings {
                predicted_n: self.tokens,
                predicted_ms: ms,
                predicted_per_second: if ms > 0.0 {
                    self.tokens as f64 * 1000.0 / ms
                } else {
                    0.0
                },
                ..server
            },
            finish: Some("length".into()),
        }
    }
}

/// One server-sent event's data, or the end of the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Sse {
    Data(String),
    Done,
}

/// Decodes `text/event-stream`: events end at a blank line; `data:` lines are joined with
/// newlines; comment lines (starting with `:`, llama.cpp's keep-alive pings) and other fields
/// are skipped; `data: [DONE]` ends the stream.
#[derive(Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    data: Vec<String>,
    /// Bytes taken so far.
    seen: usize,
}

/// A line as text, or where its first byte that is not UTF-8 is in the stream.
fn utf8(line: &[u8], line_start: usize) -> Result<&str, CallError> {
    std::str::from_utf8(line).map_err(|e| not_utf8(line_start + e.valid_up_to()))
}

impl SseDecoder {
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Sse>) -> Result<(), CallError> {
        let start = self.seen - self.buf.len().min(self.seen);
        self.seen += chunk.len();
        if self.seen > MAX_STREAM_BYTES {
            return Err(too_large());
        }
        self.buf.extend_from_slice(chunk);
        let mut at = start;
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=nl).collect();
            let len = line.len();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line(utf8(&line, at)?, out);
            at += len;
        }
        Ok(())
    }

    /// The stream ended: an event not closed by a blank line still counts.
    pub fn finish(&mut self, out: &mut Vec<Sse>) -> Result<(), CallError> {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let at = self.seen - rest.len();
            self.line(utf8(&rest, at)?.trim_end_matches('\r'), out);
        }
        self.dispatch(out);
        Ok(())
    }

    fn line(&mut self, line: &str, out: &mut Vec<Sse>) {
        if line.is_empty() {
            self.dispatch(out);
        } else if line.starts_with(':') {
            // A comment: keep-alive.
        } else if let Some(v) = line.strip_prefix("data:") {
            self.data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Sse>) {
        if self.data.is_empty() {
            return;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        if data.trim() == "[DONE]" {
            out.push(Sse::Done);
        } else {
            out.push(Sse::Data(data));
        }
    }
}

/// Decodes newline-delimited JSON: one message per line, blank lines skipped.
#[derive(Default)]
pub struct NdjsonDecoder {
    buf: Vec<u8>,
    seen: usize,
}

impl NdjsonDecoder {
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<String>) -> Result<(), CallError> {
        let mut at = self.seen - self.buf.len().min(self.seen);
        self.seen += chunk.len();
        if self.seen > MAX_STREAM_BYTES {
            return Err(too_large());
        }
        self.buf.extend_from_slice(chunk);
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=nl).collect();
            let text = utf8(&line, at)?;
            if !text.trim().is_empty() {
                out.push(text.trim().to_string());
            }
            at += line.len();
        }
        Ok(())
    }

    pub fn finish(&mut self, out: &mut Vec<String>) -> Result<(), CallError> {
        let rest = std::mem::take(&mut self.buf);
        let text = utf8(&rest, self.seen - rest.len())?;
        if !text.trim().is_empty() {
            out.push(text.trim().to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse_all(chunks: &[&[u8]]) -> Vec<Sse> {
        let mut d = SseDecoder::default();
        let mut out = Vec::new();
        for c in chunks {
            d.push(c, &mut out).unwrap();
        }
        d.finish(&mut out).unwrap();
        out
    }

    fn call(max_tokens: f64) -> crate::Call {
        crate::Call {
            stage: "s".into(),
            model: "m".into(),
            prompt: String::new(),
            schema: None,
            sampling: [("max_tokens".to_string(), max_tokens)].into(),
            num_ctx: 8192,
            slot: None,
            timeout: std::time::Duration::from_secs(1),
            measure: false,
        }
    }

    #[test]
    fn a_speed_measurement_is_never_cut_for_repeating_itself() {
        let mut c = call(100_000.0);
        c.measure = true;
        let mut b = Budget::of(&c);
        let mut text = "the same words again and again ".repeat(40);
        assert!(b.looped(&mut text).is_none());
    }

    /// Feeds `text` a few characters at a time, as a stream does; the reply when it loops.
    fn feed(text: &str) -> Option<crate::Reply> {
        let mut b = Budget::of(&call(100_000.0));
        let mut so_far = String::new();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(3) {
            assert!(!b.take());
            so_far.extend(piece);
            if let Some(r) = b.looped(&mut so_far) {
                return Some(r);
            }
        }
        None
    }

    #[test]
    fn a_paragraph_said_again_and_again_is_cut_after_its_first_time() {
        let para = "1. On March 3, 2024 the tenant told the landlord in writing that the heating had failed and asked for it to be repaired (SMITH000004).\n\n";
        let text = format!("I, Jane Smith, state:\n\n{}", para.repeat(6));
        let r = feed(&text).expect("a loop");
        assert_eq!(r.finish.as_deref(), Some(REPETITION));
        assert_eq!(
            r.text,
            format!("I, Jane Smith, state:\n\n{}", para.trim_end())
        );
        // Cut early: long before the six copies were read.
        assert!(r.timings.predicted_n < (text.chars().count() / 3) as u64);
    }

    #[test]
    fn a_loop_with_no_spaces_in_it_is_cut_too() {
        let r = feed(&format!(
            "<<Client: 2025-03-03-Lakeside-Rentals-{}",
            "Lakeside-".repeat(300)
        ))
        .expect("a loop");
        assert_eq!(r.finish.as_deref(), Some(REPETITION));
        assert_eq!(r.text, "<<Client: 2025-03-03-Lakeside-Rentals-Lakeside-");
    }

    #[test]
    fn one_word_over_and_over_is_a_loop_too() {
        let r = feed(&"rent ".repeat(200)).expect("a loop");
        assert_eq!(r.finish.as_deref(), Some(REPETITION));
        assert_eq!(r.text, "rent");
    }

    #[test]
    fn prose_that_repeats_short_phrases_or_a_passage_twice_is_not_cut() {
        // Legal prose repeats short formulas and cites; a passage quoted twice is fine.
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&format!(
                "{i}. The tenant paid rent of ${i},200.00 on day {i} (SMITH{i:06}). "
            ));
        }
        let quote = "\"The landlord shall keep the heating, plumbing and electrical systems in good repair at all times during the term of this lease.\" ";
        text.push_str(quote);
        text.push_str("As the lease says: ");
        text.push_str(quote);
        assert!(feed(&text).is_none());
    }

    #[test]
    fn bytes_that_are_not_utf8_are_an_error_not_replaced() {
        let mut d = SseDecoder::default();
        let mut out = Vec::new();
        let e = d
            .push(
                b"data: {\"c\":\"ok\"}\n\ndata: {\"c\":\"\xff\"}\n\n",
                &mut out,
            )
            .unwrap_err();
        assert!(e.to_string().contains("not UTF-8 (at byte 30"), "{e}");
        let mut n = NdjsonDecoder::default();
        assert!(n.push(b"{\"a\":\"\xc3\"}\n", &mut Vec::new()).is_err());
    }

    #[test]
    fn a_stream_past_the_cap_is_refused() {
        let mut d = NdjsonDecoder::default();
        let mut out = Vec::new();
        let piece = vec![b' '; 1 << 20];
        let mut failed = None;
        for i in 0..=(MAX_STREAM_BYTES >> 20) {
            if let Err(e) = d.push(&piece, &mut out) {
                failed = Some((i, e));
                break;
            }
        }
        let (i, e) = failed.expect("refused");
        assert_eq!(i, MAX_STREAM_BYTES >> 20);
        assert!(!e.retryable(), "{e}");
    }

    #[test]
    fn sse_events_pings_and_done() {
        let got = sse_all(&[
            b": ping\n\ndata: {\"a\":1}\n\nda",
            b"ta: {\"b\":2}\r\n\r\n",
            b"data: [DONE]\n\n",
        ]);
        assert_eq!(
            got,
            vec![
                Sse::Data("{\"a\":1}".into()),
                Sse::Data("{\"b\":2}".into()),
                Sse::Done
            ]
        );
    }

    #[test]
    fn sse_multiline_data_and_unterminated_last_event() {
        let got = sse_all(&[b"event: x\ndata: one\ndata: two\n\ndata: tail"]);
        assert_eq!(
            got,
            vec![Sse::Data("one\ntwo".into()), Sse::Data("tail".into())]
        );
    }

    #[test]
    fn sse_split_inside_a_multibyte_character() {
        let text = "data: {\"c\":\"é\"}\n\n".as_bytes();
        let (a, b) = text.split_at(14);
        assert_eq!(sse_all(&[a, b]), vec![Sse::Data("{\"c\":\"é\"}".into())]);
    }

    #[test]
    fn ndjson_lines_across_chunks() {
        let mut d = NdjsonDecoder::default();
        let mut out = Vec::new();
        d.push(b"{\"a\":1}\n{\"b\"", &mut out).unwrap();
        d.push(b":2}\n\n{\"c\":3}", &mut out).unwrap();
        d.finish(&mut out).unwrap();
        assert_eq!(out, vec!["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }
}
