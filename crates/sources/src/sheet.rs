//! Spreadsheets: `.xlsx`, `.xls` and `.ods` through `calamine`, `.csv` and `.tsv` as text.
//! Each sheet becomes pages of [`ROWS_PER_PAGE`] rows, every page headed by the sheet's name
//! and its first row (the column headings), cells joined with ` | `. A CSV's cells are kept
//! exactly as written. A workbook's numbers and dates are shown as the sheet shows them, in
//! their number format (`$1,250.50`, `12.5%`, `3/7/2024`; `.xlsx` only, see `numfmt`), with
//! the stored value after them (`$1,250.50 (1250.5)`, `3/7/2024 (2024-03-07)`); without a
//! format, numbers as stored (`1250.5`) and dates as `YYYY-MM-DD`.

use calamine::{Data, Reader};

use super::error::SourceError;
use super::pdf_text::PageText;
use super::{kind::Kind, limits, numfmt};

pub const ROWS_PER_PAGE: usize = 50;

/// The pages of a workbook's bytes.
pub fn workbook(bytes: &[u8], kind: Kind) -> Result<Vec<PageText>, SourceError> {
    let what = kind.describe();
    if kind != Kind::Xls {
        limits::check_zip(bytes, what)?;
    }
    let shown_errors = if kind == Kind::Ods {
        ods_errors_shown(bytes)
    } else {
        None
    };
    let bytes = shown_errors.as_deref().unwrap_or(bytes);
    let mut wb =
        calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes)).map_err(|e| {
            // Told only "cannot detect the format" when every reader failed, the Excel 97-2003
            // reader is asked again for its own reason (a workbook protected by a password).
            if kind == Kind::Xls {
                if let Err(x) = calamine::open_workbook_from_rs::<calamine::Xls<_>, _>(
                    std::io::Cursor::new(bytes),
                ) {
                    return damaged_or_protected(what, x);
                }
            }
            damaged_or_protected(what, e)
        })?;
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

/// An OpenDocument sheet stores a formula's error (`Err:508`, `#DIV/0!`) as the cell's shown
/// text beside an empty stored value (`office:string-value=""`, `calcext:value-type="error"`),
/// and calamine reads the empty value. The sheet is handed to calamine with each error
/// cell's stored value dropped, so that the cell reads as the text the sheet shows. `None`
/// when the sheet has no error cell (or is not a readable zip: calamine then says why).
fn ods_errors_shown(bytes: &[u8]) -> Option<Vec<u8>> {
    use std::io::{Read, Write};
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).ok()?;
    let mut content = String::new();
    z.by_name("content.xml")
        .ok()?
        .read_to_string(&mut content)
        .ok()?;
    if !content.contains("calcext:value-type=\"error\"") {
        return None;
    }
    let cell = regex::Regex::new(r#"<table:table-cell\b[^>]*\bcalcext:value-type="error"[^>]*>"#)
        .expect("pattern");
    let stored =
        regex::Regex::new(r#"\s(?:office:(?:value|string-value|date-value|time-value|boolean-value)|office:value-type)="[^"]*""#)
            .expect("pattern");
    let fixed = cell.replace_all(&content, |c: &regex::Captures<'_>| {
        let tag = stored.replace_all(&c[0], "");
        tag.replacen(
            "<table:table-cell",
            "<table:table-cell office:value-type=\"string\"",
            1,
        )
    });
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::with_capacity(bytes.len())));
    for i in 0..z.len() {
        let mut f = z.by_index(i).ok()?;
        let name = f.name().to_string();
        let opts =
            zip::write::SimpleFileOptions::default().compression_method(if name == "mimetype" {
                zip::CompressionMethod::Stored
            } else {
                zip::CompressionMethod::Deflated
            });
        if f.is_dir() {
            continue;
        }
        out.start_file(name.as_str(), opts).ok()?;
        if name == "content.xml" {
            out.write_all(fixed.as_bytes()).ok()?;
        } else {
            std::io::copy(&mut f, &mut out).ok()?;
        }
    }
    Some(out.finish().ok()?.into_inner())
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

    fn ods(cells: &str) -> Vec<u8> {
        use std::io::Write;
        let content = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0" office:version="1.2"><office:body><office:spreadsheet><table:table table:name="Sheet1"><table:table-row><table:table-cell office:value-type="string" calcext:value-type="string"><text:p>Item</text:p></table:table-cell><table:table-cell office:value-type="string" calcext:value-type="string"><text:p>Total</text:p></table:table-cell></table:table-row><table:table-row>{cells}</table:table-row></table:table></office:spreadsheet></office:body></office:document-content>"#
        );
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        z.start_file("mimetype", stored).unwrap();
        z.write_all(b"application/vnd.oasis.opendocument.spreadsheet")
            .unwrap();
        z.start_file("content.xml", stored).unwrap();
        z.write_all(content.as_bytes()).unwrap();
        z.start_file("META-INF/manifest.xml", stored).unwrap();
        z.write_all(br#"<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>"#).unwrap();
        z.finish().unwrap().into_inner()
    }

    #[test]
    fn an_ods_formula_error_reads_as_the_sheet_shows_it() {
        let bytes = ods(
            r#"<table:table-cell office:value-type="string" calcext:value-type="string"><text:p>Rent</text:p></table:table-cell><table:table-cell table:formula="of:=SUM([.Z9&gt;])" office:value-type="string" office:string-value="" calcext:value-type="error"><text:p>Err:508</text:p></table:table-cell><table:table-cell table:formula="of:=1/0" office:value-type="float" office:value="0" calcext:value-type="error"><text:p>#DIV/0!</text:p></table:table-cell>"#,
        );
        let pages = workbook(&bytes, Kind::Ods).unwrap();
        assert!(
            pages[0].text.contains("Rent | Err:508 | #DIV/0!"),
            "{}",
            pages[0].text
        );
    }

    #[test]
    fn an_ods_without_error_cells_is_read_as_it_is() {
        let bytes = ods(
            r#"<table:table-cell office:value-type="string" calcext:value-type="string"><text:p>Rent</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="1250.5" calcext:value-type="float"><text:p>1250.50</text:p></table:table-cell>"#,
        );
        assert!(ods_errors_shown(&bytes).is_none());
        let pages = workbook(&bytes, Kind::Ods).unwrap();
        assert!(pages[0].text.contains("Rent | 1250.5"), "{}", pages[0].text);
    }

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
