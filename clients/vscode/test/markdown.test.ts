import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { escapeHtml, renderInline, renderMarkdown } from "../src/shared/markdown.js";

/** Every tag name in the output: the renderer may only ever produce these. */
const ALLOWED_TAGS = new Set([
  "p", "br", "strong", "em", "del", "code", "pre", "a", "blockquote", "ul", "ol", "li", "hr",
  "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
]);

function tags(html: string): string[] {
  return [...html.matchAll(/<\/?([a-zA-Z][\w-]*)/g)].map((m) => (m[1] ?? "").toLowerCase());
}

function assertSafe(html: string): void {
  for (const t of tags(html)) assert.ok(ALLOWED_TAGS.has(t), `unexpected tag <${t}> in ${html}`);
  // No event-handler attributes and no script URLs anywhere in markup we produced.
  const inTags = [...html.matchAll(/<[^>]*>/g)].map((m) => m[0]).join(" ");
  assert.doesNotMatch(inTags, /\son[a-z]+\s*=/i, `event handler attribute in ${html}`);
  assert.doesNotMatch(inTags, /javascript:|vbscript:|data:text/i, `script URL in ${html}`);
  assert.doesNotMatch(inTags, /\sstyle\s*=/i, `style attribute in ${html}`);
}

describe("escapeHtml", () => {
  it("escapes the five HTML-significant characters", () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});

describe("renderMarkdown: hostile input stays text", () => {
  const attacks = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "Hello <b onmouseover=alert(1)>there</b>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](jav&#x61;script:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '[x](https://ok.example/"onmouseover="alert(1))',
    "[x](https://ok.example/ \"title\" onclick=alert(1))",
    "`<script>alert(1)</script>`",
    "```html\n<script>alert(1)</script>\n```",
    "```\"><script>alert(1)</script>\nbody\n```",
    "> <iframe src=\"https://evil.example\"></iframe>",
    "- <svg onload=alert(1)>",
    "| a | <img src=x onerror=alert(1)> |\n|---|---|\n| <script>x</script> | y |",
    "# <style>body{display:none}</style>",
    "**<script>**alert(1)**</script>**",
    "[pf2e:x\" onclick=\"alert(1)]",
    "[<img src=x onerror=alert(1)>](https://ok.example)",
    "\u0000 0\u0001 [pf2e:condition:frightened] \u00000\u0001",
    "<!-- comment --><a href=\"javascript:alert(1)\">a</a>",
  ];
  for (const src of attacks) {
    it(`neutralises ${JSON.stringify(src).slice(0, 60)}`, () => {
      const html = renderMarkdown(src);
      assertSafe(html);
      assert.doesNotMatch(html, /<script|<img|<iframe|<svg|<style|<b\s/i);
    });
  }

  it("shows raw HTML as visible text", () => {
    assert.equal(renderMarkdown("<b>bold?</b>"), "<p>&lt;b&gt;bold?&lt;/b&gt;</p>");
  });

  it("drops unsafe link targets but keeps the label", () => {
    assert.equal(renderInline("[click](javascript:void0)"), "click");
    assert.equal(renderInline("[file](file:///etc/passwd)"), "file");
    // A target with parentheses is not a link at all: it stays literal text.
    assert.equal(renderInline("[click](javascript:alert(1))"), "[click](javascript:alert(1))");
  });

  it("keeps safe links, escaped, as data-href for the host to open", () => {
    const html = renderInline("see [AoN](https://2e.aonprd.com/Rules.aspx?ID=1&x=2)");
    assert.equal(
      html,
      'see <a href="https://2e.aonprd.com/Rules.aspx?ID=1&amp;x=2" data-href="https://2e.aonprd.com/Rules.aspx?ID=1&amp;x=2" class="link">AoN</a>',
    );
  });
});

