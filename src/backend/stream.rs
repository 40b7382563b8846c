//! Framing of streamed answers: server-sent events (llama.cpp, OpenAI-compatible) and
//! newline-delimited JSON (Ollama). Both decoders take bytes as they arrive, in chunks cut
//! anywhere, and hand back whole messages.

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
}

impl SseDecoder {
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Sse>) {
        self.buf.extend_from_slice(chunk);
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=nl).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line(&String::from_utf8_lossy(&line), out);
        }
    }

    /// The stream ended: an event not closed by a blank line still counts.
    pub fn finish(&mut self, out: &mut Vec<Sse>) {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            self.line(String::from_utf8_lossy(&rest).trim_end_matches('\r'), out);
        }
        self.dispatch(out);
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
}

impl NdjsonDecoder {
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<String>) {
        self.buf.extend_from_slice(chunk);
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line);
            if !line.trim().is_empty() {
                out.push(line.trim().to_string());
            }
        }
    }

    pub fn finish(&mut self, out: &mut Vec<String>) {
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
        if !rest.trim().is_empty() {
            out.push(rest.trim().to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse_all(chunks: &[&[u8]]) -> Vec<Sse> {
        let mut d = SseDecoder::default();
        let mut out = Vec::new();
        for c in chunks {
            d.push(c, &mut out);
        }
        d.finish(&mut out);
        out
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
        d.push(b"{\"a\":1}\n{\"b\"", &mut out);
        d.push(b":2}\n\n{\"c\":3}", &mut out);
        d.finish(&mut out);
        assert_eq!(out, vec!["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }
}
