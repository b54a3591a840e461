/**
 * A small markdown renderer for rule text and model answers in the chat webview.
 *
 * Safety comes from the order of work: every piece of source text is HTML-escaped before any markup is
 * added, and the only tags in the output are the fixed ones written here (attribute values are built from
 * escaped text and a closed set of classes). Raw HTML in the source is shown as text, never parsed, and
 * links keep only http(s)/mailto targets, so nothing in a note or a model's output can run script.
 *
 * Supported: ATX headings, paragraphs, hard breaks, emphasis, strong, strikethrough, code spans, fenced
 * code, block quotes, nested lists, GFM pipe tables, thematic breaks, links, gmprep citation ids
 * written as `[pf2e:condition:frightened]` and, given the answer's numbered sources, inline citations
 * `[1]`, `[2, 3]` (both rendered as clickable citation links).
 */

/** How to render one text: `sources[n - 1]` is the source id an inline `[n]` cites (empty: `[n]` stays text). */
export interface RenderOptions {
  sources?: readonly string[];
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escape text for use in HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

// Placeholders mark finished HTML fragments while the rest of a line is still being transformed.
// The delimiter characters are removed from the input first, so source text cannot forge one.
const PH_OPEN = "\u0000";
const PH_CLOSE = "\u0001";
const PLACEHOLDER = /\u0000(\d+)\u0001/g;

/** Link targets a click may open; everything else renders as plain text. */
const SAFE_URL = /^(?:https?:\/\/|mailto:)/i;
/** gmprep source ids as the server cites them: `pf2e:condition:frightened`, `notes:house-rules#x`. */
const CITE_ID = /^[a-z0-9][\w-]*(?::[\w.\-/#]+)+$/i;

/** `[1]`, `[1, 2]`, `[1][2]`: numbered citations of an answer's sources. */
const NUMBERED_CITE = /\[(\d{1,2}(?:\s*,\s*\d{1,2})*)\](?!\()/g; // as gmprep.core.progress reads them

/** Render inline markdown (one paragraph's text) to safe HTML. */
export function renderInline(source: string, opts: RenderOptions = {}): string {
  const frags: string[] = [];
  const hold = (html: string): string => `${PH_OPEN}${frags.push(html) - 1}${PH_CLOSE}`;
  let text = source.replace(/[\u0000\u0001]/g, "");

  // Code spans first: their content is literal.
  text = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) => {
    const trimmed = /^ .* $/.test(code) && code.trim() !== "" ? code.slice(1, -1) : code;
    return hold(`<code>${escapeHtml(trimmed)}</code>`);
  });

  text = escapeHtml(text);

  // Links [label](target "title"): the target is already escaped, so it is attribute-safe.
  text = text.replace(
    /\[([^\]\n]+)\]\(\s*([^()\s]+)(?:\s+&quot;[^\n]*?&quot;)?\s*\)/g,
    (_m, label: string, href: string) => {
      if (!SAFE_URL.test(href)) return label;
      return hold(`<a href="${href}" data-href="${href}" class="link">`) + label + hold("</a>");
    },
  );

  // Citation ids in square brackets become links the webview turns into "open entry".
  text = text.replace(/\[([^\]\s]+)\](?!\()/g, (m, id: string) => {
    if (!CITE_ID.test(id)) return m;
    return hold(`<a href="#" class="cite" data-cite="${id}" title="Open ${id}">${id}</a>`);
  });

  // Numbered citations: each number of the answer's sources links to its entry; out-of-range numbers stay text.
  const sources = opts.sources ?? [];
  if (sources.length > 0) {
    text = text.replace(NUMBERED_CITE, (m, list: string) => {
      const ns = list.split(",").map((x) => Number(x.trim()));
      if (!ns.every((n) => n >= 1 && n <= sources.length && CITE_ID.test(sources[n - 1] ?? ""))) return m;
      return ns
        .map((n) => {
          const id = sources[n - 1] ?? ""; // a CITE_ID: nothing to escape
          return hold(`<a href="#" class="cite cite-n" data-cite="${id}" data-n="${n}" title="Source ${n}: open ${id}">[${n}]</a>`);
        })
        .join("");
    });
  }

  // Hard line breaks: two trailing spaces or a backslash before the newline.
  text = text.replace(/(?: {2,}|\\)\n/g, () => hold("<br>"));

  text = text.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>");
  text = text.replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>");
  text = text.replace(/\*(?=[^\s*])([^*]*?[^\s*])\*/g, "<em>$1</em>");
  text = text.replace(/\*(?=[^\s*])([^*\s])\*/g, "<em>$1</em>");
  text = text.replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_]|[^\s_])_(?!\w)/g, "$1<em>$2</em>");
  text = text.replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>");

  // Fragments can hold other fragments (a link label with code in it), so restore until none remain.
  for (let guard = 0; guard < 8 && text.includes(PH_OPEN); guard++) {
    text = text.replace(PLACEHOLDER, (_m, n: string) => frags[Number(n)] ?? "");
  }
  return text;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const TABLE_SEP = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

function isBlank(line: string): boolean {
  return line.trim() === "";
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function leadingSpaces(line: string): number {
  const m = /^[ ]*/.exec(line.replace(/\t/g, "    "));
  return m ? m[0].length : 0;
}

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  const cells: string[] = [];
  let cur = "";
  for (let i = 0; i < row.length; i++) {
    const c = row[i];
    if (c === "\\" && row[i + 1] === "|") {
      cur += "|";
      i++;
    } else if (c === "|") {
      cells.push(cur.trim());
      cur = "";
    } else {
      cur += c;
    }
  }
  cells.push(cur.trim());
  return cells;
}

