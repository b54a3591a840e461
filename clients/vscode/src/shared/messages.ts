/**
 * postMessage contract between the extension host (ChatViewProvider) and the chat webview.
 * The webview owns UI state (which conversation is open per note); the host is a bridge to the server.
 */
import type { ConversationSummary, IndexState, Message, Source, TraceStep } from "./protocol.js";

/** The prep note the chat belongs to (null when no markdown note is open). */
export interface NoteContext {
  uri: string;
  label: string;
}

export type HostToWebview =
  | { type: "context"; note: NoteContext | null; selected: string | null }
  | { type: "conversations"; uri: string; conversations: ConversationSummary[] }
  | { type: "conversation"; conversation: ConversationSummary; messages: Message[] }
  | { type: "cleared" }
  | { type: "askStarted"; question: string }
  | { type: "sources"; sources: Source[] }
  | { type: "delta"; delta: string }
  | { type: "askDone"; conversationId: string; userMessage: Message; answer: Message; used: string[]; backend: string; model: string | null }
  /** Shown once per session: why the answers come without a model, and the command that turns one on. */
  | { type: "notice"; message: string }
  | { type: "askFailed"; message: string; cancelled: boolean; conversationId: string | null }
  | { type: "trace"; messageId: string; steps: TraceStep[] }
  | { type: "prefill"; text: string }
  | { type: "showHistory" }
  | { type: "status"; state: IndexState | "offline"; message: string }
  | { type: "error"; message: string };

export type WebviewToHost =
  | { type: "ready" }
  | { type: "ask"; question: string; conversationId: string | null }
  | { type: "stop" }
  | { type: "select"; conversationId: string | null }
  | { type: "refreshList" }
  | { type: "delete"; conversationId: string }
  | { type: "export"; conversationId: string }
  | { type: "openEntry"; sourceId: string }
  | { type: "insertEntry"; sourceId: string }
  | { type: "trace"; messageId: string }
  | { type: "openLink"; href: string };
