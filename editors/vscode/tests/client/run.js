// Runs the extension as VS Code would, without VS Code: `extension.js` with the real
// vscode-languageclient and the stand-in `vscode` module, against the lexrun program given
// as the first argument. Exits 0 when every step holds, else 1 naming the step.
//
//   node tests/client/run.js path/to/lexrun
"use strict";

const Module = require("module");
const fs = require("fs");
const os = require("os");
const path = require("path");

const standIn = path.join(__dirname, "vscode.js");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? standIn : resolve.call(this, request, ...rest);
};

const vscode = require("vscode");
const extension = require("../../extension.js");

const lexrun = path.resolve(process.argv[2] || "lexrun");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "lexrun-client-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, test, ms = 20000) {
  const start = Date.now();
  for (;;) {
    const v = test();
    if (v) return v;
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

function last(list) {
  return list[list.length - 1] || "";
}

async function main() {
  const context = { subscriptions: [], extensionPath: path.join(__dirname, "../..") };
  const steps = [];
  const step = (name) => steps.push(name) && console.log(`- ${name}`);

  // 1. lexrun missing: one sentence saying what to do, and no crash.
  vscode.setSetting("lexrun.path", path.join(work, "missing", "lexrun"));
  const api = await extension.activate(context);
  if (api.client()) throw new Error("a client started without a program");
  const missing = last(vscode.recorded.errors);
  if (!/install lexrun, or set `lexrun.path`/.test(missing) || /undefined/.test(missing)) {
    throw new Error(`the message for a missing lexrun: ${missing}`);
  }
  step(`missing program: "${missing}"`);

  // 2. Too old: a program whose `lsp` does not take `--stdio`.
  const old = path.join(work, "old-lexrun");
  fs.writeFileSync(old, "#!/bin/sh\necho 'A language server for .lex files'\necho 'Usage: lexrun lsp'\n", { mode: 0o755 });
  const errors = vscode.recorded.errors.length;
  vscode.setSetting("lexrun.path", old);
  await until("the too-old message", () => vscode.recorded.errors.length > errors);
  const tooOld = last(vscode.recorded.errors);
  if (!/too old/.test(tooOld)) throw new Error(`the message for an old lexrun: ${tooOld}`);
  step(`old program: "${tooOld}"`);

  // 3. The setting changes to the real program: the server starts without a reload.
  vscode.setSetting("lexrun.path", lexrun);
  const client = await until("the client to run", () => api.client() && api.client().isRunning() && api.client());
  step("the setting changed: the server started");

  // 4. A document with a mistake gets its diagnostic; fixing it clears it.
  const file = path.join(work, "w.lex");
  const good = 'workflow w\npool p {\n  serve llama_cpp at "http://127.0.0.1:18411"\n}\nmodel m on p {\n  gguf "x.gguf"\n  weights 1 GiB\n  layers 2  kv_heads 4  head_dim 16\n  ctx 4k\n}\nstage s {\n  model m\n  prompt "Say hello."\n}\noutput "out.md" from s unverified\n';
  const bad = good.replace("model m\n  prompt", "model mm\n  prompt");
  fs.writeFileSync(file, bad);
  const doc = vscode.document(file, bad);
  vscode.openDocument(doc);
  const key = doc.uri.toString();
  const diags = await until("diagnostics", () => {
    const d = vscode.recorded.diagnostics.get(key);
    return d && d.length && d;
  });
  const first = diags[0];
  const code = first.code && typeof first.code === "object" ? first.code.value : first.code;
  if (code !== "E010" || first.range.start.line !== 11) {
    throw new Error(`the diagnostic: ${JSON.stringify({ code, line: first.range.start.line, message: first.message })}`);
  }
  step(`diagnostic ${code} at line ${first.range.start.line + 1}: ${first.message.split("\n")[0]}`);
  vscode.editDocument(doc, good);
  await until("the diagnostics to clear", () => (vscode.recorded.diagnostics.get(key) || [1]).length === 0);
  step("the fix cleared it");

  // 5. Hover through the client.
  const hover = await client.sendRequest("textDocument/hover", {
    textDocument: { uri: key },
    position: { line: 4, character: 6 },
  });
  if (!hover || !JSON.stringify(hover).includes("GiB")) throw new Error(`hover: ${JSON.stringify(hover)}`);
  step("hover answers with the model's memory");

  // 6. The restart command gives a running client again.
  await vscode.commands.executeCommand("lexrun.restartServer");
  await until("the restarted client", () => api.client() && api.client() !== client && api.client().isRunning());
  step("restart command: a new server runs");

  // 7. The default setting finds lexrun on PATH.
  process.env.PATH = `${path.dirname(lexrun)}${path.delimiter}${process.env.PATH}`;
  const before = api.client();
  vscode.setSetting("lexrun.path", "lexrun");
  await until("the client found on PATH", () => api.client() && api.client() !== before && api.client().isRunning());
  step("`lexrun` on PATH: the server started");

  // 8. Deactivating stops the server.
  await extension.deactivate();
  step("deactivated");
  fs.rmSync(work, { recursive: true, force: true });
}

const timer = setTimeout(() => {
  console.error("FAILED: the client test took longer than 60 s");
  process.exit(1);
}, 60000);

main().then(
  () => {
    clearTimeout(timer);
    console.log("ok");
    process.exit(0);
  },
  (e) => {
    clearTimeout(timer);
    console.error(`FAILED: ${e && e.stack ? e.stack : e}`);
    console.error(vscode.recorded.output.join("").slice(-3000));
    process.exit(1);
  }
);
