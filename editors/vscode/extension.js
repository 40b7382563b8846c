// The lexrun extension: a language client that starts `lexrun lsp --stdio` for .lex files.
// Everything it shows (diagnostics, hovers, definitions, completions, renames, formatting,
// semantic colours) comes from the server; the TextMate grammar colours a file before it
// answers. The program is `lexrun.path` (a path, or a name looked up on PATH); changing the
// setting restarts the server with the new program.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFile } = require("child_process");
const vscode = require("vscode");
const { LanguageClient, TransportKind, RevealOutputChannelOn } = require("vscode-languageclient/node");

let client;
let output;

/// The program `lexrun.path` names, as a file that exists, or undefined.
function locate(setting) {
  const isFile = (p) => {
    try {
      const s = fs.statSync(p);
      if (!s.isFile()) return false;
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const home = process.env.HOME || process.env.USERPROFILE || "";
  const named = setting.replace(/^~(?=$|[\\/])/, home);
  if (named.includes("/") || named.includes("\\")) return isFile(named) ? path.resolve(named) : undefined;
  const exts = process.platform === "win32" ? ["", ".exe", ".cmd"] : [""];
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const p = path.join(dir, named + ext);
      if (isFile(p)) return p;
    }
  }
  return undefined;
}

/// Whether the program serves the language as this extension starts it (`lsp --stdio`):
/// undefined when it does, else why not.
function probe(program) {
  return new Promise((resolve) => {
    execFile(program, ["lsp", "--help"], { timeout: 10000 }, (err, stdout, stderr) => {
      const text = `${stdout}${stderr}`;
      if (err && !text) resolve(`it does not run (${err.message})`);
      else if (!text.includes("--stdio")) resolve("its `lsp` command does not take `--stdio`");
      else resolve(undefined);
    });
  });
}

function setting() {
  return vscode.workspace.getConfiguration("lexrun").get("path") || "lexrun";
}

/// Starts a client for the program the setting names; one sentence to the user if it cannot.
async function start() {
  const named = setting();
  const program = locate(named);
  if (!program) {
    const where = named === "lexrun" ? "on PATH" : `at \`${named}\``;
    vscode.window.showErrorMessage(
      `lexrun: no lexrun program ${where}; install lexrun, or set \`lexrun.path\` to the lexrun program (the server starts as soon as the setting changes).`
    );
    return undefined;
  }
  const old = await probe(program);
  if (old) {
    vscode.window.showErrorMessage(
      `lexrun: \`${program}\` is too old for this extension (${old}); install a newer lexrun, or set \`lexrun.path\` to one.`
    );
    return undefined;
  }
  const server = { command: program, args: ["lsp"], transport: TransportKind.stdio };
  const c = new LanguageClient(
    "lexrun",
    "lexrun",
    { run: server, debug: server },
    {
      documentSelector: [{ language: "lex" }],
      outputChannel: output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
    }
  );
  try {
    await c.start();
  } catch (err) {
    vscode.window.showErrorMessage(
      `lexrun: \`${program} lsp\` did not start (${err && err.message ? err.message : err}); see the lexrun output panel, or set \`lexrun.path\` to a working lexrun.`
    );
    try {
      await c.dispose();
    } catch {
      // Already stopped.
    }
    return undefined;
  }
  return c;
}

let restarting = Promise.resolve();

/// Stops the running client, if any, and starts a new one from the current setting; one
/// restart at a time, in the order asked.
function restart() {
  restarting = restarting.then(restartNow, restartNow);
  return restarting;
}

async function restartNow() {
  const old = client;
  client = undefined;
  if (old) {
    try {
      await old.stop();
    } catch {
      // A server that already died cannot be stopped; the new one starts anyway.
    }
  }
  client = await start();
  return client;
}

async function activate(context) {
  output = vscode.window.createOutputChannel("lexrun");
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("lexrun.restartServer", restart),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("lexrun.path")) restart();
    })
  );
  client = await start();
  return { client: () => client, restart };
}

function deactivate() {
  const c = client;
  client = undefined;
  return c ? c.stop() : undefined;
}

module.exports = { activate, deactivate };
