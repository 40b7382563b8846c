// Every word the language reserves (crates/syntax/src/keywords.rs, and the claim kinds a rule can
// name from the verification contract's table in crates/base/src/claim_kind.rs) gets a scope of its own from the grammar — a keyword, a declaration or
// a setting, never the plain name scope — in the place it is written.
//
//   node tests/keywords.js
"use strict";

const fs = require("fs");
const path = require("path");
const oniguruma = require("vscode-oniguruma");
const textmate = require("vscode-textmate");

const root = path.join(__dirname, "..", "..", "..");
const grammarPath = path.join(__dirname, "..", "syntaxes", "lex.tmLanguage.json");

/// The quoted words of each `pub const NAME: &[&str] = &[…];` list in a Rust file.
function lists(file) {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  const out = {};
  for (const m of text.matchAll(/pub const (\w+): &\[&str\] = &\[([^\]]*)\]/g)) {
    out[m[1]] = [...m[2].matchAll(/"([^"]+)"/g)].map((w) => w[1]);
  }
  return out;
}

/// The words rules name claim kinds by: each row of the table in crates/base/src/claim_kind.rs that allows
/// a requirement.
function claimKinds() {
  const text = fs.readFileSync(path.join(root, "crates/base/src/claim_kind.rs"), "utf8");
  return [...text.matchAll(/plural: "([^"]+)",[\s\S]*?musts: &\[([^\]]*)\]/g)]
    .filter((m) => m[2].trim() !== "")
    .map((m) => m[1]);
}

async function main() {
  const wasm = fs.readFileSync(path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => textmate.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath),
  });
  const grammar = await registry.loadGrammar("source.lex");
  const scopesOf = (line, word) => {
    const { tokens } = grammar.tokenizeLine(line, textmate.INITIAL);
    const at = line.search(new RegExp(`\\b${word}\\b`));
    const t = tokens.find((t) => t.startIndex <= at && at < t.endIndex);
    return t ? t.scopes : [];
  };
  const keywords = lists("crates/syntax/src/keywords.rs");
  const claims = claimKinds();
  if (!keywords.TOP || !keywords.POOL || claims.length === 0) throw new Error("the keyword lists were not found");
  const failures = [];
  let n = 0;
  const expect = (line, word, ok) => {
    n += 1;
    const scopes = scopesOf(line, word);
    const own = scopes.filter((s) => s !== "source.lex");
    if (!own.length || own.includes("variable.other.lex") || !own.some(ok)) {
      failures.push(`\`${word}\` in \`${line}\`: ${own.join(" ") || "no scope"}`);
    }
  };
  const declaration = (s) => /^(keyword|storage)\./.test(s);
  const setting = (s) => /^(keyword|storage|variable\.other\.property)\./.test(s);
  for (const w of keywords.TOP) {
    expect(`${w} name {`, w, declaration);
    expect(`${w}`, w, declaration);
  }
  for (const [list, words] of Object.entries(keywords)) {
    if (list === "TOP") continue;
    for (const w of words) expect(`  ${w} 1`, w, setting);
  }
  for (const w of claims) expect(`  ${w} must appear or flag`, w, setting);
  if (failures.length) {
    console.error(`${failures.length} of ${n} reserved words have no scope of their own:\n${failures.join("\n")}`);
    process.exit(1);
  }
  console.log(`ok: ${n} uses of the reserved words are scoped`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
