//! Collecting a production's documents: every input read into documents (an email's
//! attachments beside it, one family to a file), each with its hash and load-file metadata;
//! what becomes of each (withheld with its family, produced natively, or imaged); and the
//! legend of the most protective designation that covers it.

use globset::GlobMatcher;

use super::types::{Doc, Fate, Input, Meta, Spec};
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
    Meta {
        from: addrs(m.from()),
        to: addrs(m.to()),
        cc: addrs(m.cc()),
        date: m
            .date()
            .map(|d| format!("{:04}-{:02}-{:02}", d.year, d.month, d.day))
            .unwrap_or_default(),
        subject: m.subject().unwrap_or_default().to_string(),
    }
}

/// Reads every input into documents, families kept together in the order of their files.
pub(super) fn collect(inputs: &[Input], spec: &Spec) -> (Vec<Doc>, Vec<String>) {
    let opts = sources::Options {
        scan: sources::scan::Options {
            lang: spec.lang.clone(),
            dpi: spec.dpi,
            cache: sources::scan::default_cache(),
            ocr_optional: false,
        },
    };
    let mut docs = Vec::new();
    let mut exceptions = Vec::new();
    let mut sorted: Vec<&Input> = inputs.iter().collect();
    sorted.sort_by(|a, b| a.rel.cmp(&b.rel));
    sorted.dedup_by(|a, b| a.rel == b.rel);
    for (family, input) in sorted.into_iter().enumerate() {
        let bytes = match std::fs::read(&input.path) {
            Ok(b) => b,
            Err(e) => {
                exceptions.push(format!("`{}`: cannot be read: {e}", input.rel));
                continue;
            }
        };
        let read = match sources::read(&input.path, &opts) {
            Ok(d) => d,
            Err(e) => {
                exceptions.push(format!("`{}`: {e}", input.rel));
                continue;
            }
        };
        let parent_meta = if read.first().is_some_and(|d| d.kind == Kind::Eml) {
            email_meta(&bytes)
        } else {
            Meta::default()
        };
        let base = input
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
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
            docs.push(Doc {
                name: d.shown(&input.rel),
                rel: input.rel.clone(),
                path: input.path.clone(),
                file_name: d.within.last().cloned().unwrap_or_else(|| base.clone()),
                kind: d.kind,
                texts: d.texts(),
                hash: blake3::hash(hash_of).to_hex().to_string(),
                bytes: own,
                family,
                attachment,
                meta,
            });
        }
    }
    (docs, exceptions)
}

pub(super) fn fate(d: &Doc, spec: &Spec, docs: &[Doc]) -> Fate {
    // A family is withheld or produced whole: what its parent's file says decides.
    let parent_rel = docs
        .iter()
        .find(|x| x.family == d.family)
        .map_or(d.rel.as_str(), |x| x.rel.as_str());
    for (i, w) in spec.withhold.iter().enumerate() {
        if matches_any(&w.files, parent_rel, parent_rel) {
            return Fate::Withheld(i);
        }
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
