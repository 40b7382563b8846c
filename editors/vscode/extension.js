// The lexrun extension: a language client that starts `lexrun lsp` for .lex files. Everything
// it shows (diagnostics, hovers, definitions, completions, renames, formatting, semantic
// colours) comes from the server; the TextMate grammar colours a file before it answers.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("lexrun").get("path") || "lexrun";
  const server = { command, args: ["lsp"], transport: TransportKind.stdio };
  client = new LanguageClient(
    "lexrun",
    "lexrun",
    { run: server, debug: server },
    { documentSelector: [{ language: "lex" }] }
  );
  context.subscriptions.push(
    vscode.commands.registerCommand("lexrun.restartServer", () => client.restart())
  );
  return client.start().catch((err) => {
    vscode.window.showErrorMessage(
      `lexrun: cannot start \`${command} lsp\` (${err.message}). Install lexrun or set lexrun.path.`
    );
  });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
