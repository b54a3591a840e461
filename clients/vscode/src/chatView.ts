/**
 * The chat panel's extension-host side: a webview view that belongs to the active prep note. It forwards
 * the webview's requests to the server (ask, conversations, entries, traces), streams answer deltas back,
 * and remembers which conversation is open for each note (workspaceState, so it survives a reload).
 */
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { EntryDocuments } from "./entryDocuments.js";
import type { GmprepClient } from "./serverClient.js";
import type { IndexStatusBar, IndexView } from "./statusBar.js";
import type { HostToWebview, NoteContext, WebviewToHost } from "./shared/messages.js";
import { type AskParams, Methods } from "./shared/protocol.js";
import { slug } from "./shared/citations.js";
import { chatShell, makeNonce } from "./shared/webviewHtml.js";
import { errorMessage } from "./shared/errors.js";

export const CHAT_VIEW_ID = "gmprep.chat";
const SELECTED_KEY = "gmprep.chat.selectedByNote";
/** JSON-RPC "request cancelled" (LSP RequestCancelled). */
const REQUEST_CANCELLED = -32800;

interface PendingAsk {
  cts: vscode.CancellationTokenSource;
  conversationId: string | null;
  uri: string;
}

/** Whether a document is a prep note the chat can belong to. */
export function isPrepNote(doc: vscode.TextDocument): boolean {
  return doc.languageId === "markdown" && (doc.uri.scheme === "file" || doc.uri.scheme === "untitled");
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private queue: HostToWebview[] = [];
  private note: NoteContext | null = null;
  private pending: PendingAsk | null = null;
  /** The "no model, here is the command" notice is shown once per session (this provider's lifetime). */
  private noticeShown = false;
  /** Exported conversations open as untitled markdown: they are not prep notes to chat about. */
  private readonly exports = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: GmprepClient,
    private readonly entries: EntryDocuments,
    private readonly status: IndexStatusBar,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => this.onActiveEditor(e)),
      client.onAnswerSources((d) => {
        const p = this.pending;
        if (p === null || (p.conversationId !== null && p.conversationId !== d.conversationId)) return;
        p.conversationId = d.conversationId;
        this.post({ type: "sources", sources: d.sources });
      }),
      client.onAnswerDelta((d) => {
        const p = this.pending;
        if (p === null || (p.conversationId !== null && p.conversationId !== d.conversationId)) return;
        p.conversationId = d.conversationId;
        this.post({ type: "delta", delta: d.delta });
      }),
      client.onDidChangeState((s) => {
        if (s === "running") void this.sync();
      }),
      status.onDidChange((v) => this.postStatus(v)),
    );
    this.onActiveEditor(vscode.window.activeTextEditor);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.context.extensionUri, "dist");
    const media = vscode.Uri.joinPath(this.context.extensionUri, "media");
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist, media] };
    view.webview.html = chatShell({
      cspSource: view.webview.cspSource,
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
      nonce: makeNonce((n) => randomBytes(n)),
    });
    view.webview.onDidReceiveMessage((m: WebviewToHost) => void this.onMessage(m), undefined, this.disposables);
    view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
    });
  }

  /** Reveal the panel (creating it if needed). */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  /** Open the panel with `text` in the question box. */
  async askAbout(text: string): Promise<void> {
    await this.reveal();
    this.post({ type: "prefill", text });
  }

  /** Open the panel on the list of this note's conversations. */
  async showHistory(): Promise<void> {
    await this.reveal();
    await this.postConversations();
    this.post({ type: "showHistory" });
  }

  /** Start a new conversation for the current note (created on the server with the first question). */
  async newConversation(): Promise<void> {
    await this.reveal();
    if (this.note !== null) await this.setSelected(this.note.uri, null);
    this.post({ type: "cleared" });
  }

  private selectedMap(): Record<string, string> {
    return this.context.workspaceState.get<Record<string, string>>(SELECTED_KEY, {});
  }

  private selectedFor(uri: string): string | null {
    return this.selectedMap()[uri] ?? null;
  }

  private async setSelected(uri: string, id: string | null): Promise<void> {
    const map = { ...this.selectedMap() };
    if (id === null) delete map[uri];
    else map[uri] = id;
    await this.context.workspaceState.update(SELECTED_KEY, map);
  }

  private onActiveEditor(editor: vscode.TextEditor | undefined): void {
    if (editor === undefined || !isPrepNote(editor.document)) return;
    const uri = editor.document.uri.toString();
    if (this.exports.has(uri)) return;
    if (this.note?.uri === uri) return;
    this.note = { uri, label: vscode.workspace.asRelativePath(editor.document.uri, false) };
    void this.sync();
  }

  private post(message: HostToWebview): void {
    if (this.view === undefined || !this.ready) {
      // Kept until the webview says it is ready; context/list/conversation are re-sent by sync() anyway.
      if (message.type === "prefill" || message.type === "showHistory") this.queue.push(message);
      return;
    }
    void this.view.webview.postMessage(message);
  }

  private postStatus(v: IndexView): void {
    const state = v.state === "starting" ? "offline" : v.state;
    const message = v.state === "starting" ? "Starting the gmprep server…" : v.message;
    this.post({ type: "status", state, message });
  }

  /** Send the webview everything it shows for the current note: context, list, open conversation. */
  private async sync(): Promise<void> {
    const note = this.note;
    this.post({ type: "context", note, selected: note ? this.selectedFor(note.uri) : null });
    this.postStatus(this.status.current);
    if (note === null || this.client.state !== "running") return;
    this.post({ type: "error", message: "" }); // what failed before the server was up is stale now
    await this.postConversations();
    const selected = this.selectedFor(note.uri);
    if (selected !== null) await this.loadConversation(selected);
    else this.post({ type: "cleared" });
  }

  private async postConversations(): Promise<void> {
    const note = this.note;
    // Without a server there is nothing to list; sync() sends the list once it is running.
    if (note === null || this.client.state !== "running") return;
    try {
      const r = await this.client.request(Methods.conversations, { uri: note.uri });
      if (this.note?.uri === note.uri) this.post({ type: "conversations", uri: note.uri, conversations: r.conversations });
    } catch (error) {
      this.post({ type: "error", message: `Could not list conversations: ${errorMessage(error)}` });
    }
  }

  private async loadConversation(id: string): Promise<void> {
    if (this.client.state !== "running") return; // sync() opens the selected one once the server is up
    try {
      const r = await this.client.request(Methods.conversation, { id });
      this.post({ type: "conversation", conversation: r.conversation, messages: r.messages });
    } catch (error) {
      // A conversation deleted elsewhere: forget it rather than showing an error forever.
      if (this.note !== null) await this.setSelected(this.note.uri, null);
      this.post({ type: "cleared" });
      this.post({ type: "error", message: `Could not open the conversation: ${errorMessage(error)}` });
    }
  }

  private async onMessage(m: WebviewToHost): Promise<void> {
    try {
      switch (m.type) {
        case "ready": {
          this.ready = true;
          await this.sync();
          const queued = this.queue;
          this.queue = [];
          for (const q of queued) this.post(q);
          return;
        }
        case "ask":
          return await this.ask(m.question, m.conversationId);
        case "stop":
          this.pending?.cts.cancel();
          return;
        case "select":
          if (this.note === null) return;
          await this.setSelected(this.note.uri, m.conversationId);
          if (m.conversationId === null) this.post({ type: "cleared" });
          else await this.loadConversation(m.conversationId);
          return;
        case "refreshList":
          return await this.postConversations();
        case "delete":
          return await this.deleteConversation(m.conversationId);
        case "export":
          return await this.exportConversation(m.conversationId);
        case "openEntry":
          return await this.entries.open(m.sourceId);
        case "insertEntry":
          return await this.insertEntry(m.sourceId);
        case "trace": {
          const r = await this.client.request(Methods.trace, { messageId: m.messageId });
          this.post({ type: "trace", messageId: m.messageId, steps: r.steps });
          return;
        }
        case "openLink":
          if (/^(https?:\/\/|mailto:)/i.test(m.href)) await vscode.env.openExternal(vscode.Uri.parse(m.href));
          return;
      }
    } catch (error) {
      this.post({ type: "error", message: errorMessage(error) });
    }
  }

  private async ask(question: string, conversationId: string | null): Promise<void> {
    const note = this.note;
    const text = question.trim();
    if (text === "" || this.pending !== null) return;
    if (note === null) {
      this.post({ type: "error", message: "Open a prep note (a markdown file) first: conversations belong to a note." });
      return;
    }
    const cts = new vscode.CancellationTokenSource();
    const pending: PendingAsk = { cts, conversationId, uri: note.uri };
    this.pending = pending;
    this.post({ type: "askStarted", question: text });
    const params: AskParams = { question: text, uri: note.uri };
    if (conversationId !== null) params.conversationId = conversationId;
    try {
      const r = await this.client.request(Methods.ask, params, cts.token);
      await this.setSelected(pending.uri, r.conversationId);
      if (this.note?.uri === pending.uri) {
        this.post({
          type: "askDone",
          conversationId: r.conversationId,
          userMessage: r.userMessage,
          answer: r.answer,
          used: r.used,
          backend: r.backend,
          model: r.model,
        });
        if (r.notice && !this.noticeShown) {
          this.noticeShown = true;
          this.post({ type: "notice", message: r.notice });
        }
        await this.postConversations();
      }
    } catch (error) {
      const cancelled = cts.token.isCancellationRequested || (error as { code?: number }).code === REQUEST_CANCELLED;
      const convId = pending.conversationId;
      this.post({
        type: "askFailed",
        message: cancelled ? "Stopped." : errorMessage(error),
        cancelled,
        conversationId: convId,
      });
      if (convId !== null && this.note?.uri === pending.uri) {
        // The server keeps the partial answer (outcome "cancelled"): show what it saved.
        await this.setSelected(pending.uri, convId);
        await this.postConversations();
        await this.loadConversation(convId);
      }
    } finally {
      this.pending = null;
      cts.dispose();
    }
  }

  private async deleteConversation(id: string): Promise<void> {
    const pick = await vscode.window.showWarningMessage("Delete this conversation?", { modal: true }, "Delete");
    if (pick !== "Delete") return;
    await this.client.request(Methods.conversationDelete, { id });
    const note = this.note;
    if (note !== null && this.selectedFor(note.uri) === id) {
      await this.setSelected(note.uri, null);
      this.post({ type: "cleared" });
    }
    await this.postConversations();
  }

  private async exportConversation(id: string): Promise<void> {
    const [exported, conv] = await Promise.all([
      this.client.request(Methods.conversationExport, { id }),
      this.client.request(Methods.conversation, { id }),
    ]);
    const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: exported.markdown });
    this.exports.add(doc.uri.toString());
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside });
    void vscode.window.showInformationMessage(
      `Exported "${conv.conversation.title}" as an unsaved markdown document (suggested name: chat-${slug(conv.conversation.title)}.md).`,
    );
  }

  private async insertEntry(sourceId: string): Promise<void> {
    const note = this.note;
    if (note === null) {
      this.post({ type: "error", message: "Open a prep note to insert rule text into." });
      return;
    }
    const uri = vscode.Uri.parse(note.uri);
    const visible = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === note.uri);
    const editor =
      visible ?? (await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false }));
    await this.entries.insertInto(editor, sourceId);
  }

  dispose(): void {
    this.pending?.cts.cancel();
    for (const d of this.disposables) d.dispose();
  }
}
