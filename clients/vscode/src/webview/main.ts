/**
 * The chat webview. It renders what the host sends and posts the user's actions back; it never talks to
 * the server itself. Markdown goes through renderMarkdown (escape-first); everything else is set with
 * textContent, so no text from a note, the rules or a model can inject markup.
 */
import { citationLabel } from "../shared/citations.js";
import { renderMarkdown } from "../shared/markdown.js";
import type { HostToWebview, NoteContext, WebviewToHost } from "../shared/messages.js";
import type { Citation, ConversationSummary, Message, Source, TraceStep } from "../shared/protocol.js";

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

interface SavedState {
  draft: string;
  historyOpen: boolean;
}

const vscode = acquireVsCodeApi();
const saved = (vscode.getState() as Partial<SavedState> | undefined) ?? {};

const ui = {
  note: null as NoteContext | null,
  conversations: [] as ConversationSummary[],
  current: null as ConversationSummary | null,
  messages: [] as Message[],
  // The answer being made: its numbered sources arrive first (null until then), then its text.
  streaming: null as { question: string; text: string; sources: Source[] | null } | null,
  // Which sources each answer of this session cited (from the ask result; saved messages do not keep it).
  used: new Map<string, Set<string>>(),
  notice: null as string | null,
  historyOpen: saved.historyOpen ?? false,
  traces: new Map<string, TraceStep[] | "loading">(),
  openTraces: new Set<string>(),
};

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function send(m: WebviewToHost): void {
  vscode.postMessage(m);
}

function saveState(): void {
  const state: SavedState = { draft: input.value, historyOpen: ui.historyOpen };
  vscode.setState(state);
}

// ---- static layout -------------------------------------------------------------------------------

const app = document.getElementById("app") as HTMLElement;
const noteLabel = el("span", { class: "note-label", "data-testid": "note-label" });
const btnNew = el("button", { class: "tool", title: "New conversation", "data-testid": "new" }, "New");
const btnHistory = el("button", { class: "tool", title: "Conversations for this note", "data-testid": "history" }, "History");
const btnExport = el("button", { class: "tool", title: "Export this conversation to markdown", "data-testid": "export" }, "Export");
const btnDelete = el("button", { class: "tool danger", title: "Delete this conversation", "data-testid": "delete" }, "Delete");
const convTitle = el("span", { class: "conv-title", "data-testid": "conversation-title" });
const toolbar = el(
  "div",
  { class: "toolbar" },
  el("div", { class: "note-row" }, noteLabel),
  el("div", { class: "actions-row" }, convTitle, btnNew, btnHistory, btnExport, btnDelete),
);
const statusLine = el("div", { class: "status", "data-testid": "status", hidden: "" });
const noticeLine = el("div", { class: "notice", role: "note", "data-testid": "notice", hidden: "" });
const historyPanel = el("section", { class: "history", "data-testid": "history-list", "aria-label": "Conversations" });
const log = el("section", { class: "messages", "data-testid": "messages", "aria-label": "Conversation" });
const errorLine = el("div", { class: "error", role: "alert", "data-testid": "error", hidden: "" });
const input = el("textarea", {
  class: "question",
  rows: "3",
  placeholder: "Ask a rules question… (Enter to send, Shift+Enter for a new line)",
  "aria-label": "Question",
  "data-testid": "question",
});
const btnAsk = el("button", { class: "primary", type: "submit", "data-testid": "ask" }, "Ask");
const btnStop = el("button", { class: "secondary", type: "button", "data-testid": "stop", hidden: "" }, "Stop");
const composer = el("form", { class: "composer" }, input, el("div", { class: "composer-buttons" }, btnStop, btnAsk));
app.append(toolbar, statusLine, noticeLine, historyPanel, log, errorLine, composer);
input.value = saved.draft ?? "";

// ---- rendering -----------------------------------------------------------------------------------

function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function renderHistory(): void {
  historyPanel.hidden = !ui.historyOpen;
  btnHistory.classList.toggle("active", ui.historyOpen);
  historyPanel.replaceChildren();
  if (!ui.historyOpen) return;
  historyPanel.append(el("h2", {}, ui.note ? `Conversations about ${ui.note.label}` : "Conversations"));
  if (ui.conversations.length === 0) {
    historyPanel.append(el("p", { class: "muted" }, "No conversations for this note yet."));
    return;
  }
  const list = el("ul", { class: "conv-list" });
  for (const c of ui.conversations) {
    const open = el("button", { class: "conv-open", "data-testid": "conversation-item", title: "Open and continue" }, c.title || "(untitled)");
    open.addEventListener("click", () => {
      ui.historyOpen = false;
      saveState();
      renderHistory();
      send({ type: "select", conversationId: c.id });
    });
    const meta = el("span", { class: "muted" }, `${c.messageCount} messages · ${formatDate(c.updatedAt)}`);
    const del = el("button", { class: "icon danger", title: "Delete", "aria-label": `Delete ${c.title}` }, "✕");
    del.addEventListener("click", () => send({ type: "delete", conversationId: c.id }));
    const exp = el("button", { class: "icon", title: "Export to markdown", "aria-label": `Export ${c.title}` }, "⇩");
    exp.addEventListener("click", () => send({ type: "export", conversationId: c.id }));
    const li = el("li", { class: c.id === ui.current?.id ? "current" : "" }, open, meta, exp, del);
    list.append(li);
  }
  historyPanel.append(list);
}

