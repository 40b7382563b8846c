//! HTML as text: a web page saved by a browser, or an email's HTML body. Blocks (paragraphs,
//! headings, list items, table rows) become lines, table cells are joined with ` | `, runs of
//! white space collapse as a browser collapses them, and scripts, styles and the page's
//! `<head>` are dropped. Character references are decoded.

/// The text a reader of the page sees.
pub fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    let mut pre = 0usize;
    // At the start of a line, or after white space: a further space is not written.
    let mut space = true;
    let mut first_cell = true;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            text(&mut out, rest, pre > 0, &mut space);
            break;
        };
        text(&mut out, &rest[..lt], pre > 0, &mut space);
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |i| &rest[i + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else {
            break;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        match name.as_str() {
            "script" | "style" | "head" | "title" | "noscript" | "template" if !closing => {
                let end = format!("</{name}");
                rest = find_ci(rest, &end).map_or("", |i| {
                    rest[i..].find('>').map_or("", |j| &rest[i + j + 1..])
                });
            }
            "br" => newline(&mut out, &mut space, false),
            "pre" => {
                pre = if closing {
                    pre.saturating_sub(1)
                } else {
                    pre + 1
                };
                newline(&mut out, &mut space, false);
            }
            "td" | "th" if !closing => {
                if !first_cell {
                    out.truncate(out.trim_end_matches(' ').len());
                    out.push_str(" | ");
                    space = true;
                }
                first_cell = false;
            }
            "tr" => {
                first_cell = true;
                newline(&mut out, &mut space, false);
            }
            "li" if !closing => {
                newline(&mut out, &mut space, false);
                out.push_str("- ");
            }
            "p" | "div" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "blockquote" | "table"
            | "ul" | "ol" | "section" | "article" | "header" | "footer" | "hr" | "dt" | "dd"
            | "address" | "li" => {
                newline(&mut out, &mut space, name.starts_with('h') || name == "p")
            }
            _ => {}
        }
    }
    let mut s: String = out
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n");
    while s.contains("\n\n\n") {
        s = s.replace("\n\n\n", "\n\n");
    }
    s.trim().to_string() + "\n"
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    let h = hay.to_ascii_lowercase();
    h.find(needle)
}

fn newline(out: &mut String, space: &mut bool, blank: bool) {
    out.truncate(out.trim_end_matches(' ').len());
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if blank && !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
    *space = true;
}

fn text(out: &mut String, raw: &str, pre: bool, space: &mut bool) {
    let decoded = decode(raw);
    if pre {
        out.push_str(&decoded);
        *space = decoded.ends_with(char::is_whitespace);
        return;
    }
    for c in decoded.chars() {
        if c.is_whitespace() && c != '\u{00A0}' {
            if !*space {
                out.push(' ');
                *space = true;
            }
        } else {
            out.push(if c == '\u{00A0}' { ' ' } else { c });
            *space = false;
        }
    }
}

/// Decodes `&amp;`, `&#39;`, `&#x2014;` and the common named references.
pub fn decode(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest[1..].find(';').map(|j| j + 1).filter(|j| *j <= 10);
        let c = end.and_then(|j| {
            let name = &rest[1..j];
            match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{00A0}'),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "lsquo" => Some('‘'),
                "rsquo" => Some('’'),
                "ldquo" => Some('“'),
                "rdquo" => Some('”'),
                "sect" => Some('§'),
                "para" => Some('¶'),
                "copy" => Some('©'),
                "hellip" => Some('…'),
                _ => {
                    let n = name.strip_prefix('#')?;
                    let v = match n.strip_prefix(['x', 'X']) {
                        Some(h) => u32::from_str_radix(h, 16).ok()?,
                        None => n.parse().ok()?,
                    };
                    char::from_u32(v)
                }
            }
        });
        match (c, end) {
            (Some(c), Some(j)) => {
                out.push(c);
                rest = &rest[j + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_page_reads_as_its_visible_text() {
        let html = "<!DOCTYPE html><html><head><title>t</title><style>p{}</style></head><body>\
            <h1>Notice&nbsp;to  quit</h1><p>Rent of <b>$1,250.00</b>\n was due\non March 1, 2024 &amp; unpaid.</p>\
            <script>var x = '<p>';</script><table><tr><th>Date</th><th>Paid</th></tr>\
            <tr><td>2024-03-01</td><td>$0</td></tr></table><ul><li>one</li><li>two</li></ul></body></html>";
        assert_eq!(
            to_text(html),
            "Notice to quit\n\nRent of $1,250.00 was due on March 1, 2024 & unpaid.\n\nDate | Paid\n2024-03-01 | $0\n- one\n- two\n"
        );
    }
}
