//! The widths of the standard fonts' printable ASCII characters, per 1000 units of font
//! size, from their AFM metrics: for setting stamps exactly (Helvetica) and for measuring
//! the glyphs of pages that use a standard font without giving its widths.

/// A standard font whose widths are known here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    Helvetica,
    TimesRoman,
    Courier,
}

/// Characters 32 to 126: Helvetica's 95 widths, then Times-Roman's.
const WIDTHS: [u16; 190] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
    250, 333, 408, 500, 500, 833, 778, 180, 333, 333, 500, 564, 250, 333, 250, 278, 500, 500, 500,
    500, 500, 500, 500, 500, 500, 500, 278, 278, 564, 564, 564, 444, 921, 722, 667, 667, 722, 611,
    556, 722, 722, 333, 389, 722, 611, 889, 722, 722, 556, 722, 667, 556, 611, 722, 722, 944, 722,
    722, 611, 333, 278, 333, 469, 500, 333, 444, 500, 444, 500, 444, 333, 500, 500, 278, 278, 500,
    278, 778, 500, 500, 500, 500, 333, 389, 278, 500, 500, 722, 500, 500, 444, 480, 200, 480, 541,
];

/// The standard font a `BaseFont` name stands for (a subset prefix `ABCDEF+` ignored).
pub fn standard(base: &str) -> Option<Standard> {
    let name = base.split_once('+').map_or(base, |(_, n)| n);
    if name.starts_with("Courier") {
        return Some(Standard::Courier);
    }
    match name {
        "Helvetica" | "Helvetica-Oblique" | "Arial" | "ArialMT" => Some(Standard::Helvetica),
        "Times-Roman" | "TimesNewRoman" | "TimesNewRomanPSMT" => Some(Standard::TimesRoman),
        _ => None,
    }
}

/// The width of `c` in `font`, if it is known.
pub fn width(font: Standard, c: char) -> Option<f64> {
    let row = match font {
        Standard::Courier => return Some(600.0),
        Standard::Helvetica => 0,
        Standard::TimesRoman => 95,
    };
    // The curly quotes the standard encoding puts at 0x27 and 0x60.
    if matches!(c, '\u{2018}' | '\u{2019}') {
        return Some(if row == 0 { 222.0 } else { 333.0 });
    }
    let i = c as usize;
    (32..127).contains(&i).then(|| WIDTHS[row + i - 32] as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_fonts_have_known_widths_and_others_none() {
        assert_eq!(width(Standard::TimesRoman, '0'), Some(500.0));
        assert_eq!(width(Standard::TimesRoman, 'W'), Some(944.0));
        assert_eq!(width(Standard::Helvetica, '0'), Some(556.0));
        assert_eq!(width(Standard::Helvetica, 'é'), None);
        assert_eq!(width(Standard::TimesRoman, '\u{2019}'), Some(333.0));
        assert_eq!(standard("ABCDEF+Courier-Bold"), Some(Standard::Courier));
        assert_eq!(standard("Symbol"), None);
    }
}
