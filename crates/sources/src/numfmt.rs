//! A workbook's cells as the sheet shows them: Excel number formats (`"$"#,##0.00`, `0.0%`,
//! `#,##0`, `m/d/yyyy`) applied to the stored value. `.xlsx` files keep each cell's format in
//! `xl/styles.xml`, named by the cell's style index in the sheet's XML; [`Formats`] reads both
//! so that [`show`] can print `$1,234.56` where calamine gives `1234.56`.

use std::collections::HashMap;
use std::io::Cursor;

use quick_xml::events::Event;

use super::limits;

/// Each sheet's number formats by (row, column), zero-based; only cells with a format
/// other than General are listed.
#[derive(Default)]
pub struct Formats {
    sheets: HashMap<String, HashMap<(u32, u32), String>>,
}

impl Formats {
    /// The formats of an `.xlsx` file's cells; empty when the parts cannot be read (the
    /// cells are then shown as stored).
    pub fn of_xlsx(bytes: &[u8]) -> Formats {
        read_xlsx(bytes).unwrap_or_default()
    }

    pub fn get(&self, sheet: &str, row: u32, col: u32) -> Option<&str> {
        self.sheets.get(sheet)?.get(&(row, col)).map(String::as_str)
    }
}

fn attr(e: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .map(|a| {
            let raw = String::from_utf8_lossy(&a.value).into_owned();
            quick_xml::escape::unescape(&raw).map_or(raw.clone(), |v| v.into_owned())
        })
}

fn part(z: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str) -> Option<String> {
    limits::zip_part(z, name, "Excel workbook").ok().flatten()
}

