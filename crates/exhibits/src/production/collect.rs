//! Collecting a production's documents: every input read into documents (an email's
//! attachments beside it, one family to a file), each with its hash and load-file metadata;
//! what becomes of each (withheld with its family, produced natively, or imaged); and the
//! legend of the most protective designation that covers it.

use globset::GlobMatcher;

use super::embedded;
use super::types::{Doc, Fate, Input, Level, Meta, Spec};
use crate::sources::{self, Kind};

pub(super) fn glob(p: &str) -> Option<GlobMatcher> {
    globset::GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

fn matches_any(globs: &[String], rel: &str, name: &str) -> bool {
    globs
        .iter()
        .filter_map(|g| glob(g))
        .any(|g| g.is_match(rel) || g.is_match(name))
}

fn email_meta(bytes: &[u8]) -> Meta {
    let Some(m) = mail_parser::MessageParser::default().parse(bytes) else {
        return Meta::default();
    };
    let addrs = |a: Option<&mail_parser::Address>| {
        a.map(|a| {
            a.iter()
                .map(|x| match (x.name(), x.address()) {
                    (Some(n), Some(e)) => format!("{n} <{e}>"),
                    (None, Some(e)) => e.to_string(),
                    (Some(n), None) => n.to_string(),
                    _ => String::new(),
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
    };
    let received = m
        .received_all()
        .find_map(|r| r.date())
        .map(|d| format!("{:04}-{:02}-{:02}", d.year, d.month, d.day))
        .unwrap_or_default();
    Meta {
        from: addrs(m.from()),
        to: addrs(m.to()),
        cc: addrs(m.cc()),
        bcc: addrs(m.bcc()),
        date: m
            .date()
            .map(|d| format!("{:04}-{:02}-{:02}", d.year, d.month, d.day))
            .unwrap_or_default(),
        subject: m.subject().unwrap_or_default().to_string(),
        time_sent: m.date().map(time_of).unwrap_or_default(),
        received,
        message_id: m.message_id().unwrap_or_default().to_string(),
    }
}

/// A message's time of day with its zone: `09:15:00 -05:00`.
fn time_of(d: &mail_parser::DateTime) -> String {
    format!(
        "{:02}:{:02}:{:02} {}{:02}:{:02}",
        d.hour,
        d.minute,
        d.second,
        if d.tz_before_gmt { '-' } else { '+' },
        d.tz_hour,
        d.tz_minute
    )
}

/// Reads every input into documents, families kept together in the order of their files:
/// each file, its attachments and the files embedded in it. A file or part that cannot be
/// read is a document too, with its `problem`: it is accounted for as an exception.
pub(super) fn collect(inputs: &[Input], spec: &Spec) -> Vec<Doc> {
    let opts = sources::Options {
        scan: sources::pdf_text::Options {
            lang: spec.lang.clone(),
            dpi: spec.dpi,
            cache: sources::pdf_text::default_cache(),
            ocr_optional: false,
        },
    };
    let mut docs = Vec::new();
    let mut sorted: Vec<&Input> = inputs.iter().collect();
    sorted.sort_by(|a, b| a.rel.cmp(&b.rel));
    sorted.dedup_by(|a, b| a.rel == b.rel);
    for (family, input) in sorted.into_iter().enumerate() {
        let base = input
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let whole = |kind: Kind, problem: String, hash: String| Doc {
            name: input.rel.clone(),
            rel: input.rel.clone(),
            path: input.path.clone(),
            file_name: base.clone(),
            kind,
            texts: Vec::new(),
            bytes: None,
            family,
            attachment: false,
            meta: Meta::default(),
            hash,
            problem: Some(problem),
            level: Level::File,
        };
        let bytes = match std::fs::read(&input.path) {
            Ok(b) => b,
            Err(e) => {
                docs.push(whole(
                    Kind::Text,
                    format!("cannot be read: {e}"),
                    String::new(),
                ));
                continue;
            }
        };
        let read = match sources::read(&input.path, &opts) {
            Ok(d) => d,
            Err(e) => {
                let kind = sources::kind::detect(&input.path, &bytes).unwrap_or(Kind::Text);
                docs.push(whole(kind, e.to_string(), hash(&bytes)));
                continue;
            }
        };
        let parent_meta = if read.first().is_some_and(|d| d.kind == Kind::Eml) {
            email_meta(&bytes)
        } else {
            Meta::default()
        };
        let kinds: Vec<(Vec<String>, Kind)> =
            read.iter().map(|d| (d.within.clone(), d.kind)).collect();
        for d in read {
            let attachment = !d.within.is_empty();
            let own = d.embedded.clone();
            let hash_of = own.as_deref().unwrap_or(&bytes);
            let meta = if attachment {
                match (&own, d.kind) {
                    (Some(b), Kind::Eml) => email_meta(b),
                    _ => Meta::default(),
                }
            } else {
                parent_meta.clone()
            };
            let level = if !attachment {
                Level::File
            } else {
                let container = &d.within[..d.within.len() - 1];
                match kinds.iter().find(|(w, _)| w.as_slice() == container) {
                    Some((_, Kind::Eml)) => Level::Attachment,
                    Some((_, Kind::Mbox)) | None => Level::Message,
                    Some(_) => Level::Embedded,
                }
            };
            let doc = Doc {
                name: d.shown(&input.rel),
                rel: input.rel.clone(),
                path: input.path.clone(),
                file_name: d.within.last().cloned().unwrap_or_else(|| base.clone()),
                kind: d.kind,
                texts: d.texts(),
                hash: hash(hash_of),
                bytes: own,
                family,
                attachment,
                meta,
                problem: d.unreadable.clone(),
                level,
            };
            let inner = match (&doc.problem, &doc.bytes) {
                (Some(_), _) => Vec::new(),
                (None, Some(b)) => embedded::files(doc.kind, b),
                (None, None) => embedded::files(doc.kind, &bytes),
            };
            let within = d.within.clone();
            docs.push(doc);
            for e in inner {
                embedded_docs(&mut docs, input, family, &within, e, &opts, 1);
            }
        }
    }
    docs
}

/// The document (and what it holds in turn) of a file embedded in another, which is
/// `within` its file.
fn embedded_docs(
    docs: &mut Vec<Doc>,
    input: &Input,
    family: usize,
    within: &[String],
    e: embedded::Embedded,
    opts: &sources::Options,
    depth: usize,
) {
    let mut path: Vec<String> = within.to_vec();
    path.push(e.name.clone());
    let shown = |p: &[String]| {
        let mut s = input.rel.clone();
        for w in p {
            s.push_str(" › ");
            s.push_str(w);
        }
        s
    };
    let bytes = match e.bytes {
        Ok(b) => b,
        Err(why) => {
            docs.push(Doc {
                name: shown(&path),
                rel: input.rel.clone(),
                path: input.path.clone(),
                file_name: e.name.clone(),
                kind: sources::kind::detect(std::path::Path::new(&e.name), b"")
                    .unwrap_or(Kind::Text),
                texts: Vec::new(),
                bytes: Some(Vec::new()),
                family,
                attachment: true,
                meta: Meta::default(),
                hash: String::new(),
                problem: Some(why),
                level: Level::Embedded,
            });
            return;
        }
    };
    let name = std::path::Path::new(&e.name);
    let read = sources::read_bytes(name, &bytes, opts, depth).unwrap_or_else(|err| {
        vec![sources::Document {
            within: Vec::new(),
            kind: sources::kind::detect(name, &bytes).unwrap_or(Kind::Text),
            pages: Vec::new(),
            embedded: None,
            unreadable: Some(err.to_string()),
            notes: Vec::new(),
        }]
    });
    for d in read {
        let mut inner_path = path.clone();
        inner_path.extend(d.within.iter().cloned());
        let own = d.embedded.clone().unwrap_or_else(|| bytes.clone());
        let doc = Doc {
            name: shown(&inner_path),
            rel: input.rel.clone(),
            path: input.path.clone(),
            file_name: inner_path.last().cloned().unwrap_or_default(),
            kind: d.kind,
            texts: d.texts(),
            hash: hash(&own),
            meta: match d.kind {
                Kind::Eml => email_meta(&own),
                _ => Meta::default(),
            },
            bytes: Some(own),
            family,
            attachment: true,
            problem: d.unreadable.clone(),
            level: if d.within.is_empty() {
                Level::Embedded
            } else {
                Level::Attachment
            },
        };
        let inner = match (&doc.problem, &doc.bytes, depth < 3) {
            (None, Some(b), true) => embedded::files(doc.kind, b),
            _ => Vec::new(),
        };
        docs.push(doc);
        for e in inner {
            embedded_docs(docs, input, family, &inner_path, e, opts, depth + 1);
        }
    }
}

fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

pub(super) fn fate(d: &Doc, spec: &Spec) -> Fate {
    // A withholding that names the file withholds its whole family; one that names a
    // member (an attachment or embedded file, by its name) withholds that member alone.
    for (i, w) in spec.withhold.iter().enumerate() {
        let family = matches_any(&w.files, &d.rel, &d.rel);
        let own = d.attachment && matches_any(&w.files, &d.name, &d.file_name);
        if family || own {
            return Fate::Withheld(i);
        }
    }
    if d.problem.is_some() {
        return Fate::Exception;
    }
    if matches_any(&spec.natives, &d.rel, &d.file_name)
        && (d.attachment || !matches!(d.kind, Kind::Eml))
    {
        // A native of an email is its attachment, not the message.
        let own_name_native = spec
            .natives
            .iter()
            .filter_map(|g| glob(g))
            .any(|g| g.is_match(&d.file_name) || (!d.attachment && g.is_match(&d.rel)));
        if own_name_native {
            return Fate::Native;
        }
    }
    Fate::Imaged
}

/// The legend of the most protective designation that covers the document.
pub(super) fn legend_of(d: &Doc, spec: &Spec) -> (String, String) {
    let mut best: Option<usize> = None;
    for (name, globs) in &spec.designate {
        if matches_any(globs, &d.rel, &d.file_name) {
            if let Some(i) = spec.legends.iter().position(|(n, _)| n == name) {
                best = Some(best.map_or(i, |b| b.max(i)));
            }
        }
    }
    best.map(|i| spec.legends[i].clone()).unwrap_or_default()
}
