import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  buildInitializationOptions,
  configProblems,
  type Environment,
  type GmprepConfig,
  resolveServerLaunch,
} from "../src/shared/serverConfig.js";

function config(over: Partial<GmprepConfig> = {}, llm: Partial<GmprepConfig["llm"]> = {}): GmprepConfig {
  return {
    serverCommand: [],
    serverPython: "",
    storeDir: "",
    books: [],
    notesDir: "",
    searchRerank: true,
    hover: { strictness: "", ignoreWords: [], aliases: {} },
    ...over,
    llm: { backend: "extractive", modelPath: "", url: "", model: "", apiKey: "", ...llm },
  };
}

function env(existing: string[] = [], workspaceFolder: string | undefined = "/ws"): Environment {
  return { workspaceFolder, home: "/home/gm", platform: "linux", exists: (f) => existing.includes(f) };
}

describe("resolveServerLaunch", () => {
  it("defaults to python3 -m gmprep lsp", () => {
    const l = resolveServerLaunch(config(), env());
    assert.equal(l.command, "python3");
    assert.deepEqual(l.args, ["-m", "gmprep", "lsp"]);
    assert.equal(l.python, "python3");
  });

  it("prefers the workspace's .venv when it exists", () => {
    const l = resolveServerLaunch(config(), env(["/ws/.venv/bin/python"]));
    assert.equal(l.command, "/ws/.venv/bin/python");
  });

  it("uses gmprep.server.python, expanding ~ and ${workspaceFolder}", () => {
    assert.equal(resolveServerLaunch(config({ serverPython: "~/venvs/gm/bin/python" }), env()).command, "/home/gm/venvs/gm/bin/python");
    assert.equal(resolveServerLaunch(config({ serverPython: "${workspaceFolder}/py/bin/python" }), env()).command, "/ws/py/bin/python");
    assert.equal(resolveServerLaunch(config({ serverPython: "tools/python" }), env()).command, "/ws/tools/python");
  });

  it("uses gmprep.server.command verbatim when set", () => {
    const l = resolveServerLaunch(config({ serverCommand: ["/opt/gm/bin/gmprep", "lsp", " "], serverPython: "ignored" }), env());
    assert.equal(l.command, "/opt/gm/bin/gmprep");
    assert.deepEqual(l.args, ["lsp"]);
    assert.equal(l.python, null);
    assert.equal(l.display, "/opt/gm/bin/gmprep lsp");
  });

  it("recognises a python -m gmprep custom command for diagnosis and quotes spaces for display", () => {
    const l = resolveServerLaunch(config({ serverCommand: ["/My Py/python", "-m", "gmprep", "lsp"] }), env());
    assert.equal(l.python, "/My Py/python");
    assert.equal(l.display, '"/My Py/python" -m gmprep lsp');
  });
});

describe("buildInitializationOptions", () => {
  it("sends only the backend and rerank when nothing else is set", () => {
    assert.deepEqual(buildInitializationOptions(config(), env()), { llm: { backend: "extractive" }, search: { rerank: true } });
  });

  it("sends every set value, with paths made absolute against the workspace", () => {
    const opts = buildInitializationOptions(
      config(
        { storeDir: ".gmprep-store", books: ["Pathfinder Player Core", " "], notesDir: "house-rules", searchRerank: false },
        { backend: "openai", url: " http://127.0.0.1:8080/v1 ", model: "qwen", apiKey: "k" },
      ),
      env(),
    );
    assert.deepEqual(opts, {
      storeDir: "/ws/.gmprep-store",
      books: ["Pathfinder Player Core"],
      notesDir: "house-rules",
      llm: { backend: "openai", url: "http://127.0.0.1:8080/v1", model: "qwen", apiKey: "k" },
      search: { rerank: false },
    });
  });

  it("sends the hover controls only when set, trimmed", () => {
    const opts = buildInitializationOptions(
      config({ hover: { strictness: "strict", ignoreWords: [" Commander ", ""], aliases: { strat: " Devise a Stratagem ", x: "" } } }),
      env(),
    );
    assert.deepEqual(opts["hover"], { strictness: "strict", ignoreWords: ["Commander"], aliases: { strat: "Devise a Stratagem" } });
    assert.equal(buildInitializationOptions(config(), env())["hover"], undefined);
  });

  it("resolves a local model path", () => {
    const opts = buildInitializationOptions(config({}, { backend: "llamacpp", modelPath: "~/models/m.gguf" }), env());
    assert.deepEqual(opts["llm"], { backend: "llamacpp", modelPath: "/home/gm/models/m.gguf" });
  });

  it("leaves a relative store relative when there is no workspace folder", () => {
    const noFolder: Environment = { ...env(), workspaceFolder: undefined };
    assert.equal(buildInitializationOptions(config({ storeDir: "store" }), noFolder)["storeDir"], "store");
  });
});

describe("configProblems", () => {
  it("flags transformers without a model folder and an openai backend without a URL", () => {
    assert.equal(configProblems(config({}, { backend: "transformers" })).length, 1);
    // llamacpp without a path runs the installed default model; auto decides on the server
    assert.deepEqual(configProblems(config({}, { backend: "llamacpp" })), []);
    assert.deepEqual(configProblems(config({}, { backend: "auto" })), []);
    assert.equal(configProblems(config({}, { backend: "openai" })).length, 1);
    assert.deepEqual(configProblems(config()), []);
  });
});
