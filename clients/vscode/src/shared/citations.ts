/**
 * Citation text: chip labels in the chat and the rule quote inserted into a note.
 */
import type { Citation, EntryResult } from "./protocol.js";

/** "Frightened (condition) — Player Core p. 431" */
export function citationLabel(c: Citation): string {
  const page = c.page !== undefined && c.page !== null && `${c.page}` !== "" ? ` p. ${c.page}` : "";
  const type = c.type ? ` (${c.type})` : "";
  const book = c.book ? ` — ${c.book}${page}` : "";
  return `${c.name}${type}${book}`;
}

/** The header line of a rule quote, the same shape the server's "Insert rule text" writes. */
export function quoteHeader(c: Citation): string {
  const type = c.type ? ` (${c.type})` : "";
  const book = c.book ? ` — ${c.book}` : "";
  return `> **${c.name}**${type}${book} [${c.sourceId}]`;
}

/**
 * A block quote of an entry for a prep note: the header, then the entry's own text.
 * A leading heading that only repeats the entry's name is dropped: the header already names it.
 */
export function formatRuleQuote(entry: EntryResult): string {
  const lines = entry.markdown.replace(/\r\n?/g, "\n").split("\n");
  const name = entry.citation.name.trim().toLowerCase();
  while (lines.length > 0 && (lines[0] ?? "").trim() === "") lines.shift();
  const first = (lines[0] ?? "").trim();
  const heading = /^#{1,6}\s+(.*?)\s*#*$/.exec(first);
  if (heading && (heading[1] ?? "").replace(/[*_]/g, "").trim().toLowerCase().startsWith(name)) lines.shift();
  while (lines.length > 0 && (lines[0] ?? "").trim() === "") lines.shift();
  while (lines.length > 0 && (lines[lines.length - 1] ?? "").trim() === "") lines.pop();
  const body = lines.map((l) => (l.trim() === "" ? ">" : `> ${l}`));
  return [quoteHeader(entry.citation), ...body].join("\n") + "\n";
}

/** A file-name-safe slug for exports and virtual documents. */
export function slug(text: string, fallback = "untitled"): string {
  const s = text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return s === "" ? fallback : s;
}
