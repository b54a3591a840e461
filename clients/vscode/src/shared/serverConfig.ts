/**
 * Turning the extension's settings into a server launch and the server's initializationOptions.
 * Pure functions over plain objects, so they are unit-tested without VS Code.
 */
import * as path from "node:path";

export type LlmBackend = "auto" | "extractive" | "llamacpp" | "transformers" | "openai";

/** The `gmprep.*` settings, as VS Code hands them over. */
export interface GmprepConfig {
  serverCommand: string[];
  serverPython: string;
  storeDir: string;
  books: string[];
  notesDir: string;
  llm: { backend: LlmBackend; modelPath: string; url: string; model: string; apiKey: string };
  searchRerank: boolean;
  /** Hover controls (docs/hover.md): empty values leave the workspace's gmprep.toml in charge. */
  hover: { strictness: HoverStrictness; ignoreWords: string[]; aliases: Record<string, string> };
}

/** "" = not set here (the workspace's gmprep.toml, else "normal"). */
export type HoverStrictness = "" | "loose" | "normal" | "strict";

export interface ServerLaunch {
  command: string;
  args: string[];
  /** The command line as one string, for messages. */
  display: string;
  /** The interpreter, when the launch is `<python> -m gmprep lsp` (used to diagnose a failed start). */
  python: string | null;
}

export interface Environment {
  workspaceFolder: string | undefined;
  home: string;
  platform: NodeJS.Platform;
  exists: (file: string) => boolean;
}

/** Replace `${workspaceFolder}`, `${userHome}` and a leading `~` in a settings path. */
export function expandPath(value: string, env: Environment): string {
  let out = value.trim();
  if (out === "") return out;
  out = out.replace(/\$\{userHome\}/g, env.home);
  if (env.workspaceFolder !== undefined) out = out.replace(/\$\{workspaceFolder\}/g, env.workspaceFolder);
  if (out === "~" || out.startsWith("~/")) out = env.home + out.slice(1);
  return out;
}

/** A settings path made absolute against the workspace folder (left relative when there is none). */
export function absolutePath(value: string, env: Environment): string {
  const expanded = expandPath(value, env);
  if (expanded === "" || path.isAbsolute(expanded) || env.workspaceFolder === undefined) return expanded;
  return path.join(env.workspaceFolder, expanded);
}

function quoteArg(arg: string): string {
  return /[\s"']/.test(arg) ? JSON.stringify(arg) : arg;
}

/** The interpreter used when `gmprep.server.python` is empty: the workspace's venv, else python3 on PATH. */
export function defaultPython(env: Environment): string {
  if (env.workspaceFolder !== undefined) {
    const venv =
      env.platform === "win32"
        ? path.join(env.workspaceFolder, ".venv", "Scripts", "python.exe")
        : path.join(env.workspaceFolder, ".venv", "bin", "python");
    if (env.exists(venv)) return venv;
  }
  return env.platform === "win32" ? "python" : "python3";
}

/**
 * How to start the server: `gmprep.server.command` when set, else `<python> -m gmprep lsp`.
 * vscode-languageclient appends `--stdio` itself (the server accepts it).
 */
export function resolveServerLaunch(cfg: GmprepConfig, env: Environment): ServerLaunch {
  const custom = cfg.serverCommand.map((a) => a.trim()).filter((a) => a !== "");
  if (custom.length > 0) {
    const [command, ...args] = custom.map((a) => expandPath(a, env));
    const cmd = command ?? "";
    const isPythonModule = args[0] === "-m" && args[1] === "gmprep";
    return { command: cmd, args, display: [cmd, ...args].map(quoteArg).join(" "), python: isPythonModule ? cmd : null };
  }
  const python = cfg.serverPython.trim() !== "" ? absolutePath(cfg.serverPython, env) : defaultPython(env);
  const args = ["-m", "gmprep", "lsp"];
  return { command: python, args, display: [python, ...args].map(quoteArg).join(" "), python };
}

/**
 * initializationOptions for the server, keyed as docs/protocol.md says (camelCase Settings keys).
 * Empty settings are left out so the workspace's gmprep.toml and the server's defaults still apply.
 */
export function buildInitializationOptions(cfg: GmprepConfig, env: Environment): Record<string, unknown> {
  const opts: Record<string, unknown> = {};
  const store = absolutePath(cfg.storeDir, env);
  if (store !== "") opts["storeDir"] = store;
  const books = cfg.books.map((b) => b.trim()).filter((b) => b !== "");
  if (books.length > 0) opts["books"] = books;
  if (cfg.notesDir.trim() !== "") opts["notesDir"] = expandPath(cfg.notesDir, env);
  const llm: Record<string, unknown> = { backend: cfg.llm.backend };
  if (cfg.llm.modelPath.trim() !== "") llm["modelPath"] = absolutePath(cfg.llm.modelPath, env);
  if (cfg.llm.url.trim() !== "") llm["url"] = cfg.llm.url.trim();
  if (cfg.llm.model.trim() !== "") llm["model"] = cfg.llm.model.trim();
  if (cfg.llm.apiKey !== "") llm["apiKey"] = cfg.llm.apiKey;
  opts["llm"] = llm;
  opts["search"] = { rerank: cfg.searchRerank };
  const hover: Record<string, unknown> = {};
  if (cfg.hover.strictness !== "") hover["strictness"] = cfg.hover.strictness;
  const ignore = cfg.hover.ignoreWords.map((w) => w.trim()).filter((w) => w !== "");
  if (ignore.length > 0) hover["ignoreWords"] = ignore;
  const aliases = Object.fromEntries(
    Object.entries(cfg.hover.aliases)
      .map(([k, v]) => [k.trim(), typeof v === "string" ? v.trim() : ""] as const)
      .filter(([k, v]) => k !== "" && v !== ""),
  );
  if (Object.keys(aliases).length > 0) hover["aliases"] = aliases;
  if (Object.keys(hover).length > 0) opts["hover"] = hover;
  return opts;
}

/** Problems with a backend choice that the user should fix in settings (empty when fine). */
export function configProblems(cfg: GmprepConfig): string[] {
  const problems: string[] = [];
  const { backend, modelPath, url } = cfg.llm;
  // llamacpp without a path runs the installed default model (`gmprep model install`); transformers needs a folder.
  if (backend === "transformers" && modelPath.trim() === "") {
    problems.push(`gmprep.llm.backend is "${backend}" but gmprep.llm.modelPath is empty.`);
  }
  if (backend === "openai" && url.trim() === "") {
    problems.push('gmprep.llm.backend is "openai" but gmprep.llm.url is empty.');
  }
  return problems;
}