describe("renderMarkdown: formatting", () => {
  it("renders emphasis, strong, strikethrough and code spans", () => {
    assert.equal(
      renderInline("a **strong** and *em* and _em2_ and ~~gone~~ and `co*de*`"),
      "a <strong>strong</strong> and <em>em</em> and <em>em2</em> and <del>gone</del> and <code>co*de*</code>",
    );
  });

  it("leaves snake_case words and lone asterisks alone", () => {
    assert.equal(renderInline("snake_case_name and 2 * 3 * 4"), "snake_case_name and 2 * 3 * 4");
  });

  it("renders citation ids as citation links", () => {
    assert.equal(
      renderInline("You are scared [pf2e:condition:frightened]."),
      'You are scared <a href="#" class="cite" data-cite="pf2e:condition:frightened" title="Open pf2e:condition:frightened">pf2e:condition:frightened</a>.',
    );
  });

  it("does not turn ordinary brackets into citations", () => {
    assert.equal(renderInline("[sic] and [1]"), "[sic] and [1]");
  });

  it("renders the rule quote the server inserts", () => {
    const html = renderMarkdown(
      "> **Frightened** (condition) — Pathfinder Player Core [pf2e:condition:frightened]\n> You're gripped by fear.",
    );
    assert.match(html, /^<blockquote><p><strong>Frightened<\/strong> \(condition\) — Pathfinder Player Core <a [^>]*data-cite="pf2e:condition:frightened"/);
    assert.match(html, /You&#39;re gripped by fear\.<\/p><\/blockquote>$/);
  });

  it("renders headings, paragraphs and thematic breaks", () => {
    assert.equal(renderMarkdown("## Title ##\n\nline one\nline two\n\n---\n\nend"), "<h2>Title</h2><p>line one\nline two</p><hr><p>end</p>");
  });

  it("renders hard line breaks", () => {
    assert.equal(renderMarkdown("a  \nb\\\nc"), "<p>a<br>b<br>c</p>");
  });

  it("renders tight and nested lists", () => {
    assert.equal(
      renderMarkdown("- one\n- two\n  - inner *x*\n- three"),
      "<ul><li>one</li><li>two\n<ul><li>inner <em>x</em></li></ul></li><li>three</li></ul>",
    );
  });

  it("renders ordered lists with their start number", () => {
    assert.equal(renderMarkdown("3. c\n4. d"), '<ol start="3"><li>c</li><li>d</li></ol>');
  });

  it("renders loose lists with paragraphs", () => {
    assert.equal(renderMarkdown("- a\n\n- b"), "<ul><li><p>a</p></li><li><p>b</p></li></ul>");
  });

  it("renders fenced code literally with a sanitised language class", () => {
    assert.equal(
      renderMarkdown("```py\"x\nif a < b and **c**:\n```"),
      '<pre><code class="language-pyx">if a &lt; b and **c**:</code></pre>',
    );
  });

  it("renders pipe tables with alignment classes", () => {
    assert.equal(
      renderMarkdown("| Level | DC |\n|:--|--:|\n| 1 | **15** |\n| 2 | 16 |"),
      '<table><thead><tr><th>Level</th><th class="align-right">DC</th></tr></thead>' +
        '<tbody><tr><td>1</td><td class="align-right"><strong>15</strong></td></tr>' +
        '<tr><td>2</td><td class="align-right">16</td></tr></tbody></table>',
    );
  });

  it("keeps escaped pipes inside table cells", () => {
    assert.match(renderMarkdown("| a |\n|---|\n| x \\| y |"), /<td>x \| y<\/td>/);
  });

  it("renders nested block quotes", () => {
    assert.equal(renderMarkdown("> a\n> > b"), "<blockquote><p>a</p><blockquote><p>b</p></blockquote></blockquote>");
  });

  it("normalises CRLF line endings", () => {
    assert.equal(renderMarkdown("a\r\nb\r\n\r\nc"), "<p>a\nb</p><p>c</p>");
  });
});

describe("renderMarkdown: numbered citations of an answer's sources", () => {
  const sources = ["pf2e:condition:frightened", "pf2e:action:demoralize"];

  it("links [n] to the n-th source", () => {
    const html = renderMarkdown("Frightened lowers checks [1].", { sources });
    assert.match(html, /<a href="#" class="cite cite-n" data-cite="pf2e:condition:frightened" data-n="1"[^>]*>\[1\]<\/a>/);
    assertSafe(html);
  });

  it("splits [1, 2] into one link per source", () => {
    const html = renderMarkdown("Both apply [1, 2].", { sources });
    assert.match(html, /data-n="1"[^>]*>\[1\]<\/a><a [^>]*data-cite="pf2e:action:demoralize" data-n="2"/);
  });

  it("leaves numbers that name no source as text, and [n] alone without sources", () => {
    assert.equal(renderMarkdown("See [3].", { sources }), "<p>See [3].</p>");
    assert.equal(renderMarkdown("See [1]."), "<p>See [1].</p>");
  });

  it("does not touch [n](url) links or code", () => {
    assert.doesNotMatch(renderMarkdown("`[1]` and [1](https://x.org)", { sources }), /cite-n/);
  });

  it("leaves [n] as text when its source is not a gmprep id", () => {
    const html = renderMarkdown("x [1]", { sources: ['a"><img src=x onerror=alert(1)>'] });
    assert.equal(html, "<p>x [1]</p>");
  });
});
