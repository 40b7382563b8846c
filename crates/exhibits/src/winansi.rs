//! WinAnsiEncoding, the encoding of the standard 14 fonts (Helvetica and the rest) as lexrun
//! declares them: text drawn with such a font must be these bytes, not UTF-8, or a reader
//! shows mojibake (`Ü` as `Ãœ`). A character the encoding lacks cannot be shown by the font
//! at all, and is refused rather than drawn wrong.

/// The characters of WinAnsi's 0x80–0x9F row (`None` where the row is unused).
const ROW_80: [Option<char>; 32] = [
    Some('€'),
    None,
    Some('‚'),
    Some('ƒ'),
    Some('„'),
    Some('…'),
    Some('†'),
    Some('‡'),
    Some('ˆ'),
    Some('‰'),
    Some('Š'),
    Some('‹'),
    Some('Œ'),
    None,
    Some('Ž'),
    None,
    None,
    Some('\u{2018}'),
    Some('\u{2019}'),
    Some('\u{201C}'),
    Some('\u{201D}'),
    Some('•'),
    Some('–'),
    Some('—'),
    Some('˜'),
    Some('™'),
    Some('š'),
    Some('›'),
    Some('œ'),
    None,
    Some('ž'),
    Some('Ÿ'),
];

/// The WinAnsi byte of a character, if the encoding has it.
pub fn byte(c: char) -> Option<u8> {
    match c as u32 {
        0x20..=0x7E | 0xA0..=0xFF => Some(c as u32 as u8),
        _ => ROW_80
            .iter()
            .position(|x| *x == Some(c))
            .map(|i| 0x80 + i as u8),
    }
}

/// `text` in WinAnsi, or the first character it cannot encode.
pub fn encode(text: &str) -> Result<Vec<u8>, char> {
    text.chars().map(|c| byte(c).ok_or(c)).collect()
}

/// `text` as a PDF literal string body: WinAnsi bytes, with `\`, `(` and `)` escaped and
/// bytes outside printable ASCII written as octal escapes.
pub fn literal(text: &str) -> Result<Vec<u8>, char> {
    let mut out = Vec::new();
    for b in encode(text)? {
        match b {
            b'\\' | b'(' | b')' => {
                out.push(b'\\');
                out.push(b);
            }
            0x20..=0x7E => out.push(b),
            _ => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
        }
    }
    Ok(out)
}

/// Like [`literal`], with `?` for what the encoding lacks: for labels that must print.
pub fn literal_lossy(text: &str) -> Vec<u8> {
    let kept: String = text
        .chars()
        .map(|c| if byte(c).is_some() { c } else { '?' })
        .collect();
    literal(&kept).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_and_the_windows_row_encode_others_are_refused() {
        assert_eq!(encode("SMITH-Ü").unwrap(), b"SMITH-\xdc");
        assert_eq!(encode("€–").unwrap(), [0x80, 0x96]);
        assert_eq!(encode("a\u{4E2D}"), Err('\u{4E2D}'));
        assert_eq!(literal("(Ü)").unwrap(), b"\\(\\334\\)");
        assert_eq!(literal_lossy("A\u{4E2D}"), b"A?");
    }
}
