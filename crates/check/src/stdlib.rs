//! The standard library shipped inside the binary, so `use std.prompts` works wherever
//! lexrun runs. The files live in `stdlib/` at the top of the repository.

macro_rules! embed {
    ($($path:literal),* $(,)?) => {
        /// (path relative to `stdlib/`, contents)
        pub const FILES: &[(&str, &str)] = &[
            $(($path, include_str!(concat!("../../../stdlib/", $path))),)*
        ];
    };
}

embed![
    "prompts.lex",
    "verify.lex",
    "prompts/gate.hbs",
    "prompts/affidavit.hbs",
    "prompts/motion.hbs",
    "prompts/reasoning.hbs",
    "prompts/adversary.hbs",
    "prompts/finance.hbs",
    "prompts/summary.hbs",
];

/// The modules a workflow can `use`, e.g. `std.prompts`.
pub fn modules() -> impl Iterator<Item = String> {
    FILES
        .iter()
        .filter_map(|(p, _)| p.strip_suffix(".lex"))
        .filter(|p| !p.contains('/'))
        .map(|m| format!("std.{m}"))
}

/// The text of a stdlib file, by its path relative to `stdlib/`.
pub fn file(path: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

/// `std.prompts` → `prompts.lex`
pub fn module_path(module: &str) -> Option<String> {
    let rest = module.strip_prefix("std.")?;
    let path = format!("{}.lex", rest.replace('.', "/"));
    file(&path).map(|_| path)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn every_stdlib_file_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../stdlib");
        let mut on_disk = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if matches!(p.extension().and_then(|e| e.to_str()), Some("lex" | "hbs")) {
                    on_disk.push(
                        p.strip_prefix(&root)
                            .unwrap()
                            .to_string_lossy()
                            .replace('\\', "/"),
                    );
                }
            }
        }
        for f in &on_disk {
            assert!(
                super::file(f).is_some(),
                "stdlib/{f} is not embedded in src/check/stdlib.rs"
            );
        }
        assert_eq!(on_disk.len(), super::FILES.len());
    }

    #[test]
    fn modules_resolve() {
        assert_eq!(
            super::module_path("std.prompts").as_deref(),
            Some("prompts.lex")
        );
        assert!(super::module_path("std.nope").is_none());
        assert!(super::modules().any(|m| m == "std.verify"));
    }
}