function chip(c: Citation | Source, n?: number, cited?: boolean): HTMLElement {
  const place = "where" in c && c.where ? c.where : c.book ? `${c.book}${c.page ? ` p. ${c.page}` : ""}` : "";
  const where = [c.type, place].filter((x) => x).join(" · ");
  const note = cited === undefined ? "" : cited ? "\nCited in the answer" : "\nNot cited in the answer";
  const open = el(
    "button",
    { class: "chip-open", title: `${citationLabel(c)}${note}\nOpen the full entry (${c.sourceId})`, "data-testid": "citation" },
    n !== undefined ? el("span", { class: "chip-n" }, String(n)) : "",
    el("span", { class: "chip-name" }, c.name),
    where ? el("span", { class: "chip-where" }, where) : "",
  );
  open.addEventListener("click", () => send({ type: "openEntry", sourceId: c.sourceId }));
  const insert = el("button", { class: "chip-insert", title: "Insert the rule text into the note at the cursor", "data-testid": "citation-insert" }, "Insert");
  insert.addEventListener("click", () => send({ type: "insertEntry", sourceId: c.sourceId }));
  const attrs: Record<string, string> = { class: `chip${cited === false ? " unused" : ""}`, "data-testid": "source" };
  if (n !== undefined) attrs["data-n"] = String(n);
  if (cited !== undefined) attrs["data-cited"] = String(cited);
  return el("span", attrs, open, insert);
}

/**
 * The numbered sources above an answer: `[n]` in the answer text is the n-th. Once the answer is done and
 * `used` is known, the sources it did not cite are dimmed.
 */
function sourcesBlock(sources: (Citation | Source)[], used: Set<string> | undefined): HTMLElement {
  const cited = used === undefined ? 0 : sources.filter((c) => used.has(c.sourceId)).length;
  const caption =
    used === undefined ? `Sources (${sources.length})` : `Sources: the answer cites ${cited} of ${sources.length}`;
  return el(
    "div",
    { class: "sources", "data-testid": "sources" },
    el("div", { class: "sources-title muted" }, caption),
    el(
      "div",
      { class: "citations", "data-testid": "citations" },
      ...sources.map((c, i) => chip(c, "n" in c ? c.n : i + 1, used === undefined ? undefined : used.has(c.sourceId))),
    ),
  );
}

function traceView(messageId: string): HTMLElement {
  const box = el("div", { class: "trace", "data-testid": "trace" });
  const steps = ui.traces.get(messageId);
  if (steps === undefined || steps === "loading") {
    box.append(el("p", { class: "muted" }, "Loading…"));
    return box;
  }
  if (steps.length === 0) {
    box.append(el("p", { class: "muted" }, "No steps were recorded for this answer."));
    return box;
  }
  const ol = el("ol", {});
  for (const s of steps) {
    const facts = [
      s.status && s.status !== "ok" ? s.status : "",
      s.ms !== undefined && s.ms !== null ? `${Math.round(s.ms)} ms` : "",
      s.tokens ? `${s.tokens} tokens` : "",
    ]
      .filter((x) => x !== "")
      .join(" · ");
    const li = el("li", {}, el("strong", {}, s.name), facts ? el("span", { class: "muted" }, ` ${facts}`) : "");
    for (const [label, value] of [
      ["in", s.input],
      ["out", s.output],
      ["error", s.error],
    ] as const) {
      if (value === undefined || value === null || value === "") continue;
      const text = typeof value === "string" ? value : JSON.stringify(value, null, 1);
      li.append(el("div", { class: "trace-io" }, el("span", { class: "muted" }, `${label}: `), el("code", {}, text.length > 600 ? `${text.slice(0, 600)}…` : text)));
    }
    if (s.retrieved && s.retrieved.length > 0) {
      const found = el("div", { class: "trace-io" }, el("span", { class: "muted" }, "retrieved: "));
      for (const id of s.retrieved) {
        const a = el("a", { href: "#", class: "cite", "data-cite": id }, id);
        found.append(a, " ");
      }
      li.append(found);
    }
    ol.append(li);
  }
  box.append(ol);
  return box;
}

