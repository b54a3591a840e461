/**
 * Explaining why the language server did not start, in words a GM can act on.
 */
import { spawn } from "node:child_process";
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

/**
 * One sentence on why `launch` fails: a missing program, a Python without gmprep, or the server's own
 * last error line. Falls back to `fallback` (the client's error) when probing finds nothing wrong.
 */
export async function diagnoseLaunch(launch: ServerLaunch, fallback: string): Promise<string> {
  const version = await probe(launch.command, ["--version"], 15000);
  if (version.error && version.error.code === "ENOENT") {
    return `"${launch.command}" was not found. Install Python 3.11+ and gmprep, or point the setting gmprep.server.python (or gmprep.server.command) at it.`;
  }
  if (version.error && version.error.code === "EACCES") {
    return `"${launch.command}" is not executable.`;
  }
  if (launch.python !== null) {
    const imp = await probe(launch.python, ["-c", "import gmprep.server"], 60000);
    if (imp.code !== 0) {
      const why = lastLine(imp.stderr);
      if (/No module named/.test(why)) {
        return `gmprep is not installed in ${launch.python} (${why}). Run "${launch.python} -m pip install gmprep" or set gmprep.server.python to the Python that has it.`;
      }
      return `${launch.python} cannot load gmprep: ${why || `exit code ${imp.code}`}`;
    }
  }
  return fallback;
}
