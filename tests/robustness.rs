//! Whatever a person (or a broken editor) writes, `check` answers with diagnostics and never
//! panics: arbitrary text, arbitrary bytes, mangled copies of the examples, and token soup.

use camino::Utf8Path;
use lexrun::check::check_bytes;
use lexrun::diagnostic::render;
use proptest::prelude::*;

const EXAMPLES: &[&str] = &[
    include_str!("../workflows/affidavit.lex"),
    include_str!("../workflows/motion.lex"),
    include_str!("../workflows/summary.lex"),
    include_str!("../workflows/exhibits.lex"),
    include_str!("../workflows/router.lex"),
    include_str!("../workflows/lib/cluster.lex"),
];

const TOKENS: &[&str] = &[
    "workflow",
    "pool",
    "model",
    "on",
    "sources",
    "stage",
    "tool",
    "runs",
    "verify",
    "against",
    "output",
    "from",
    "use",
    "std.prompts",
    "template",
    "ruleset",
    "after",
    "when",
    "not",
    "and",
    "or",
    "is",
    "empty",
    "returns",
    "stop",
    "revise",
    "until",
    "at",
    "most",
    "rounds",
    "{",
    "}",
    "(",
    ")",
    ",",
    ":",
    "==",
    ">=",
    "<",
    "x",
    "gate.grounds",
    "32k",
    "32q",
    "4 x 32 GiB",
    "7.0",
    "\"http://127.0.0.1:8081\"",
    "\"a.hbs\"",
    "\"\"\"{{evidence}}\"\"\"",
    "\"**/*.md\"",
    "bool",
    "list",
    "of",
    "record",
    "gpus",
    "vram",
    "serve",
    "llama_cpp",
    "kv",
    "q4_0",
    "flash_attn",
    "citations",
    "must",
    "appear",
    "exist",
    "match",
    "exactly",
    "block",
    "flag",
    "\n",
    " ",
    "99999999999999999999999",
    "-1",
    "//",
    "/*",
    "\"",
    "\\",
    "é",
    "\u{0}",
];

fn check(text: &[u8]) {
    let checked = check_bytes(Utf8Path::new("tests/diagnostics/fuzz.lex"), text.to_vec());
    // Rendering must not panic either, whatever the spans.
    let _ = render(&checked.diagnostics, &checked.sources, false);
    if checked.workflow.is_none() {
        assert!(
            !checked.diagnostics.is_empty(),
            "a file without a workflow must say why: {:?}",
            String::from_utf8_lossy(text)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text(s in "\\PC{0,400}") {
        check(s.as_bytes());
    }

    #[test]
    fn arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..400)) {
        check(&b);
    }

    #[test]
    fn token_soup(toks in proptest::collection::vec(0..TOKENS.len(), 0..120)) {
        let s: Vec<&str> = toks.iter().map(|i| TOKENS[*i]).collect();
        check(s.join(" ").as_bytes());
    }

    #[test]
    fn mangled_examples(
        which in 0..EXAMPLES.len(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..40, 0..TOKENS.len()), 1..6),
    ) {
        let mut text = EXAMPLES[which].as_bytes().to_vec();
        for (at, len, tok) in edits {
            let start = at.index(text.len().max(1)).min(text.len());
            let end = (start + len).min(text.len());
            text.splice(start..end, TOKENS[tok].bytes());
        }
        check(&text);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "workflow w\nstage s {{ returns {{ a: bool }} stop when {}a{} }}\n",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    check(deep.as_bytes());
    let lists = format!(
        "workflow w\nstage s {{ returns {{ a: {}bool }} }}\n",
        "list of ".repeat(5000)
    );
    check(lists.as_bytes());
    let braces = format!("workflow w\nstage s {{ x {} }}\n", "{".repeat(20000));
    check(braces.as_bytes());
}

/// Inputs the mutation fuzzer (`examples/fuzz_check.rs`) found; each once panicked.
#[test]
fn inputs_the_fuzzer_found() {
    check(include_bytes!("robustness/edge-to-no-step.lex"));
}
