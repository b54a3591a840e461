/**
 * The status-bar item: server state, index state (gmprep/status, gmprep/indexState) and the server's
 * `$/progress` while the index builds. Clicking it opens a small menu of gmprep actions.
 */
import * as vscode from "vscode";
import type { ClientState, GmprepClient, WorkDoneProgressValue } from "./serverClient.js";
import { type IndexView, statusText } from "./shared/indexView.js";
import { type IndexStateNotification, Methods } from "./shared/protocol.js";
import { errorMessage } from "./shared/errors.js";

export type { IndexView };

export const STATUS_MENU_COMMAND = "gmprep.statusMenu";

export class IndexStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private view: IndexView = { state: "starting", message: "Starting the gmprep server", percentage: null, entries: null };
  private readonly listeners: vscode.Disposable[] = [];
  private readonly changed = new vscode.EventEmitter<IndexView>();
  /** Fires whenever the shown state changes (the chat shows it too). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly client: GmprepClient) {
    this.item = vscode.window.createStatusBarItem("gmprep.index", vscode.StatusBarAlignment.Left, 50);
    this.item.name = "gmprep index";
    this.item.command = STATUS_MENU_COMMAND;
    this.listeners.push(
      client.onDidChangeState((s) => this.onClientState(s)),
      client.onIndexState((n) => this.onIndexState(n)),
      client.onProgress((p) => this.onProgress(p)),
    );
    this.render();
    this.item.show();
  }

  get current(): IndexView {
    return this.view;
  }

  private set(view: Partial<IndexView>): void {
    this.view = { ...this.view, ...view };
    this.render();
    this.changed.fire(this.view);
  }

  private render(): void {
    this.item.text = statusText(this.view);
    this.item.tooltip = this.view.message || "gmprep";
    this.item.backgroundColor =
      this.view.state === "offline" || this.view.state === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : this.view.state === "empty"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  }

  private onClientState(state: ClientState): void {
    if (state === "running") void this.refresh();
    else if (state === "starting") this.set({ state: "starting", message: "Starting the gmprep server", percentage: null });
    else this.set({ state: "offline", message: this.client.failure || "The gmprep server stopped.", percentage: null });
  }

  private onIndexState(n: IndexStateNotification): void {
    this.set({ state: n.state, message: n.message, percentage: n.percentage ?? null });
    if (n.state === "ready") void this.refresh();
  }

  private onProgress(p: WorkDoneProgressValue): void {
    if (p.kind === "end") {
      void this.refresh();
      return;
    }
    const message = [p.kind === "begin" ? p.title : "", p.message ?? ""].filter((s) => s !== "").join(": ");
    this.set({ state: "building", message: message || this.view.message, percentage: p.percentage ?? this.view.percentage });
  }

  /** Ask the server for its index state (gmprep/status). */
  async refresh(): Promise<void> {
    try {
      const s = await this.client.request(Methods.status, {});
      this.set({
        state: s.state,
        message: s.state === "ready" && !s.embeddings ? `${s.message} (no embeddings: keyword search only)` : s.message,
        entries: s.entries,
        percentage: s.state === "building" ? this.view.percentage : null,
      });
    } catch (error) {
      this.set({ state: "offline", message: errorMessage(error), percentage: null });
    }
  }

  dispose(): void {
    for (const l of this.listeners) l.dispose();
    this.changed.dispose();
    this.item.dispose();
  }
}
