/**
 * The palette / context-menu commands. Server commands (gmprep.insertRuleText, gmprep.rebuildIndex) are
 * registered by vscode-languageclient from the server's executeCommandProvider; these wrap them with
 * the editor's cursor and with feedback.
 */
import * as fs from "node:fs";
import * as vscode from "vscode";
import type { ChatViewProvider } from "./chatView.js";
import type { GmprepClient } from "./serverClient.js";
import { STATUS_MENU_COMMAND } from "./statusBar.js";
import { Methods, ServerCommands } from "./shared/protocol.js";
import { errorMessage } from "./shared/errors.js";

export const Commands = {
  openChat: "gmprep.openChat",
  askAboutSelection: "gmprep.askAboutSelection",
  insertRuleTextAtCursor: "gmprep.insertRuleTextAtCursor",
  rebuildIndexNow: "gmprep.rebuildIndexNow",
  openConversationHistory: "gmprep.openConversationHistory",
  newConversation: "gmprep.newConversation",
  showServerLog: "gmprep.showServerLog",
  restartServer: "gmprep.restartServer",
  howToInstall: "gmprep.howToInstall",
} as const;

/** Open the extension's README (install steps) as a rendered preview. */
export async function openInstallGuide(extensionUri: vscode.Uri): Promise<void> {
  // vsce stores README.md as readme.md inside the .vsix; file names are case-sensitive on Linux.
  const name = fs.readdirSync(extensionUri.fsPath).find((f) => f.toLowerCase() === "readme.md") ?? "README.md";
  const readme = vscode.Uri.joinPath(extensionUri, name);
  try {
    await vscode.commands.executeCommand("markdown.showPreview", readme);
  } catch {
    await vscode.window.showTextDocument(readme);
  }
}

export function registerCommands(
  context: vscode.ExtensionContext,
  client: GmprepClient,
  chat: ChatViewProvider,
): vscode.Disposable[] {
  const rebuild = async (): Promise<void> => {
    try {
      const r = await client.request(Methods.rebuild, {});
      void vscode.window.showInformationMessage(
        r.started ? "gmprep: rebuilding the index…" : "gmprep: an index build is already running.",
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`gmprep: could not rebuild the index: ${errorMessage(error)}`);
    }
  };

  return [
    vscode.commands.registerCommand(Commands.askAboutSelection, async (text?: unknown, _uri?: unknown) => {
      // From the server's code action the mention arrives as [text, uri]; from the menu, use the selection.
      let question = typeof text === "string" ? text : "";
      if (question === "") {
        const editor = vscode.window.activeTextEditor;
        if (editor !== undefined) {
          const sel = editor.selection;
          question = sel.isEmpty
            ? editor.document.getText(editor.document.getWordRangeAtPosition(sel.active) ?? sel)
            : editor.document.getText(sel);
        }
      }
      await chat.askAbout(question.trim());
    }),

    vscode.commands.registerCommand(Commands.insertRuleTextAtCursor, async () => {
      const editor = vscode.window.activeTextEditor;
      if (editor === undefined || editor.document.languageId !== "markdown") {
        void vscode.window.showWarningMessage("gmprep: put the cursor on a rule mention in a markdown note first.");
        return;
      }
      const pos = editor.selection.active;
      const before = editor.document.version;
      try {
        await client.executeServerCommand(ServerCommands.insertRuleText, [
          editor.document.uri.toString(),
          pos.line,
          pos.character,
        ]);
      } catch (error) {
        void vscode.window.showErrorMessage(`gmprep: ${errorMessage(error)}`);
        return;
      }
      if (editor.document.version === before) {
        void vscode.window.showInformationMessage("gmprep: no rule mention found at the cursor.");
      }
    }),

    vscode.commands.registerCommand(Commands.openChat, () => chat.reveal()),
    vscode.commands.registerCommand(Commands.rebuildIndexNow, rebuild),
    vscode.commands.registerCommand(Commands.openConversationHistory, () => chat.showHistory()),
    vscode.commands.registerCommand(Commands.newConversation, () => chat.newConversation()),
    vscode.commands.registerCommand(Commands.showServerLog, () => client.output.show(true)),
    vscode.commands.registerCommand(Commands.restartServer, () => client.restart()),
    vscode.commands.registerCommand(Commands.howToInstall, () => openInstallGuide(context.extensionUri)),

    vscode.commands.registerCommand(STATUS_MENU_COMMAND, async () => {
      const items: (vscode.QuickPickItem & { command: string })[] = [
        { label: "$(comment-discussion) Open rules chat", command: Commands.openChat },
        { label: "$(sync) Rebuild index", command: Commands.rebuildIndexNow },
        { label: "$(output) Show server log", command: Commands.showServerLog },
        { label: "$(debug-restart) Restart server", command: Commands.restartServer },
        { label: "$(book) How to install", command: Commands.howToInstall },
        { label: "$(gear) Settings", command: "gmprep.openSettings" },
      ];
      const pick = await vscode.window.showQuickPick(items, { placeHolder: "gmprep" });
      if (pick !== undefined) await vscode.commands.executeCommand(pick.command);
    }),
    vscode.commands.registerCommand("gmprep.openSettings", () =>
      vscode.commands.executeCommand("workbench.action.openSettings", "@ext:gmprep.gmprep-vscode"),
    ),
  ];
}
