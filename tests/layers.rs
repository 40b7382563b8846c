//! The layers and the module map in the README's Architecture section, held against the code:
//! a module that imports a place its row does not allow fails here, and so does a source file
//! the module map does not name.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn readme() -> String {
    fs::read_to_string("README.md").unwrap()
}

/// The README's table under `heading`: its rows as (first cell, second cell).
fn table(readme: &str, heading: &str) -> Vec<(String, String)> {
    let at = readme
        .find(heading)
        .unwrap_or_else(|| panic!("the README has no `{heading}`"));
    readme[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').splitn(2, '|').collect();
            (cells.len() == 2).then(|| (cells[0].trim().to_string(), cells[1].trim().to_string()))
        })
        .collect()
}

/// Names in backticks.
fn ticked(s: &str) -> Vec<String> {
    s.split('`')
        .skip(1)
        .step_by(2)
        .map(|x| x.to_string())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of `src/` belongs to.
fn place(file: &Path) -> String {
    let rel = file.strip_prefix("src").unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The top-level modules a file's code names through `crate::`, comments left out.
fn imports(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.insert(ident(rest));
            continue;
        };
        // `use crate::{a, b::{c, d}, e}`: the first name of each item at the top level.
        let (mut depth, mut expecting) = (0usize, true);
        for (j, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => expecting = true,
                c if expecting && depth == 0 && (c.is_alphanumeric() || c == '_') => {
                    out.insert(ident(&group[j..]));
                    expecting = false;
                }
                _ => {}
            }
        }
    }
    out.remove("self");
    out.remove("");
    out
}

#[test]
fn no_module_imports_a_place_its_layer_does_not_allow() {
    let readme = readme();
    let rows = table(&readme, "### Layers");
    let mut allowed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut leaves = BTreeSet::new();
    for (places, may) in &rows {
        for place in ticked(places) {
            if may.starts_with("nothing") {
                leaves.insert(place.clone());
            }
            allowed.insert(place, ticked(may).into_iter().collect());
        }
    }
    assert!(!leaves.is_empty(), "the Layers table names no leaves");
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let p = place(f);
        if p == "main" || p == "lib" {
            continue;
        }
        let Some(may) = allowed.get(&p) else {
            wrong.push(format!(
                "`{p}` ({}) has no row in the README's Layers table",
                f.display()
            ));
            continue;
        };
        let everything = may.contains("*");
        for m in imports(&fs::read_to_string(f).unwrap()) {
            if m == p || everything || leaves.contains(&m) {
                continue;
            }
            if !may.contains(&m) {
                wrong.push(format!(
                    "{} imports `{m}`, which the `{p}` layer may not use",
                    f.display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_module_map_names_every_source_file() {
    let readme = readme();
    let rows = table(&readme, "| place | owns |");
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let mut missing = Vec::new();
    for f in &files {
        let rel = f.strip_prefix("src").unwrap();
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        if rel_s == "main.rs" || rel_s == "lib.rs" {
            continue;
        }
        let top = place(f);
        let named = if rel.components().count() == 1 {
            rows.iter()
                .any(|(p, _)| ticked(p).contains(&format!("src/{rel_s}")))
        } else {
            let inner = rel_s[top.len() + 1..].to_string();
            let Some((_, owns)) = rows.iter().find(|(p, _)| {
                let t = ticked(p);
                t.contains(&format!("src/{top}/")) || t.contains(&format!("src/{top}.rs"))
            }) else {
                missing.push(format!("src/{top}/ has no row in the module map"));
                continue;
            };
            let names = ticked(owns);
            let file = inner.rsplit('/').next().unwrap().to_string();
            // A file is named by its path in the folder, by its own name, or by a folder of
            // its own named whole (`lsp/`); a folder's `mod.rs` is the folder itself.
            file == "mod.rs" && names.iter().any(|n| inner == format!("{n}mod.rs"))
                || inner == "mod.rs"
                || names.contains(&inner)
                || names.contains(&file)
                || inner
                    .match_indices('/')
                    .any(|(i, _)| names.contains(&inner[..=i].to_string()))
        };
        if !named {
            missing.push(format!("src/{rel_s}"));
        }
    }
    assert!(
        missing.is_empty(),
        "the README's module map does not name: {}",
        missing.join(", ")
    );
}

#[test]
fn imports_are_read_from_every_form() {
    let text = "use crate::a::b;\nuse crate::{c, d::e};\nuse crate::{\n    f::{g, h},\n    i,\n};\n// crate::j in a comment\nlet x = crate::k::f();\n";
    let got: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(got, ["a", "c", "d", "f", "i", "k"]);
}
