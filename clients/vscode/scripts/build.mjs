// Bundles the extension (node, cjs) and the chat webview (browser, iife) with esbuild.
// --production: minified, no source maps (what goes into the .vsix). --tests: bundles test/*.test.ts.
import { build } from "esbuild";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");
const common = { bundle: true, logLevel: "warning", sourcemap: !production, minify: production, absWorkingDir: root };

if (tests) {
  const files = readdirSync(join(root, "test")).filter((f) => f.endsWith(".test.ts"));
  await build({
    ...common,
    entryPoints: files.map((f) => join("test", f)),
    outdir: "out/test",
    platform: "node",
    format: "cjs",
    target: "node20",
    sourcemap: true,
    minify: false,
  });
} else {
  await Promise.all([
    build({
      ...common,
      entryPoints: ["src/extension.ts"],
      outfile: "dist/extension.js",
      platform: "node",
      format: "cjs",
      target: "node20",
      external: ["vscode"],
    }),
    build({
      ...common,
      entryPoints: ["src/webview/main.ts"],
      outfile: "dist/webview.js",
      platform: "browser",
      format: "iife",
      target: "es2022",
    }),
  ]);
}
