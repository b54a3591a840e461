/**
 * Explaining why the language server cannot start, in words a GM can act on. Checked before the client is
 * created (so the common cases get one clear message, not vscode-languageclient's connection errors too)
 * and again after a failed start.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { ServerLaunch } from "./shared/serverConfig.js";

interface ProbeResult {
  code: number | null;
  error: NodeJS.ErrnoException | null;
  stderr: string;
}

function probe(command: string, args: string[], timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let stderr = "";
    let settled = false;
    const done = (r: ProbeResult): void => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    try {
      const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], timeout: timeoutMs });
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString("utf8");
      });
      child.on("error", (error) => done({ code: null, error, stderr }));
      child.on("close", (code) => done({ code, error: null, stderr }));
    } catch (error) {
      done({ code: null, error: error as NodeJS.ErrnoException, stderr });
    }
  });
}

function lastLine(text: string): string {
  const lines = text.trim().split(/\r?\n/);
  return (lines[lines.length - 1] ?? "").trim();
}

/** Whether `command` names an executable file, directly or through PATH. */
function isExecutable(command: string): boolean {
  const candidates =
    command.includes("/") || command.includes("\\")
      ? [command]
      : (process.env["PATH"] ?? "").split(path.delimiter).filter((d) => d !== "").map((d) => path.join(d, command));
  const exts = process.platform === "win32" ? ["", ".exe", ".cmd", ".bat"] : [""];
  return candidates.some((c) =>
    exts.some((e) => {
      try {
        fs.accessSync(c + e, fs.constants.X_OK);
        return fs.statSync(c + e).isFile();
      } catch {
        return false;
      }
    }),
  );
}

const notFound = (command: string): string =>
  `"${command}" was not found. Install Python 3.11+ and gmprep, or point the setting gmprep.server.python (or gmprep.server.command) at it.`;

/**
 * What keeps `launch` from running, or null when nothing is visibly wrong: a missing program, or a Python
 * that cannot import gmprep (with its own last error line).
 */
export async function findLaunchProblem(launch: ServerLaunch): Promise<string | null> {
  if (launch.python === null) return isExecutable(launch.command) ? null : notFound(launch.command);
  const imp = await probe(launch.python, ["-c", "import gmprep.server"], 60000);
  if (imp.error !== null) {
    return imp.error.code === "ENOENT" ? notFound(launch.python) : `"${launch.python}" cannot run: ${imp.error.message}`;
  }
  if (imp.code !== 0) {
    const why = lastLine(imp.stderr);
    if (/No module named/.test(why)) {
      return `gmprep is not installed in ${launch.python} (${why}). Run "${launch.python} -m pip install gmprep" or set gmprep.server.python to the Python that has it.`;
    }
    return `${launch.python} cannot load gmprep: ${why || `exit code ${imp.code}`}`;
  }
  return null;
}

/** Why a start of `launch` failed: a launch problem if there is one, else `fallback` (the client's error). */
export async function diagnoseLaunch(launch: ServerLaunch, fallback: string): Promise<string> {
  return (await findLaunchProblem(launch)) ?? fallback;
}
