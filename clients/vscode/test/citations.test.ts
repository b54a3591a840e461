import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { citationLabel, formatRuleQuote, quoteHeader, slug } from "../src/shared/citations.js";
import type { Citation } from "../src/shared/protocol.js";

const frightened: Citation = {
  sourceId: "pf2e:condition:frightened",
  name: "Frightened",
  type: "condition",
  book: "Pathfinder Player Core",
  page: 433,
  path: ["Pathfinder Player Core", "Conditions"],
};

describe("citations", () => {
  it("labels a chip with type, book and page", () => {
    assert.equal(citationLabel(frightened), "Frightened (condition) — Pathfinder Player Core p. 433");
    assert.equal(citationLabel({ ...frightened, page: null }), "Frightened (condition) — Pathfinder Player Core");
  });

  it("writes the same quote header as the server", () => {
    assert.equal(quoteHeader(frightened), "> **Frightened** (condition) — Pathfinder Player Core [pf2e:condition:frightened]");
  });

  it("quotes an entry, dropping a heading that repeats its name", () => {
    const quote = formatRuleQuote({
      id: frightened.sourceId,
      citation: frightened,
      markdown: "\n# Frightened 1+\n\nYou're gripped by fear.\n\n- You can't reduce it below 0.\n\n",
    });
    assert.equal(
      quote,
      "> **Frightened** (condition) — Pathfinder Player Core [pf2e:condition:frightened]\n" +
        "> You're gripped by fear.\n>\n> - You can't reduce it below 0.\n",
    );
  });

  it("keeps a first heading that is not the entry's name", () => {
    const quote = formatRuleQuote({ id: "x", citation: frightened, markdown: "## Conditions\nText" });
    assert.match(quote, /\n> ## Conditions\n> Text\n$/);
  });

  it("slugs titles for file names", () => {
    assert.equal(slug("What does Frightened 2 do?"), "what-does-frightened-2-do");
    assert.equal(slug("Éclair à la crème"), "eclair-a-la-creme");
    assert.equal(slug("???"), "untitled");
  });
});
