/**
 * The chat webview's HTML shell. Everything the page runs is the bundled script carrying the nonce; the
 * Content-Security-Policy forbids any other script, inline handlers, plugins, frames and network access.
 */
import { escapeHtml } from "./markdown.js";

export interface ShellOptions {
  /** webview.cspSource: the origin the webview's own resources are served from. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce: string;
}

/** The Content-Security-Policy of the chat webview. */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    "connect-src 'none'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** A fresh nonce for one webview document (32 alphanumerics from a CSPRNG). */
export function makeNonce(random: (n: number) => Uint8Array): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(random(32), (b) => alphabet[b % alphabet.length]).join("");
}

/** The page: a mount point, the stylesheet and the nonce-carrying script. */
export function chatShell(o: ShellOptions): string {
  const csp = escapeHtml(contentSecurityPolicy(o.cspSource, o.nonce));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(o.styleUri)}">
<title>gmprep chat</title>
</head>
<body>
<div id="app" aria-live="polite"></div>
<script nonce="${escapeHtml(o.nonce)}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>`;
}
