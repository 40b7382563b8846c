//! Text made safe inside HTML, XML and a script's JSON, each by its format's rules: the one
//! place lexrun escapes what it writes into markup. A leaf any layer may use.

/// The character reference for `&`, `<`, `>` or `"`, which HTML and XML both escape.
#[inline]
fn markup_ref(c: char) -> Option<&'static str> {
    Some(match c {
        '&' => "&amp;",
        '<' => "&lt;",
        '>' => "&gt;",
        '"' => "&quot;",
        _ => return None,
    })
}

/// Text for HTML, inside an element or a quoted attribute (`"…"` or `'…'`): `&`, `<`, `>`,
/// `"` and `'` as character references. Control characters are kept: HTML shows them as text,
/// and none of them can end an element or an attribute.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match (c, markup_ref(c)) {
            (_, Some(r)) => out.push_str(r),
            ('\'', None) => out.push_str("&#39;"),
            (c, None) => out.push(c),
        }
    }
    out
}

/// Text for XML 1.0 (a Word document's parts), inside an element or a double-quoted
/// attribute: `&`, `<`, `>` and `"` as character references; tab, line feed and carriage
/// return as a space (a Word run breaks lines with elements of its own, and an attribute's
/// line breaks would be read as spaces anyway); and the characters XML 1.0 forbids (the other
/// C0 controls, U+FFFE and U+FFFF) left out, so the part still parses.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match (c, markup_ref(c)) {
            (_, Some(r)) => out.push_str(r),
            ('\t' | '\n' | '\r', None) => out.push(' '),
            (c, None) if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            (c, None) => out.push(c),
        }
    }
    out
}

/// JSON text that can sit inside an HTML `<script>` element: `<`, `>` and `&` written as
/// `\u` escapes, so nothing in it can close the element or open a comment, and U+2028 and
/// U+2029 escaped for script parsers that end a line there. The JSON means what it meant.
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{html, script_json, xml};

    /// Each input, escaped by `f`, reads as given.
    fn each(f: fn(&str) -> String, cases: &[(&str, &str)]) {
        for (input, want) in cases {
            assert_eq!(f(input), *want, "{input:?}");
        }
    }

    #[test]
    fn html_escapes_markup_and_both_quotes_and_keeps_the_rest() {
        each(
            html,
            &[
                (
                    "<a href=\"x\" title='y'>R&D</a>",
                    "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;R&amp;D&lt;/a&gt;",
                ),
                ("tab\tline\nbell\u{7} é ✓", "tab\tline\nbell\u{7} é ✓"),
                ("&amp;", "&amp;amp;"),
            ],
        );
    }

    #[test]
    fn xml_escapes_markup_and_drops_what_xml_forbids() {
        each(
            xml,
            &[
                ("a\tb\nc\r\nd", "a b c  d"),
                ("\u{0}\u{1F}\u{FFFE}\u{FFFF}x\u{7F}", "x\u{7F}"),
                (
                    "A & B <c> \"d\" 'e'\u{1}\u{FFFD}",
                    "A &amp; B &lt;c&gt; &quot;d&quot; 'e'\u{FFFD}",
                ),
            ],
        );
    }

    #[test]
    fn script_json_cannot_close_its_element_and_still_parses() {
        let json = serde_json::to_string("</script><!-- & \u{2028}").unwrap();
        let safe = script_json(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        assert!(!safe.contains('\u{2028}'));
        let back: String = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, "</script><!-- & \u{2028}");
    }
}