fn read_xlsx(bytes: &[u8]) -> Option<Formats> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).ok()?;
    let styles = part(&mut z, "xl/styles.xml")?;
    let mut custom: HashMap<u32, String> = HashMap::new();
    let mut xfs: Vec<u32> = Vec::new();
    let mut in_xfs = false;
    let mut r = quick_xml::Reader::from_str(&styles);
    loop {
        match r.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"numFmt" => {
                    if let (Some(id), Some(code)) = (attr(&e, b"numFmtId"), attr(&e, b"formatCode"))
                    {
                        if let Ok(id) = id.parse() {
                            custom.insert(id, code);
                        }
                    }
                }
                b"cellXfs" => in_xfs = true,
                b"xf" if in_xfs => xfs.push(
                    attr(&e, b"numFmtId")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                ),
                _ => {}
            },
            Event::End(e) if e.local_name().as_ref() == b"cellXfs" => in_xfs = false,
            Event::Eof => break,
            _ => {}
        }
    }
    let code_of = |style: usize| -> Option<String> {
        let id = *xfs.get(style)?;
        custom
            .get(&id)
            .cloned()
            .or_else(|| builtin(id).map(str::to_string))
    };
    // Sheet names and their parts, through the workbook's relationships.
    let workbook = part(&mut z, "xl/workbook.xml")?;
    let rels = part(&mut z, "xl/_rels/workbook.xml.rels").unwrap_or_default();
    let mut targets: HashMap<String, String> = HashMap::new();
    let mut r = quick_xml::Reader::from_str(&rels);
    loop {
        match r.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"Relationship" => {
                if let (Some(id), Some(t)) = (attr(&e, b"Id"), attr(&e, b"Target")) {
                    let t = t.trim_start_matches('/');
                    let t = t.strip_prefix("xl/").unwrap_or(t);
                    targets.insert(id, format!("xl/{t}"));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut sheets = Vec::new();
    let mut r = quick_xml::Reader::from_str(&workbook);
    loop {
        match r.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"sheet" => {
                if let (Some(name), Some(id)) = (attr(&e, b"name"), attr(&e, b"id")) {
                    if let Some(t) = targets.get(&id) {
                        sheets.push((name, t.clone()));
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut out = Formats::default();
    for (name, path) in sheets {
        let Some(xml) = part(&mut z, &path) else {
            continue;
        };
        let mut cells = HashMap::new();
        let mut r = quick_xml::Reader::from_str(&xml);
        loop {
            match r.read_event() {
                Ok(Event::Start(e)) | Ok(Event::Empty(e)) if e.local_name().as_ref() == b"c" => {
                    let Some(style) = attr(&e, b"s").and_then(|s| s.parse::<usize>().ok()) else {
                        continue;
                    };
                    let Some(code) = code_of(style) else { continue };
                    if let Some(pos) = attr(&e, b"r").and_then(|a| cell_ref(&a)) {
                        cells.insert(pos, code);
                    }
                }
                Ok(Event::Eof) | Err(_) => break,
                _ => {}
            }
        }
        out.sheets.insert(name, cells);
    }
    Some(out)
}

/// `B12` as (row 11, column 1).
fn cell_ref(a: &str) -> Option<(u32, u32)> {
    let letters = a.bytes().take_while(u8::is_ascii_alphabetic).count();
    if letters == 0 {
        return None;
    }
    let mut col: u32 = 0;
    for b in a[..letters].bytes() {
        col = col
            .checked_mul(26)?
            .checked_add((b.to_ascii_uppercase() - b'A' + 1) as u32)?;
    }
    let row: u32 = a[letters..].parse().ok()?;
    Some((row.checked_sub(1)?, col - 1))
}

/// Excel's built-in number formats that are not General (dates excepted: calamine reads them).
fn builtin(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        5 => "$#,##0_);($#,##0)",
        6 => "$#,##0_);[Red]($#,##0)",
        7 => "$#,##0.00_);($#,##0.00)",
        8 => "$#,##0.00_);[Red]($#,##0.00)",
        9 => "0%",
        10 => "0.00%",
        11 => "0.00E+00",
        14 => "m/d/yyyy",
        15 => "d-mmm-yy",
        16 => "d-mmm",
        17 => "mmm-yy",
        18 => "h:mm AM/PM",
        19 => "h:mm:ss AM/PM",
        20 => "h:mm",
        21 => "h:mm:ss",
        22 => "m/d/yyyy h:mm",
        37 => "#,##0 ;(#,##0)",
        38 => "#,##0 ;[Red](#,##0)",
        39 => "#,##0.00;(#,##0.00)",
        40 => "#,##0.00;[Red](#,##0.00)",
        45 => "mm:ss",
        46 => "[h]:mm:ss",
        47 => "mmss.0",
        48 => "##0.0E+0",
        _ => return None,
    })
}

/// The sections of a format code (`positive;negative;zero;text`), split outside quotes.
fn sections(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in code.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                out.push(&code[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&code[start..]);
    out
}

/// One piece of a format section: literal text, or the number's placeholders.
enum Piece {
    Lit(String),
    Num(String),
}

fn pieces(section: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut lit = String::new();
    let mut num = String::new();
    let mut chars = section.chars().peekable();
    let flush_lit = |lit: &mut String, out: &mut Vec<Piece>| {
        if !lit.is_empty() {
            out.push(Piece::Lit(std::mem::take(lit)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    lit.push(q);
                }
            }
            '\\' => lit.extend(chars.next()),
            // `_x` leaves the width of x: a space; `*x` fills the cell with x: nothing.
            '_' => {
                chars.next();
                lit.push(' ');
            }
            '*' => {
                chars.next();
            }
            '[' => {
                let mut inner = String::new();
                for q in chars.by_ref() {
                    if q == ']' {
                        break;
                    }
                    inner.push(q);
                }
                // `[$€-407]` is a currency symbol; colours and conditions show nothing.
                if let Some(cur) = inner.strip_prefix('$') {
                    lit.push_str(cur.split('-').next().unwrap_or(""));
                }
            }
            '0' | '#' | '?' | '.' | ',' | 'E' | 'e' | '+' | '-'
                if !num.is_empty() || matches!(c, '0' | '#' | '?' | '.') =>
            {
                // `+`/`-` belong to the number only after an exponent.
                if matches!(c, '+' | '-') && !num.ends_with(['E', 'e']) {
                    flush_num(&mut num, &mut out);
                    lit.push(c);
                    continue;
                }
                flush_lit(&mut lit, &mut out);
                num.push(c);
            }
            _ => {
                flush_num(&mut num, &mut out);
                lit.push(c);
            }
        }
    }
    flush_num(&mut num, &mut out);
    flush_lit(&mut lit, &mut out);
    out
}

fn flush_num(num: &mut String, out: &mut Vec<Piece>) {
    if !num.is_empty() {
        out.push(Piece::Num(std::mem::take(num)));
    }
}

fn is_date_code(section: &str) -> bool {
    let mut quoted = false;
    let mut bracket = false;
    for c in section.chars() {
        match c {
            '"' => quoted = !quoted,
            '[' => bracket = true,
            ']' => bracket = false,
            'y' | 'Y' | 'd' | 'D' | 'h' | 'H' | 's' | 'S' | 'm' | 'M' if !quoted && !bracket => {
                return true
            }
            _ => {}
        }
    }
    false
}

/// `value` as the format `code` shows it; `None` for General, text and date formats (dates
/// are calamine's), and for anything this does not follow.
pub fn show(value: f64, code: &str) -> Option<String> {
    if !value.is_finite() {
        return None;
    }
    let secs = sections(code);
    let (section, value, signed) = match secs.as_slice() {
        [pos, neg, ..] if value < 0.0 => (*neg, -value, false),
        [_, _, zero, ..] if value == 0.0 => (*zero, value, true),
        [first, ..] => (*first, value, true),
        [] => return None,
    };
    let lower = section.to_ascii_lowercase();
    if lower.trim() == "general" || lower.trim() == "@" || is_date_code(section) {
        return None;
    }
    let parts = pieces(section);
    let nums: Vec<&String> = parts
        .iter()
        .filter_map(|p| match p {
            Piece::Num(n) => Some(n),
            _ => None,
        })
        .collect();
    if nums.len() != 1 {
        return None;
    }
    let pattern = nums[0];
    let percent = parts
        .iter()
        .any(|p| matches!(p, Piece::Lit(l) if l.contains('%')));
    // The sign is written apart, before the first piece.
    let mut v = if percent {
        value.abs() * 100.0
    } else {
        value.abs()
    };
    let body = if let Some(e) = pattern.find(['E', 'e']) {
        let mant = &pattern[..e];
        let decimals = mant.split_once('.').map_or(0, |(_, d)| d.len());
        let s = format!("{v:.decimals$E}");
        let (m, x) = s.split_once('E')?;
        let x: i32 = x.parse().ok()?;
        let digits = pattern[e + 1..].trim_start_matches(['+', '-']).len().max(1);
        let sign = if x < 0 { "-" } else { "+" };
        format!("{m}E{sign}{:0digits$}", x.abs())
    } else {
        // Commas after the last digit placeholder scale by a thousand each.
        let trailing = pattern.len() - pattern.trim_end_matches(',').len();
        for _ in 0..trailing {
            v /= 1000.0;
        }
        let pattern = pattern.trim_end_matches(',');
        let (int_pat, dec_pat) = pattern.split_once('.').unwrap_or((pattern, ""));
        let decimals = dec_pat
            .chars()
            .filter(|c| matches!(c, '0' | '#' | '?'))
            .count();
        let min_dec = dec_pat.chars().filter(|&c| c == '0').count();
        let grouped = int_pat.contains(',');
        let min_int = int_pat.chars().filter(|&c| c == '0').count();
        let s = format!("{v:.decimals$}");
        let (int, dec) = s.split_once('.').unwrap_or((&s, ""));
        let mut dec = dec.to_string();
        while dec.len() > min_dec && dec.ends_with('0') {
            dec.pop();
        }
        let int = if int == "0" && min_int == 0 { "" } else { int };
        let mut int = format!("{int:0>min_int$}");
        if grouped {
            int = group(&int);
        }
        if dec.is_empty() {
            if dec_pat.is_empty() || min_dec == 0 && !pattern.ends_with('.') {
                int
            } else {
                format!("{int}.")
            }
        } else {
            format!("{int}.{dec}")
        }
    };
    let mut out = String::new();
    if signed && value < 0.0 {
        out.push('-');
    }
    for p in &parts {
        match p {
            Piece::Lit(l) => out.push_str(l),
            Piece::Num(_) => out.push_str(&body),
        }
    }
    Some(out.trim().to_string())
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Monday = 0, from the proleptic Gregorian date.
fn weekday(y: i64, m: i64, d: i64) -> usize {
    let (y, m) = if m <= 2 { (y - 1, m + 12) } else { (y, m) };
    let days = 365 * y + y / 4 - y / 100 + y / 400 + (153 * (m - 3) + 2) / 5 + d - 307;
    days.rem_euclid(7) as usize
}

/// A date and time as the date format `code` shows it (`m/d/yyyy`, `d-mmm-yy`,
/// `dddd, mmmm d, yyyy h:mm AM/PM`); `None` when the code is not a date format.
pub fn show_date(code: &str, when: (u16, u8, u8, u8, u8, u8)) -> Option<String> {
    let h = when.3;
    let section = sections(code).into_iter().next()?;
    if !is_date_code(section) {
        return None;
    }
    let lower = section.to_ascii_lowercase();
    let twelve = lower.contains("am/pm") || lower.contains("a/p");
    let chars: Vec<char> = section.chars().collect();
    let lchars: Vec<char> = chars.iter().map(|c| c.to_ascii_lowercase()).collect();
    let at = |i: usize, word: &str| {
        let w: Vec<char> = word.chars().collect();
        lchars.get(i..i + w.len()) == Some(&w[..])
    };
    let mut out = String::new();
    let mut i = 0;
    let mut last_was_hour = false;
    while i < chars.len() {
        let c = chars[i];
        let lc = c.to_ascii_lowercase();
        let run = chars[i..]
            .iter()
            .take_while(|x| x.to_ascii_lowercase() == lc)
            .count();
        match lc {
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    out.push(chars[i]);
                    i += 1;
                }
                i += 1;
                continue;
            }
            '\\' => {
                if let Some(n) = chars.get(i + 1) {
                    out.push(*n);
                }
                i += 2;
                continue;
            }
            '[' => {
                let close = chars[i..]
                    .iter()
                    .position(|&x| x == ']')
                    .map_or(chars.len(), |p| i + p);
                let inner: String = chars[i + 1..close.min(chars.len())].iter().collect();
                // `[h]` is elapsed hours; locale and colour tags show nothing.
                if inner.eq_ignore_ascii_case("h") || inner.eq_ignore_ascii_case("hh") {
                    out.push_str(&h.to_string());
                }
                i = close + 1;
                continue;
            }
            '_' | '*' => {
                i += 2;
                continue;
            }
            'a' if at(i, "am/pm") || at(i, "a/p") => {
                let long = at(i, "am/pm");
                out.push_str(match (h >= 12, long) {
                    (false, true) => "AM",
                    (true, true) => "PM",
                    (false, false) => "A",
                    (true, false) => "P",
                });
                i += if long { 5 } else { 3 };
                continue;
            }
            'y' | 'm' | 'd' | 'h' | 's' => {
                // Minutes after an hour or before seconds; the month otherwise.
                let minutes = lc == 'm'
                    && run <= 2
                    && (last_was_hour
                        || chars[i + run..]
                            .iter()
                            .find(|x| x.is_ascii_alphabetic())
                            .is_some_and(|x| x.eq_ignore_ascii_case(&'s')));
                out.push_str(&date_field(lc, run, minutes, twelve, when));
            }
            _ => {
                out.push(c);
                i += 1;
                continue;
            }
        }
        last_was_hour = lc == 'h';
        i += run;
    }
    Some(out.trim().to_string())
}

/// One field of a date format: `run` letters `lc` (`yyyy`, `mmm`, `dd`, `h`, `ss`), an `m`
/// run being minutes when `minutes` holds; hours on a 12-hour clock when `twelve` does.
fn date_field(
    lc: char,
    run: usize,
    minutes: bool,
    twelve: bool,
    (y, mo, d, h, mi, sec): (u16, u8, u8, u8, u8, u8),
) -> String {
    match lc {
        'y' => {
            if run <= 2 {
                format!("{:02}", y % 100)
            } else {
                format!("{y:04}")
            }
        }
        'm' if minutes => {
            if run == 2 {
                format!("{mi:02}")
            } else {
                mi.to_string()
            }
        }
        'm' => {
            let name = MONTHS.get(mo as usize - 1).copied().unwrap_or("");
            match run {
                1 => mo.to_string(),
                2 => format!("{mo:02}"),
                3 => name[..3.min(name.len())].to_string(),
                4 => name.to_string(),
                _ => name[..1.min(name.len())].to_string(),
            }
        }
        'd' => {
            let day = DAYS[weekday(y as i64, mo as i64, d as i64)];
            match run {
                1 => d.to_string(),
                2 => format!("{d:02}"),
                3 => day[..3].to_string(),
                _ => day.to_string(),
            }
        }
        'h' => {
            let hh = if twelve {
                match h % 12 {
                    0 => 12,
                    x => x,
                }
            } else {
                h
            };
            if run >= 2 {
                format!("{hh:02}")
            } else {
                hh.to_string()
            }
        }
        _ => {
            if run >= 2 {
                format!("{sec:02}")
            } else {
                sec.to_string()
            }
        }
    }
}

fn group(int: &str) -> String {
    let digits: Vec<char> = int.chars().collect();
    let mut out = String::new();
    for (i, c) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(*c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_show_what_the_sheet_shows() {
        let s = |v, c| show(v, c).unwrap_or_else(|| "none".into());
        assert_eq!(s(1234.56, "\"$\"#,##0.00"), "$1,234.56");
        assert_eq!(s(1234.5, "$#,##0.00_);($#,##0.00)"), "$1,234.50");
        assert_eq!(s(-1234.5, "$#,##0.00_);($#,##0.00)"), "($1,234.50)");
        assert_eq!(s(-1234.5, "#,##0.00"), "-1,234.50");
        assert_eq!(s(0.125, "0.0%"), "12.5%");
        assert_eq!(s(0.5, "0%"), "50%");
        assert_eq!(s(1234567.0, "#,##0"), "1,234,567");
        assert_eq!(s(12.0, "0.00"), "12.00");
        assert_eq!(s(1500.0, "[$€-407] #,##0.00"), "€ 1,500.00");
        assert_eq!(s(1234567.0, "#,##0,\"K\""), "1,235K");
        assert_eq!(s(12345.678, "0.00E+00"), "1.23E+04");
        assert_eq!(s(3.0, "General"), "none");
        assert_eq!(s(45000.0, "m/d/yyyy"), "none");
        assert_eq!(cell_ref("B12"), Some((11, 1)));
        let t = (2024, 3, 7, 9, 14, 5);
        assert_eq!(show_date("m/d/yyyy", t).unwrap(), "3/7/2024");
        assert_eq!(show_date("d-mmm-yy", t).unwrap(), "7-Mar-24");
        assert_eq!(
            show_date("dddd, mmmm d, yyyy h:mm AM/PM", t).unwrap(),
            "Thursday, March 7, 2024 9:14 AM"
        );
        assert_eq!(
            show_date("yyyy-mm-dd hh:mm:ss", t).unwrap(),
            "2024-03-07 09:14:05"
        );
        assert_eq!(show_date("0.00", t), None);
        assert_eq!(cell_ref("AA1"), Some((0, 26)));
    }
}
