//! The load files a review platform imports a volume by: a Concordance `.dat` (fields between
//! `þ` quotes, separated by ASCII 20, a newline inside a field written `®`) and an Opticon
//! `.opt` (one line per page image: `ImageKey,Volume,Path,DocBreak,BoxBreak,FolderBreak,
//! PageCount`); each with a reader, used to check what was written.

/// Concordance's field separator (ASCII 20), quote (þ) and in-field newline (®).
pub const DELIM: char = '\u{14}';
pub const QUOTE: char = 'þ';
pub const NEWLINE: char = '®';

fn field(v: &str) -> String {
    let v = v
        .replace("\r\n", "\n")
        .replace(['\r', '\n'], &NEWLINE.to_string())
        .replace(QUOTE, &format!("{QUOTE}{QUOTE}"));
    format!("{QUOTE}{v}{QUOTE}")
}

/// The `.dat`: a UTF-8 byte-order mark, the header row, then one row per document.
pub fn dat(fields: &[String], rows: &[Vec<String>]) -> String {
    let mut out = String::from('\u{FEFF}');
    let line = |vals: &mut dyn Iterator<Item = &str>| {
        vals.map(field).collect::<Vec<_>>().join(&DELIM.to_string())
    };
    out.push_str(&line(&mut fields.iter().map(String::as_str)));
    out.push_str("\r\n");
    for r in rows {
        out.push_str(&line(&mut r.iter().map(String::as_str)));
        out.push_str("\r\n");
    }
    out
}

/// Reads a `.dat` back: its header and rows, or what is wrong with it.
pub fn parse_dat(text: &str) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let mut rows = Vec::new();
    for (n, line) in text.split("\r\n").enumerate() {
        if line.is_empty() {
            continue;
        }
        let mut vals = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars().peekable();
        let mut inside = false;
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match c {
                QUOTE if inside && chars.peek() == Some(&QUOTE) => {
                    chars.next();
                    cur.push(QUOTE);
                }
                QUOTE => {
                    inside = !inside;
                    quoted = true;
                }
                DELIM if !inside => {
                    if !quoted {
                        return Err(format!("line {}: a field without þ quotes", n + 1));
                    }
                    vals.push(std::mem::take(&mut cur).replace(NEWLINE, "\n"));
                    quoted = false;
                }
                c => cur.push(c),
            }
        }
        if inside || !quoted {
            return Err(format!("line {}: an unclosed or missing þ quote", n + 1));
        }
        vals.push(cur.replace(NEWLINE, "\n"));
        rows.push(vals);
    }
    let mut it = rows.into_iter();
    let header = it.next().ok_or("the file is empty")?;
    let rows: Vec<Vec<String>> = it.collect();
    if let Some((i, r)) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() != header.len())
    {
        return Err(format!(
            "row {} has {} fields, the header {}",
            i + 1,
            r.len(),
            header.len()
        ));
    }
    Ok((header, rows))
}

/// One line of the `.opt`.
#[derive(Clone, Debug, PartialEq)]
pub struct OptLine {
    pub key: String,
    pub volume: String,
    pub path: String,
    pub doc_break: bool,
    pub pages: Option<usize>,
}

pub fn opt(lines: &[OptLine]) -> String {
    let mut out = String::new();
    for l in lines {
        out.push_str(&format!(
            "{},{},{},{},,,{}\r\n",
            l.key,
            l.volume,
            l.path,
            if l.doc_break { "Y" } else { "" },
            l.pages.map(|p| p.to_string()).unwrap_or_default()
        ));
    }
    out
}

pub fn parse_opt(text: &str) -> Result<Vec<OptLine>, String> {
    let mut out = Vec::new();
    for (n, line) in text.split("\r\n").enumerate() {
        if line.is_empty() {
            continue;
        }
        let c: Vec<&str> = line.split(',').collect();
        if c.len() != 7 {
            return Err(format!("line {}: {} fields, not 7", n + 1, c.len()));
        }
        let pages = match c[6] {
            "" => None,
            p => Some(
                p.parse()
                    .map_err(|_| format!("line {}: page count `{p}`", n + 1))?,
            ),
        };
        out.push(OptLine {
            key: c[0].into(),
            volume: c[1].into(),
            path: c[2].into(),
            doc_break: match c[3] {
                "Y" => true,
                "" => false,
                x => return Err(format!("line {}: DocBreak `{x}`", n + 1)),
            },
            pages,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dat_reads_back_with_newlines_and_quotes_in_fields() {
        let fields = vec!["BEGBATES".to_string(), "SUBJECT".to_string()];
        let rows = vec![vec!["H0001".to_string(), "two\nlines þ and".to_string()]];
        let text = dat(&fields, &rows);
        assert!(text.contains("®"));
        assert!(text.contains('\u{14}'));
        let (h, r) = parse_dat(&text).unwrap();
        assert_eq!(h, fields);
        assert_eq!(r, rows);
        assert!(parse_dat("þaþ\u{14}b\r\n").is_err());
    }

    #[test]
    fn an_opt_reads_back() {
        let lines = vec![
            OptLine {
                key: "H1".into(),
                volume: "VOL001".into(),
                path: "IMAGES\\H1.pdf".into(),
                doc_break: true,
                pages: Some(2),
            },
            OptLine {
                key: "H2".into(),
                volume: "VOL001".into(),
                path: "IMAGES\\H2.pdf".into(),
                doc_break: false,
                pages: None,
            },
        ];
        let text = opt(&lines);
        assert_eq!(
            text.lines().next().unwrap(),
            "H1,VOL001,IMAGES\\H1.pdf,Y,,,2"
        );
        assert_eq!(parse_opt(&text).unwrap(), lines);
    }
}