function alignClass(sep: string): string {
  const s = sep.trim();
  if (s.startsWith(":") && s.endsWith(":")) return ' class="align-center"';
  if (s.endsWith(":")) return ' class="align-right"';
  return "";
}

interface ListParse {
  html: string;
  next: number;
}

function parseList(lines: string[], start: number, opts: RenderOptions): ListParse {
  const first = LIST_ITEM.exec(lines[start] ?? "");
  if (!first) return { html: "", next: start + 1 };
  const ordered = /\d/.test(first[2] ?? "");
  const startNum = ordered ? parseInt(first[2] ?? "1", 10) : 1;
  const items: string[][] = [];
  let loose = false;
  let contentIndent = 0;
  let i = start;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const m = LIST_ITEM.exec(line);
    const sameKind = m !== null && /\d/.test(m[2] ?? "") === ordered;
    if (m && sameKind && (items.length === 0 || leadingSpaces(line) < contentIndent)) {
      // A sibling item (or the first one).
      contentIndent = (m[1] ?? "").length + (m[2] ?? "").length + Math.max((m[3] ?? "").length, 1);
      items.push([m[4] ?? ""]);
      i++;
      continue;
    }
    const current = items[items.length - 1];
    if (!current) break;
    if (isBlank(line)) {
      // A blank line continues the list only if more of it follows.
      let j = i + 1;
      while (j < lines.length && isBlank(lines[j] ?? "")) j++;
      const after = lines[j];
      if (after === undefined) break;
      const afterItem = LIST_ITEM.exec(after);
      const continues =
        leadingSpaces(after) >= contentIndent ||
        (afterItem !== null && /\d/.test(afterItem[2] ?? "") === ordered && leadingSpaces(after) < contentIndent);
      if (!continues) break;
      loose = true;
      current.push("");
      i++;
      continue;
    }
    if (leadingSpaces(line) >= contentIndent) {
      current.push(line.replace(/\t/g, "    ").slice(contentIndent));
      i++;
      continue;
    }
    const prev = lines[i - 1] ?? "";
    if (!isBlank(prev) && !startsBlock(line)) {
      // Lazy continuation of the item's paragraph.
      current.push(line.trim());
      i++;
      continue;
    }
    break;
  }
  const tag = ordered ? "ol" : "ul";
  const startAttr = ordered && startNum !== 1 ? ` start="${startNum}"` : "";
  const body = items.map((item) => `<li>${renderBlocks(trimTrailingBlanks(item), !loose, opts)}</li>`).join("");
  return { html: `<${tag}${startAttr}>${body}</${tag}>`, next: i };
}

function trimTrailingBlanks(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && isBlank(lines[end - 1] ?? "")) end--;
  return lines.slice(0, end);
}

function renderBlocks(lines: string[], tight: boolean, opts: RenderOptions): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const lang = (fence[2] ?? "").replace(/[^\w-]/g, "");
      const body: string[] = [];
      i++;
      while (i < lines.length) {
        const l = lines[i] ?? "";
        const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(l);
        if (close && (close[1] ?? "")[0] === marker[0] && (close[1] ?? "").length >= marker.length) {
          i++;
          break;
        }
        body.push(l);
        i++;
      }
      const cls = lang ? ` class="language-${lang}"` : "";
      out.push(`<pre><code${cls}>${escapeHtml(body.join("\n"))}</code></pre>`);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = (heading[1] ?? "#").length;
      out.push(`<h${level}>${renderInline(heading[2] ?? "", opts)}</h${level}>`);
      i++;
      continue;
    }
    if (HR.test(line)) {
      out.push("<hr>");
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length) {
        const l = lines[i] ?? "";
        if (QUOTE.test(l)) inner.push(l.replace(QUOTE, ""));
        else if (!isBlank(l) && !startsBlock(l) && inner.length > 0 && !isBlank(inner[inner.length - 1] ?? "")) inner.push(l);
        else break;
        i++;
      }
      out.push(`<blockquote>${renderBlocks(inner, false, opts)}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const list = parseList(lines, i, opts);
      out.push(list.html);
      i = list.next;
      continue;
    }
    const sep = lines[i + 1];
    if (line.includes("|") && sep !== undefined && TABLE_SEP.test(sep) && sep.includes("-")) {
      const header = splitRow(line);
      const aligns = splitRow(sep).map(alignClass);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && !isBlank(lines[i] ?? "") && (lines[i] ?? "").includes("|")) {
        rows.push(splitRow(lines[i] ?? ""));
        i++;
      }
      const th = header.map((c, k) => `<th${aligns[k] ?? ""}>${renderInline(c, opts)}</th>`).join("");
      const trs = rows
        .map((r) => `<tr>${header.map((_h, k) => `<td${aligns[k] ?? ""}>${renderInline(r[k] ?? "", opts)}</td>`).join("")}</tr>`)
        .join("");
      out.push(`<table><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table>`);
      continue;
    }
    const para: string[] = [line.trim() === "" ? line : line.replace(/^ {0,3}/, "")];
    i++;
    while (i < lines.length && !isBlank(lines[i] ?? "") && !startsBlock(lines[i] ?? "")) {
      para.push((lines[i] ?? "").replace(/^[ \t]+/, ""));
      i++;
    }
    const html = renderInline(para.join("\n"), opts);
    out.push(tight ? html : `<p>${html}</p>`);
  }
  return out.join(tight ? "\n" : "");
}

/** Render a markdown document (rule text, an answer, a trace value) to safe HTML. */
export function renderMarkdown(source: string, opts: RenderOptions = {}): string {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  return renderBlocks(lines, false, opts);
}
