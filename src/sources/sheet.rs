//! Spreadsheets: `.xlsx`, `.xls` and `.ods` through `calamine`, `.csv` and `.tsv` as text.
//! Each sheet becomes pages of [`ROWS_PER_PAGE`] rows, every page headed by the sheet's name
//! and its first row (the column headings), cells joined with ` | `. A CSV's cells are kept
//! exactly as written. A workbook's numbers and dates are shown as the sheet shows them, in
//! their number format (`$1,250.50`, `12.5%`, `3/7/2024`; `.xlsx` only, see `numfmt`), with
//! the stored value after them (`$1,250.50 (1250.5)`, `3/7/2024 (2024-03-07)`); without a
//! format, numbers as stored (`1250.5`) and dates as `YYYY-MM-DD`.

use calamine::{Data, Reader};

use super::{kind::Kind, limits, numfmt, PageText, SourceError};

pub const ROWS_PER_PAGE: usize = 50;

/// The pages of a workbook's bytes.
pub fn workbook(bytes: &[u8], kind: Kind) -> Result<Vec<PageText>, SourceError> {
    let what = kind.describe();
    if kind != Kind::Xls {
        limits::check_zip(bytes, what)?;
    }
    let mut wb = calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes))
        .map_err(|e| damaged_or_protected(what, e))?;
    let formats = if kind == Kind::Xlsx {
        numfmt::Formats::of_xlsx(bytes)
    } else {
        numfmt::Formats::default()
    };
    let mut out = Vec::new();
    for name in wb.sheet_names() {
        let range = wb
            .worksheet_range(&name)
            .map_err(|e| damaged_or_protected(what, e))?;
        let (r0, c0) = range.start().unwrap_or((0, 0));
        let rows: Vec<Vec<String>> = range
            .rows()
            .enumerate()
            .map(|(i, r)| {
                r.iter()
                    .enumerate()
                    .map(|(j, d)| cell(d, formats.get(&name, r0 + i as u32, c0 + j as u32)))
                    .collect()
            })
            .collect();
        table(&mut out, Some(&name), rows, "sheet");
    }
    if out.is_empty() {
        return Err(SourceError::damaged(what, "it has no sheets"));
    }
    Ok(out)
}

fn damaged_or_protected(what: &'static str, e: impl std::fmt::Display) -> SourceError {
    let m = e.to_string();
    if m.to_lowercase().contains("password") || m.to_lowercase().contains("encrypt") {
        SourceError::Refused(format!(
            "a password-protected {what}: open it with its password and save an unprotected copy"
        ))
    } else {
        SourceError::damaged(what, m)
    }
}

/// A cell as the sheet shows it, with the value as stored after it in brackets when the two
/// differ (`$1,234.56 (1234.56)`), so that either form matches.
fn cell(d: &Data, format: Option<&str>) -> String {
    let raw = stored(d);
    let shown = format.and_then(|f| match d {
        Data::Float(v) => numfmt::show(*v, f),
        Data::Int(v) => numfmt::show(*v as f64, f),
        Data::DateTime(dt) if dt.is_datetime() => {
            let (y, mo, day, h, mi, s, _) = dt.to_ymd_hms_milli();
            numfmt::show_date(f, (y, mo, day, h, mi, s))
        }
        _ => None,
    });
    match shown {
        Some(s) if s != raw && !s.is_empty() => format!("{s} ({raw})"),
        _ => raw,
    }
}

/// A cell's value as stored: numbers in full, dates as `YYYY-MM-DD`, formula errors as the
/// sheet shows them (`#DIV/0!`).
fn stored(d: &Data) -> String {
    match d {
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        Data::DateTime(dt) if dt.is_datetime() => {
            let (y, mo, d, h, mi, s, _) = dt.to_ymd_hms_milli();
            if (h, mi, s) == (0, 0, 0) {
                format!("{y:04}-{mo:02}-{d:02}")
            } else {
                format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
            }
        }
        other => other.to_string(),
    }
}

/// The pages of a CSV (or, with tabs, TSV) table.
pub fn csv(text: &str) -> Result<Vec<PageText>, SourceError> {
    let first = text.lines().next().unwrap_or("");
    let delim = if first.matches('\t').count() > first.matches(',').count() {
        b'\t'
    } else if first.matches(';').count() > first.matches(',').count() {
        b';'
    } else {
        b','
    };
    let mut r = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delim)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| SourceError::damaged("CSV table", e))?;
        rows.push(rec.iter().map(str::to_string).collect());
    }
    let mut out = Vec::new();
    table(&mut out, None, rows, "csv");
    if out.is_empty() {
        out.push(PageText {
            page: 1,
            text: String::new(),
            from: "csv".into(),
        });
    }
    Ok(out)
}

/// Appends a table's pages: the header row repeated at the top of each.
fn table(out: &mut Vec<PageText>, sheet: Option<&str>, rows: Vec<Vec<String>>, from: &str) {
    let line = |r: &[String]| {
        let end = r
            .iter()
            .rposition(|c| !c.trim().is_empty())
            .map_or(0, |i| i + 1);
        r[..end].join(" | ")
    };
    let mut rows = rows
        .into_iter()
        .filter(|r| r.iter().any(|c| !c.trim().is_empty()));
    let Some(header) = rows.next() else {
        return;
    };
    let header = line(&header);
    let body: Vec<String> = rows.map(|r| line(&r)).collect();
    let chunks: Vec<&[String]> = if body.is_empty() {
        vec![&[]]
    } else {
        body.chunks(ROWS_PER_PAGE).collect()
    };
    for chunk in chunks {
        let mut text = String::new();
        if let Some(s) = sheet {
            text.push_str(&format!("Sheet: {s}\n"));
        }
        text.push_str(&header);
        text.push('\n');
        for r in chunk {
            text.push_str(r);
            text.push('\n');
        }
        out.push(PageText {
            page: out.len() as u32 + 1,
            text,
            from: from.into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_page_with_the_header_repeated_and_cells_as_written() {
        let mut text = String::from("Date,Amount,Note\n");
        for i in 0..60 {
            text.push_str(&format!(
                "03/{:02}/2024,\"$1,{i:03}.00\",paid\n",
                i % 28 + 1
            ));
        }
        let pages = csv(&text).unwrap();
        assert_eq!(pages.len(), 2);
        assert!(pages[1]
            .text
            .starts_with("Date | Amount | Note\n03/23/2024 | $1,050.00 | paid\n"));
        assert_eq!(pages[1].text.lines().count(), 11);
    }
}
