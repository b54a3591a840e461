import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { citationLabel, entryBody, formatRuleQuote, quoteHeader, slug } from "../src/shared/citations.js";
import type { Citation } from "../src/shared/protocol.js";

const frightened: Citation = {
  sourceId: "pf2e:condition:frightened",
  name: "Frightened",
  type: "condition",
  book: "Pathfinder Player Core",
  page: "433",
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

  it("quotes an entry's rule text without the card around it", () => {
    const markdown =
      "Pathfinder Player Core > Actions\n\n# Demoralize\n\n*action* · traits: auditory, fear\n" +
      "**Source:** Pathfinder Player Core · `pf2e:action:demoralize`\n\n**Actions** 1 action\n\n" +
      "With a sudden shout, you shake an enemy's resolve.\n- **Critical Success** The target becomes Frightened 2.\n\n" +
      "**Related:** Frightened (`pf2e:condition:frightened`)\n";
    const quote = formatRuleQuote({
      id: "pf2e:action:demoralize",
      citation: { ...frightened, sourceId: "pf2e:action:demoralize", name: "Demoralize", type: "action" },
      markdown,
    });
    assert.equal(
      quote,
      "> **Demoralize** (action) — Pathfinder Player Core [pf2e:action:demoralize]\n>\n" +
        "> **Actions** 1 action\n>\n> With a sudden shout, you shake an enemy's resolve.\n" +
        "> - **Critical Success** The target becomes Frightened 2.\n",
    );
  });

  it("quotes plain markdown without a card as it is", () => {
    assert.deepEqual(entryBody("Text one.\n\nText two.\n"), ["Text one.", "", "Text two."]);
  });

  it("writes just the header for an entry without text", () => {
    assert.equal(formatRuleQuote({ id: "x", citation: frightened, markdown: "# Frightened\n" }), `${quoteHeader(frightened)}\n`);
  });

  it("slugs titles for file names", () => {
    assert.equal(slug("What does Frightened 2 do?"), "what-does-frightened-2-do");
    assert.equal(slug("Éclair à la crème"), "eclair-a-la-creme");
    assert.equal(slug("???"), "untitled");
  });
});
