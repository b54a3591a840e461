/**
 * Citation text: chip labels in the chat and the rule quote inserted into a note.
 */
import type { Citation, EntryResult } from "./protocol.js";

/** "Frightened (condition) — Player Core p. 431" */
export function citationLabel(c: Citation): string {
  const page = c.page ? ` p. ${c.page}` : "";
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
 * The rule text of an entry's markdown (gmprep/entry), without the card around it: the breadcrumb and
 * heading above, the italic meta line and **Source:** line under the heading, the **Related:** line at the end.
 */
export function entryBody(markdown: string): string[] {
  let lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const heading = lines.findIndex((l) => /^#{1,6}\s/.test(l));
  if (heading >= 0) lines = lines.slice(heading + 1);
  const isMeta = (l: string): boolean => /^\s*$/.test(l) || /^\*[^*].*\*(\s·.*)?$/.test(l.trim()) || /^\*\*Source:\*\*/.test(l.trim());
  while (lines.length > 0 && isMeta(lines[0] ?? "")) lines.shift();
  const related = lines.findIndex((l) => /^\*\*Related:\*\*/.test(l.trim()));
  if (related >= 0) lines = lines.slice(0, related);
  while (lines.length > 0 && (lines[lines.length - 1] ?? "").trim() === "") lines.pop();
  return lines;
}

/**
 * An entry as a rule quote for a prep note, the shape the server's "Insert rule text" writes: the header,
 * an empty quote line, then the rule text.
 */
export function formatRuleQuote(entry: EntryResult): string {
  const body = entryBody(entry.markdown).map((l) => (l.trim() === "" ? ">" : `> ${l}`.trimEnd()));
  return [quoteHeader(entry.citation), ...(body.length > 0 ? [">", ...body] : [])].join("\n") + "\n";
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
