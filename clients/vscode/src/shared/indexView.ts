/**
 * What the status-bar item shows about the server and its index.
 */
import type { IndexState } from "./protocol.js";

export interface IndexView {
  state: IndexState | "offline" | "starting";
  message: string;
  percentage: number | null;
  entries: number | null;
}

/** Status-bar text for an index view (codicons included). */
export function statusText(v: IndexView): string {
  switch (v.state) {
    case "starting":
      return "$(loading~spin) gmprep";
    case "offline":
      return "$(error) gmprep: server not running";
    case "empty":
      return "$(warning) gmprep: no index";
    case "building":
      return v.percentage !== null ? `$(sync~spin) gmprep: indexing ${Math.round(v.percentage)}%` : "$(sync~spin) gmprep: indexing";
    case "error":
      return "$(error) gmprep: index error";
    case "ready":
      return v.entries !== null ? `$(book) gmprep: ${v.entries.toLocaleString("en-US")} rules` : "$(book) gmprep";
  }
}
