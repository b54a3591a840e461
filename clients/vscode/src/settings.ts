/**
 * Reading the `gmprep.*` settings from VS Code into the plain shapes of shared/serverConfig.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as vscode from "vscode";
import type { Environment, GmprepConfig, HoverStrictness, LlmBackend } from "./shared/serverConfig.js";

/** The current `gmprep.*` settings (resource-less: one server serves the whole window). */
export function readConfig(): GmprepConfig {
  const c = vscode.workspace.getConfiguration("gmprep");
  return {
    serverCommand: c.get<string[]>("server.command", []),
    serverPython: c.get<string>("server.python", ""),
    storeDir: c.get<string>("storeDir", ""),
    books: c.get<string[]>("books", []),
    notesDir: c.get<string>("notesDir", ""),
    llm: {
      backend: c.get<LlmBackend>("llm.backend", "auto"),
      modelPath: c.get<string>("llm.modelPath", ""),
      url: c.get<string>("llm.url", ""),
      model: c.get<string>("llm.model", ""),
      apiKey: c.get<string>("llm.apiKey", ""),
    },
    searchRerank: c.get<boolean>("search.rerank", true),
    hover: {
      strictness: c.get<HoverStrictness>("hover.strictness", ""),
      ignoreWords: c.get<string[]>("hover.ignoreWords", []),
      aliases: c.get<Record<string, string>>("hover.aliases", {}),
    },
  };
}

/** Where relative settings paths are anchored, and how to probe the file system. */
export function currentEnvironment(): Environment {
  return {
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    home: os.homedir(),
    platform: process.platform,
    exists: (file) => fs.existsSync(file),
  };
}