function messageView(m: Message): HTMLElement {
  if (m.role === "user") {
    return el("div", { class: "msg user", "data-testid": "user-message" }, el("div", { class: "body" }, m.text));
  }
  const body = el("div", { class: "body markdown" });
  // escape-first renderer: safe by construction (see markdown.ts); [n] links to the n-th source
  body.innerHTML = renderMarkdown(m.text, { sources: m.citations.map((c) => c.sourceId) });
  if (m.text.trim() === "" && m.outcome === "cancelled") body.append(el("p", { class: "muted" }, "Stopped before any answer text."));
  const node = el("div", { class: "msg assistant", "data-testid": "assistant-message" });
  if (m.outcome && m.outcome !== "answered" && m.outcome !== "ok") {
    node.append(el("div", { class: `outcome outcome-${m.outcome.replace(/[^\w-]/g, "")}` }, m.outcome));
  }
  // Sources first, the answer beneath them: the order the user saw them arrive in.
  if (m.citations.length > 0) node.append(sourcesBlock(m.citations, ui.used.get(m.id)));
  node.append(body);
  if (m.traceId) {
    const open = ui.openTraces.has(m.id);
    const toggle = el("button", { class: "link-button", "aria-expanded": String(open), "data-testid": "trace-toggle" }, open ? "Hide how I found this" : "How I found this");
    toggle.addEventListener("click", () => {
      if (ui.openTraces.has(m.id)) ui.openTraces.delete(m.id);
      else {
        ui.openTraces.add(m.id);
        if (!ui.traces.has(m.id)) {
          ui.traces.set(m.id, "loading");
          send({ type: "trace", messageId: m.id });
        }
      }
      renderMessages();
    });
    node.append(toggle);
    if (open) node.append(traceView(m.id));
  }
  return node;
}

function renderMessages(): void {
  convTitle.textContent = ui.current ? ui.current.title : ui.note ? "New conversation" : "";
  btnExport.disabled = ui.current === null;
  btnDelete.disabled = ui.current === null;
  const nodes: HTMLElement[] = ui.messages.map(messageView);
  if (ui.streaming !== null) {
    nodes.push(el("div", { class: "msg user", "data-testid": "user-message" }, el("div", { class: "body" }, ui.streaming.question)));
    const { text, sources } = ui.streaming;
    const body = el("div", { class: "body markdown" });
    body.innerHTML = text === "" ? "" : renderMarkdown(text, { sources: (sources ?? []).map((c) => c.sourceId) });
    const node = el("div", { class: "msg assistant streaming", "data-testid": "streaming-answer" });
    if (sources !== null && sources.length > 0) node.append(sourcesBlock(sources, undefined));
    node.append(body);
    if (text === "") node.append(el("span", { class: "muted" }, sources === null ? "Searching the rules…" : "Writing the answer…"));
    nodes.push(node);
  }
  if (nodes.length === 0) {
    nodes.push(
      el(
        "p",
        { class: "muted empty" },
        ui.note
          ? "Ask about any rule. Answers cite the books; click a citation to read the entry or insert it into your note."
          : "Open a prep note (a markdown file): conversations belong to the note you are working on.",
      ),
    );
  }
  log.replaceChildren(...nodes);
  log.scrollTop = log.scrollHeight;
}

function setBusy(busy: boolean): void {
  btnAsk.hidden = busy;
  btnStop.hidden = !busy;
  input.disabled = false;
}

/** The once-per-session notice (no model installed: the command that installs one), until dismissed. */
function renderNotice(): void {
  noticeLine.hidden = ui.notice === null;
  if (ui.notice === null) return;
  const close = el("button", { class: "icon", title: "Dismiss", "aria-label": "Dismiss", "data-testid": "notice-dismiss" }, "✕");
  close.addEventListener("click", () => {
    ui.notice = null;
    renderNotice();
  });
  const body = el("div", { class: "notice-text markdown" });
  body.innerHTML = renderMarkdown(ui.notice); // the command is a code span
  noticeLine.replaceChildren(body, close);
}

function showError(message: string): void {
  errorLine.textContent = message;
  errorLine.hidden = message === "";
}

function renderAll(): void {
  noteLabel.textContent = ui.note ? ui.note.label : "No prep note open";
  noteLabel.title = ui.note ? ui.note.uri : "";
  btnNew.disabled = ui.note === null;
  btnHistory.disabled = ui.note === null;
  renderHistory();
  renderMessages();
}

// ---- events --------------------------------------------------------------------------------------

let frame = 0;
function scheduleMessages(): void {
  // Deltas can arrive faster than frames: re-render at most once per frame.
  if (frame !== 0) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    renderMessages();
  });
}

