/**
 * Read-only virtual documents for full rule entries: `gmprep-entry:/Frightened.md?id=pf2e:condition:frightened`.
 * VS Code shows documents of a TextDocumentContentProvider scheme read-only.
 */
import * as vscode from "vscode";
import { formatRuleQuote } from "./shared/citations.js";
import type { EntryResult } from "./shared/protocol.js";
import { Methods } from "./shared/protocol.js";
import type { GmprepClient } from "./serverClient.js";
import { errorMessage } from "./shared/errors.js";

export const ENTRY_SCHEME = "gmprep-entry";

/** The virtual document address of an entry (the name only makes the tab title readable). */
export function entryUri(sourceId: string, name?: string): vscode.Uri {
  const title = (name ?? sourceId.split(":").pop() ?? "entry").replace(/[\\/?#%]/g, " ").trim() || "entry";
  return vscode.Uri.from({ scheme: ENTRY_SCHEME, path: `/${title}.md`, query: `id=${encodeURIComponent(sourceId)}` });
}

function sourceIdOf(uri: vscode.Uri): string {
  const m = /(?:^|&)id=([^&]*)/.exec(uri.query);
  return m ? decodeURIComponent(m[1] ?? "") : "";
}

export class EntryDocuments implements vscode.TextDocumentContentProvider {
  private readonly cache = new Map<string, EntryResult>();

  constructor(private readonly client: GmprepClient) {}

  /** The entry (cached: entries only change when the index is rebuilt). */
  async entry(sourceId: string): Promise<EntryResult> {
    const hit = this.cache.get(sourceId);
    if (hit !== undefined) return hit;
    const result = await this.client.request(Methods.entry, { id: sourceId });
    this.cache.set(sourceId, result);
    return result;
  }

  /** Forget cached entries (after a rebuild). */
  clear(): void {
    this.cache.clear();
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const id = sourceIdOf(uri);
    try {
      const result = await this.entry(id);
      return result.markdown;
    } catch (error) {
      return `# ${id}\n\nThis entry could not be loaded: ${errorMessage(error)}\n`;
    }
  }

  /** Open an entry beside the editor, read-only. */
  async open(sourceId: string): Promise<void> {
    const result = await this.entry(sourceId);
    const doc = await vscode.workspace.openTextDocument(entryUri(sourceId, result.citation.name));
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
  }

  /**
   * Insert an entry as a rule quote into `editor`, kept a block of its own by blank lines: at the cursor's
   * line when that line is empty, else below it (where the server's "Insert rule text" puts a quote).
   */
  async insertInto(editor: vscode.TextEditor, sourceId: string): Promise<boolean> {
    const quote = formatRuleQuote(await this.entry(sourceId));
    const doc = editor.document;
    const line = doc.lineAt(editor.selection.active.line);
    if (line.isEmptyOrWhitespace) {
      return editor.edit((edit) => edit.insert(line.range.start, `${quote}\n`));
    }
    if (line.lineNumber + 1 < doc.lineCount) {
      return editor.edit((edit) => edit.insert(new vscode.Position(line.lineNumber + 1, 0), `\n${quote}\n`));
    }
    return editor.edit((edit) => edit.insert(line.range.end, `\n\n${quote}`));
  }
}
