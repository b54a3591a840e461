/**
 * gmprep for VS Code: starts `gmprep lsp` for markdown prep notes and adds the rules chat, rule-entry
 * documents, the index status item and the commands.
 */
import * as vscode from "vscode";
import { ChatViewProvider, CHAT_VIEW_ID } from "./chatView.js";
import { openInstallGuide, registerCommands } from "./commands.js";
import { ENTRY_SCHEME, EntryDocuments } from "./entryDocuments.js";
import { GmprepClient } from "./serverClient.js";
import { IndexStatusBar } from "./statusBar.js";

let client: GmprepClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const gm = new GmprepClient((reason) => {
    void vscode.window
      .showErrorMessage(`gmprep could not start its language server. ${reason}`, "How to install", "Open settings", "Show log")
      .then((pick) => {
        if (pick === "How to install") void openInstallGuide(context.extensionUri);
        else if (pick === "Open settings") void vscode.commands.executeCommand("workbench.action.openSettings", "gmprep.server");
        else if (pick === "Show log") gm.output.show(true);
      });
  });
  client = gm;
  const entries = new EntryDocuments(gm);
  const status = new IndexStatusBar(gm);
  const chat = new ChatViewProvider(context, gm, entries, status);
  context.subscriptions.push(
    gm,
    status,
    chat,
    vscode.workspace.registerTextDocumentContentProvider(ENTRY_SCHEME, entries),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    ...registerCommands(context, gm, chat),
    gm.onIndexState((s) => {
      if (s.state === "ready") entries.clear();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration("gmprep")) return;
      // The launch command and the store are read once at start; the rest reaches a running server live.
      const needsRestart = ["gmprep.server", "gmprep.storeDir", "gmprep.notesDir"].some((k) => e.affectsConfiguration(k));
      if (needsRestart || gm.state !== "running") {
        const pick = await vscode.window.showInformationMessage("gmprep: restart the server to use the new settings?", "Restart");
        if (pick === "Restart") await gm.restart();
      } else {
        await gm.notifyConfigurationChanged();
      }
    }),
  );
  // Not awaited: activation (and the commands) must not wait for Python to load its models.
  void gm.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