window.addEventListener("message", (event: MessageEvent<HostToWebview>) => {
  const m = event.data;
  switch (m.type) {
    case "context":
      if (m.note?.uri !== ui.note?.uri) {
        ui.conversations = [];
        ui.current = null;
        ui.messages = [];
        showError("");
      }
      ui.note = m.note;
      renderAll();
      break;
    case "conversations":
      if (m.uri !== ui.note?.uri) break;
      ui.conversations = m.conversations;
      // The server's summary (title, counts) replaces the provisional one made when the answer arrived.
      ui.current = m.conversations.find((c) => c.id === ui.current?.id) ?? ui.current;
      renderAll();
      break;
    case "conversation":
      ui.current = m.conversation;
      ui.messages = m.messages;
      // a reopened answer dims the sources its text did not cite, as it did when it streamed
      for (const msg of m.messages) if (msg.used) ui.used.set(msg.id, new Set(msg.used));
      renderAll();
      break;
    case "cleared":
      ui.current = null;
      ui.messages = [];
      renderAll();
      break;
    case "askStarted":
      ui.streaming = { question: m.question, text: "", sources: null };
      // How many deltas the last answer streamed in, and how many had come when its sources did: shown to
      // nobody, read by the end-to-end test.
      log.dataset["deltas"] = "0";
      delete log.dataset["deltasAtSources"];
      showError("");
      setBusy(true);
      renderMessages();
      break;
    case "sources":
      if (ui.streaming !== null) {
        ui.streaming.sources = m.sources;
        log.dataset["deltasAtSources"] = log.dataset["deltas"] ?? "0";
        renderMessages(); // at once: the sources are what the user reads while the model starts
      }
      break;
    case "delta":
      if (ui.streaming !== null) {
        ui.streaming.text += m.delta;
        log.dataset["deltas"] = String(Number(log.dataset["deltas"] ?? "0") + 1);
        scheduleMessages();
      }
      break;
    case "askDone":
      ui.streaming = null;
      setBusy(false);
      if (ui.current?.id !== m.conversationId) {
        // A new conversation (its title and counts arrive with the next conversation list).
        ui.messages = [];
        ui.current = ui.conversations.find((c) => c.id === m.conversationId) ?? {
          id: m.conversationId,
          title: m.userMessage.text.slice(0, 80),
          uri: ui.note?.uri ?? "",
          path: "",
          createdAt: m.userMessage.createdAt,
          updatedAt: m.answer.createdAt,
          messageCount: 0,
        };
      }
      ui.used.set(m.answer.id, new Set(m.used));
      ui.messages = [...ui.messages, m.userMessage, m.answer];
      log.dataset["backend"] = m.backend;
      renderAll();
      break;
    case "askFailed":
      ui.streaming = null;
      setBusy(false);
      showError(m.message);
      renderMessages();
      break;
    case "trace":
      ui.traces.set(m.messageId, m.steps);
      renderMessages();
      break;
    case "prefill":
      input.value = m.text;
      saveState();
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
      break;
    case "showHistory":
      ui.historyOpen = true;
      saveState();
      renderHistory();
      break;
    case "status":
      statusLine.hidden = m.state === "ready";
      statusLine.className = `status status-${m.state}`;
      statusLine.textContent =
        m.state === "offline" ? m.message || "The gmprep server is not running." : `Index ${m.state}: ${m.message}`;
      break;
    case "error":
      showError(m.message);
      break;
    case "notice":
      ui.notice = m.message;
      renderNotice();
      break;
  }
});

composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const question = input.value.trim();
  if (question === "" || ui.streaming !== null) return;
  input.value = "";
  saveState();
  send({ type: "ask", question, conversationId: ui.current?.id ?? null });
});
input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    composer.requestSubmit();
  }
});
input.addEventListener("input", saveState);
btnStop.addEventListener("click", () => send({ type: "stop" }));
btnNew.addEventListener("click", () => {
  ui.current = null;
  ui.messages = [];
  renderAll();
  send({ type: "select", conversationId: null });
  input.focus();
});
btnHistory.addEventListener("click", () => {
  ui.historyOpen = !ui.historyOpen;
  saveState();
  if (ui.historyOpen) send({ type: "refreshList" });
  renderHistory();
});
btnExport.addEventListener("click", () => {
  if (ui.current) send({ type: "export", conversationId: ui.current.id });
});
btnDelete.addEventListener("click", () => {
  if (ui.current) send({ type: "delete", conversationId: ui.current.id });
});

// Links inside rendered markdown: citation ids open the entry; web links go through the host.
app.addEventListener("click", (e) => {
  const target = e.target instanceof Element ? e.target.closest("a") : null;
  if (target === null) return;
  e.preventDefault();
  const cite = target.getAttribute("data-cite");
  const href = target.getAttribute("data-href");
  if (cite) send({ type: "openEntry", sourceId: cite });
  else if (href) send({ type: "openLink", href });
});

renderAll();
send({ type: "ready" });
