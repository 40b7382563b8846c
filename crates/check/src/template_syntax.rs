//! Why a prompt template does not parse, as a sentence at the place to fix. Handlebars' own
//! error is a list of grammar rules at the point where it gave up (often the end of the
//! template); the usual mistakes — a block never closed, closed with the wrong name, a `{{`
//! without its `}}` — are found here by matching the tags, and pointed at where they open.

/// A mistake in a template: what is wrong, how to fix it, and the byte range to point at.
#[derive(Debug, PartialEq)]
pub(crate) struct Mistake {
    pub message: String,
    pub help: String,
    pub start: usize,
    pub end: usize,
}

fn mistake(message: String, help: String, start: usize, end: usize) -> Option<Mistake> {
    Some(Mistake {
        message,
        help,
        start,
        end,
    })
}

/// Line number (1-based) of a byte offset.
fn line_of(raw: &str, at: usize) -> usize {
    raw.as_bytes()[..at.min(raw.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The first mistake in the template's tags, or `None` when the tags match (handlebars' own
/// reason is then shown).
pub(crate) fn explain(raw: &str) -> Option<Mistake> {
    // Open blocks: (helper name, where its tag starts, where it ends).
    let mut open: Vec<(&str, usize, usize)> = Vec::new();
    let mut i = 0;
    while let Some(rel) = raw[i..].find("{{") {
        let at = i + rel;
        if at > 0 && raw.as_bytes()[at - 1] == b'\\' {
            i = at + 2;
            continue;
        }
        let (close, close_len) = if raw[at..].starts_with("{{!--") {
            ("--}}", 4)
        } else if raw[at..].starts_with("{{{") {
            ("}}}", 3)
        } else {
            ("}}", 2)
        };
        let Some(end) = raw[at + 2..].find(close).map(|e| at + 2 + e + close_len) else {
            return mistake(
                format!("`{{{{` on line {} is never closed with `{close}`", line_of(raw, at)),
                format!("end the tag with `{close}`, e.g. `{{{{matter.name}}}}`; to write `{{{{` as text, put a `\\` before it"),
                at,
                at + 2,
            );
        };
        // A tag that swallowed the next one: `{{a {{b}}`.
        let inner = &raw[at + 2..end - close_len];
        if let Some(k) = inner.find("{{") {
            return mistake(
                format!(
                    "`{{{{` on line {} is never closed with `}}}}` before the next tag",
                    line_of(raw, at)
                ),
                "end the tag with `}}`".to_string(),
                at,
                at + 2 + k,
            );
        }
        let inner = inner.trim_start_matches('~').trim();
        if let Some(m) = tag(raw, inner, at, end, &mut open) {
            return Some(m);
        }
        i = end;
    }
    let (name, at, end) = open.pop()?;
    let what = match name {
        "each" => "after the text it repeats",
        "if" | "unless" => "after the text it shows or hides",
        _ => "where the block ends",
    };
    mistake(
        format!(
            "`{{{{#{name}}}}}` on line {} is never closed",
            line_of(raw, at)
        ),
        format!("add `{{{{/{name}}}}}` {what}"),
        at,
        end,
    )
}

/// One tag's words (`inner`, the tag at `at..end`): a block opened on `open` with a helper
/// named, a close that matches the block still open, or anything but an empty tag.
fn tag<'r>(
    raw: &str,
    inner: &'r str,
    at: usize,
    end: usize,
    open: &mut Vec<(&'r str, usize, usize)>,
) -> Option<Mistake> {
    if let Some(block) = inner.strip_prefix('#') {
        let name = block.split_whitespace().next().unwrap_or("");
        let name = name.trim_start_matches('>').trim_start_matches('*');
        if name.is_empty() {
            return mistake(
                "a `{{#…}}` block names no helper".to_string(),
                "write `{{#if …}}`, `{{#each …}}`, `{{#unless …}}` or `{{#with …}}`".to_string(),
                at,
                end,
            );
        }
        open.push((name, at, end));
    } else if let Some(name) = inner.strip_prefix('/') {
        let name = name.trim();
        match open.pop() {
            None => {
                return mistake(
                    format!("`{{{{/{name}}}}}` closes a block that was never opened"),
                    format!("remove it, or open the block before it with `{{{{#{name} …}}}}`"),
                    at,
                    end,
                )
            }
            Some((opened, o_at, o_end)) if opened != name => {
                // The block still open is the one left unclosed.
                return mistake(
                    format!(
                        "`{{{{#{opened}}}}}` on line {} is never closed: `{{{{/{name}}}}}` on line {} comes first",
                        line_of(raw, o_at),
                        line_of(raw, at)
                    ),
                    format!("add `{{{{/{opened}}}}}` where the `{opened}` block should end, before `{{{{/{name}}}}}`"),
                    o_at,
                    o_end,
                );
            }
            Some(_) => {}
        }
    } else if inner.is_empty() {
        return mistake(
            format!("an empty `{{{{}}}}` on line {}", line_of(raw, at)),
            "put a variable inside, e.g. `{{matter.name}}`, or remove it".to_string(),
            at,
            end,
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_unclosed_block_where_it_opens() {
        let raw = "{{evidence}}\n{{#each inputs}}\n  {{this.text}}\n";
        let m = explain(raw).unwrap();
        assert_eq!(&raw[m.start..m.end], "{{#each inputs}}");
        assert!(m.message.contains("line 2"), "{}", m.message);
    }

    #[test]
    fn a_wrong_close_blames_the_open_block() {
        let raw = "{{#each a}}{{#if b}}x{{/each}}";
        let m = explain(raw).unwrap();
        assert_eq!(&raw[m.start..m.end], "{{#if b}}");
    }

    #[test]
    fn unclosed_tags_and_stray_closes() {
        assert!(explain("a {{matter.name b")
            .unwrap()
            .message
            .contains("never closed"));
        assert!(explain("a {{/if}}")
            .unwrap()
            .message
            .contains("never opened"));
        assert!(explain("{{!-- note --}}{{#if a}}x{{else}}y{{/if}} \\{{raw").is_none());
    }
}
