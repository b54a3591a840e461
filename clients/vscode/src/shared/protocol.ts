/**
 * Shapes of gmprep's custom LSP requests and notifications, as written in docs/protocol.md.
 * Shared by the extension host (which sends them) and the webview (which renders them).
 */

export interface Citation {
  sourceId: string;
  name: string;
  type: string;
  book?: string | null;
  page?: number | string | null;
  path?: string[];
}

export interface Message {
  id: string;
  role: "user" | "assistant";
  text: string;
  citations: Citation[];
  outcome?: string | null;
  createdAt: string;
  traceId?: string | null;
}

export interface ConversationSummary {
  id: string;
  title: string;
  uri: string;
  path: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
}

export type IndexState = "empty" | "building" | "ready" | "error";

export interface StatusResult {
  state: IndexState;
  message: string;
  entries: number;
  embeddings: boolean;
}

export interface EntryResult {
  id: string;
  markdown: string;
  citation: Citation;
}

export interface AskParams {
  question: string;
  uri: string;
  conversationId?: string;
}

export interface AskResult {
  conversationId: string;
  userMessage: Message;
  answer: Message;
}

export interface ConversationResult {
  conversation: ConversationSummary;
  messages: Message[];
}

export interface TraceStep {
  name: string;
  status?: string | null;
  error?: string | null;
  input?: unknown;
  output?: unknown;
  ms?: number | null;
  tokens?: number | null;
  retrieved?: string[];
}

export interface AnswerDelta {
  conversationId: string;
  requestId?: string | number | null;
  delta: string;
}

export interface IndexStateNotification {
  state: IndexState;
  message: string;
  percentage?: number | null;
}

/** Method names, in one place so a typo is a compile error rather than a silent no-op. */
export const Methods = {
  status: "gmprep/status",
  entry: "gmprep/entry",
  ask: "gmprep/ask",
  conversations: "gmprep/conversations",
  conversation: "gmprep/conversation",
  conversationNew: "gmprep/conversation/new",
  conversationDelete: "gmprep/conversation/delete",
  conversationExport: "gmprep/conversation/export",
  trace: "gmprep/trace",
  rebuild: "gmprep/index/rebuild",
  answerDelta: "gmprep/answerDelta",
  indexState: "gmprep/indexState",
} as const;

/** Server-side commands (workspace/executeCommand). */
export const ServerCommands = {
  insertRuleText: "gmprep.insertRuleText",
} as const;
