//! `bates`, `merge` and `text`: exhibit work on the CPU.

use super::args::BatesArgs;
use super::output::{exit, print_out};

pub(super) fn cmd_bates(a: BatesArgs) -> u8 {
    use crate::exhibits::bates;
    let opts = match bates_options(&a) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let (out, inputs) = (a.out, a.inputs);
    match bates::stamp_files(&inputs, &out, &opts) {
        Ok(map) => {
            // What had to be repaired in an input before it could be stamped, once a file.
            let mut said = std::collections::BTreeSet::new();
            for s in &map {
                if let Some(r) = &s.repaired {
                    if said.insert(s.file.clone()) {
                        eprintln!("note: `{}`: {r}", s.file);
                    }
                }
            }
            let first = map.first().map_or("", |s| s.bates.as_str());
            let last = map.last().map_or("", |s| s.bates.as_str());
            eprintln!(
                "stamped {} pages in {} files: {first}–{last}; page map: {}",
                map.len(),
                inputs.len(),
                out.join("bates-map.json").display()
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

/// How `bates` stamps, from its arguments, or why they cannot be used.
pub(super) fn bates_options(a: &BatesArgs) -> Result<crate::exhibits::bates::Options, String> {
    use crate::exhibits::bates;
    let Some(position) = bates::Position::parse(&a.position) else {
        return Err(format!("`{}` is not a position; use bottom-right, bottom-center, bottom-left, top-right, top-center or top-left", a.position));
    };
    let prefix = a.prefix.clone();
    if prefix.is_empty()
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "`{prefix}` is not a usable Bates prefix; use letters, digits, `_` or `-`, e.g. SMITH"
        ));
    }
    if !(1..=12).contains(&a.width) || !(4.0..=36.0).contains(&a.font_size) {
        return Err("--width takes 1 to 12 digits and --font-size 4 to 36 points".into());
    }
    Ok(bates::Options {
        prefix,
        start: a.start,
        width: a.width,
        suffix: a.suffix.clone(),
        position,
        font_size: a.font_size,
    })
}

pub(super) fn cmd_text(
    files: &[std::path::PathBuf],
    json: bool,
    lang: String,
    dpi: u32,
    no_cache: bool,
) -> u8 {
    use crate::sources::pdf_text as text;
    let opts = crate::sources::Options {
        scan: text::Options {
            lang,
            dpi,
            cache: if no_cache {
                None
            } else {
                text::default_cache()
            },
            ocr_optional: false,
        },
    };
    #[derive(serde::Serialize)]
    struct Page<'a> {
        file: String,
        page: u32,
        bates: Option<String>,
        from: &'a str,
        text: &'a str,
        /// Why this part of the file (an email's attachment) could not be read.
        #[serde(skip_serializing_if = "Option::is_none")]
        unreadable: Option<&'a str>,
    }
    // Every file is read; each one that cannot be is named, and the others still printed.
    let mut all = Vec::new();
    let mut failed = false;
    for f in files {
        match crate::sources::read(f, &opts) {
            Ok(docs) => {
                let shown = f.display().to_string();
                for d in &docs {
                    for n in &d.notes {
                        eprintln!("note: `{}`: {n}", d.shown(&shown));
                    }
                }
                all.extend(
                    docs.into_iter()
                        .map(|d| (d.shown(&shown), d.pages, d.unreadable)),
                );
            }
            Err(e) => {
                eprintln!("error: `{}`: {e}", f.display());
                failed = true;
            }
        }
    }
    let mut out = String::new();
    let mut rows = Vec::new();
    for (file, pages, unreadable) in &all {
        // A part that could not be read is named with why; the rest of its file still is.
        if let Some(why) = unreadable {
            eprintln!("warning: `{file}` cannot be read, and is left out: {why}");
            if json {
                rows.push(Page {
                    file: file.clone(),
                    page: 0,
                    bates: None,
                    from: "unreadable",
                    text: "",
                    unreadable: Some(why),
                });
            } else {
                out.push_str(&format!("== {file} (unreadable: {why})\n"));
            }
        }
        for p in pages {
            let bates = crate::sources::stamp_of(&p.text);
            if json {
                rows.push(Page {
                    file: file.clone(),
                    page: p.page,
                    bates,
                    from: &p.from,
                    text: &p.text,
                    unreadable: None,
                });
            } else {
                out.push_str(&format!(
                    "== {file} page {}{} ({})\n{}\n",
                    p.page,
                    bates.map_or(String::new(), |b| format!(", {b}")),
                    p.from,
                    p.text.trim_end()
                ));
            }
        }
    }
    if json {
        out = serde_json::to_string(&rows).unwrap_or_default() + "\n";
    }
    let code = print_out(&out);
    if failed {
        exit::USAGE
    } else {
        code
    }
}

pub(super) fn cmd_merge(
    exhibits: &[std::path::PathBuf],
    out: &std::path::Path,
    slip_sheets: bool,
    bookmarks: bool,
    index_page: bool,
    title: String,
) -> u8 {
    let opts = crate::exhibits::merge::Options {
        slip_sheets,
        bookmarks,
        index_page,
        title,
    };
    match crate::exhibits::merge::merge(exhibits, out, &opts) {
        Ok(entries) => {
            eprintln!(
                "bound {} exhibits into {}; index: {}",
                entries.len(),
                out.display(),
                out.with_file_name(format!(
                    "{}-index.md",
                    out.file_stem()
                        .map(|s| s.to_string_lossy())
                        .unwrap_or_default()
                ))
                .display()
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}
