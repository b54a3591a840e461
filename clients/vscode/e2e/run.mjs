// Drives code-server (real VS Code in a browser) with headless Chromium through the gmprep extension's
// user-facing flows. Started by scripts/e2e-vscode.sh, which provides:
//   GMPREP_E2E_URL (workbench URL with ?folder=), GMPREP_E2E_WS (the workspace folder on disk),
//   GMPREP_E2E_ARTIFACTS (screenshot folder), GMPREP_E2E_PROFILE (a temp Chromium profile), CHROMIUM.
// Each step saves NN-name.png; a failing step saves NN-name-FAILED.png and the run exits 1.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const url = must("GMPREP_E2E_URL");
const ws = must("GMPREP_E2E_WS");
const artifacts = must("GMPREP_E2E_ARTIFACTS");
const profile = must("GMPREP_E2E_PROFILE");
const NOTE = "troll-den.md";
const OTHER_NOTE = "brassbottle-shop.md";
const QUESTION = "What does the frightened condition do?";
const EXTENSION_ID = "gmprep.gmprep-vscode";

function must(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run scripts/e2e-vscode.sh)`);
  return v;
}

const started = Date.now();
const timings = [];
let stepNo = 0;

async function step(page, name, fn) {
  stepNo += 1;
  const tag = `${String(stepNo).padStart(2, "0")}-${name}`;
  const t = Date.now();
  try {
    const result = await fn();
    await page.screenshot({ path: join(artifacts, `${tag}.png`) });
    const ms = Date.now() - t;
    timings.push({ step: tag, ms });
    console.log(`  ok  ${tag} (${(ms / 1000).toFixed(1)} s)`);
    return result;
  } catch (error) {
    await page.screenshot({ path: join(artifacts, `${tag}-FAILED.png`) }).catch(() => {});
    console.log(`  FAIL ${tag}: ${error instanceof Error ? error.message : error}`);
    throw error;
  }
}

/** Poll `probe` until it returns a truthy value (or throw with `what` after `timeoutMs`). */
async function until(what, probe, timeoutMs = 30000, everyMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await probe();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`);
}

/** Screen rectangle of `text` in the visible editor lines (a DOM Range over the text node). */
async function textRect(page, text) {
  return page.evaluate((needle) => {
    for (const line of document.querySelectorAll(".monaco-editor .view-lines .view-line")) {
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      const nodes = [];
      let full = "";
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        nodes.push({ node: n, start: full.length });
        full += n.textContent.replace(/\u00a0/g, " ");
      }
      const at = full.indexOf(needle);
      if (at < 0) continue;
      const range = document.createRange();
      const locate = (offset) => {
        const hit = nodes.findLast((x) => x.start <= offset);
        return [hit.node, offset - hit.start];
      };
      range.setStart(...locate(at));
      range.setEnd(...locate(at + needle.length - 1));
      const r = range.getBoundingClientRect();
      return { x: r.left, y: r.top, width: r.width, height: r.height };
    }
    return null;
  }, text);
}

async function editorText(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".monaco-editor .view-lines .view-line")]
      .map((l) => l.textContent.replace(/\u00a0/g, " "))
      .join("\n"),
  );
}

async function runCommand(page, title) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`>${title}`);
  // Click the matching row: Enter could fire while the list still shows recently used commands.
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: 10000 });
  await row.click();
}

async function openNote(page, name = NOTE, marker = "frightened 2") {
  // The note's tab active in the active group: after a reload an entry document that could not be restored
  // may leave an empty group focused, with the note open (but not the active editor) in the other one.
  const active = page.locator(".editor-group-container.active .tabs-container .tab.active", { hasText: name });
  const tab = page.locator(".tabs-container .tab", { hasText: name }).first();
  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first();
  let tries = 0;
  // After a reload VS Code restores the note itself, or the side bar shows the chat instead of the explorer.
  await until(`${name} open in the editor`, async () => {
    if ((await active.count()) > 0 && (await editorText(page)).includes(marker)) return true;
    if (await tab.isVisible().catch(() => false)) await tab.click();
    else if (await row.isVisible().catch(() => false)) await row.click();
    else if (tries++ % 2 === 0) await runCommand(page, "View: Show Explorer");
    else await page.keyboard.press("Control+Shift+E");
    return false;
  }, 90000, 1500);
}

/** The chat webview: VS Code nests the extension's page in an inner iframe of the webview iframe. */
function chatFrame(page) {
  return page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).frameLocator("iframe#active-frame");
}

async function openChat(page) {
  const chat = chatFrame(page);
  const question = chat.locator('[data-testid="question"]');
  // A command, not the activity-bar icon: clicking the icon of the view already shown hides the side bar.
  if (!(await question.isVisible().catch(() => false))) await runCommand(page, "gmprep: Open rules chat");
  await question.waitFor({ state: "visible", timeout: 30000 });
  await widenSideBar(page);
  return chat;
}

/** Drag the side bar's edge so the chat is readable in the screenshots (VS Code remembers the width). */
async function widenSideBar(page) {
  const bar = await page.locator(".part.sidebar").boundingBox();
  if (!bar || bar.width >= 480) return;
  const y = bar.y + bar.height / 2;
  await page.mouse.move(bar.x + bar.width + 1, y);
  await page.mouse.down();
  await page.mouse.move(bar.x + 520, y, { steps: 8 });
  await page.mouse.up();
}

async function launch() {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
      "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  return { context, page, pageErrors };
}

/** The working extension: hover, insert, chat, citations, reload, history. */
async function mainScenario() {
  const { context, page, pageErrors } = await launch();

  await step(page, "workbench", async () => {
    await page.goto(url, { waitUntil: "domcontentloaded" });
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 90000 });
    await openNote(page);
  });

  await step(page, "server-ready", async () => {
    const item = page.locator(".statusbar-item", { hasText: "gmprep" }).first();
    // First start loads the index and the embedding model: give it time on a small CPU box.
    const text = await until("the gmprep status item to say the index is ready", async () => {
      const t = await item.textContent({ timeout: 1000 });
      if (/not running|index error/.test(t ?? "")) throw new Error(`status bar says: ${t}`);
      return /rules/.test(t ?? "") ? t : null;
    }, 180000, 1000);
    console.log(`       status bar: ${text.trim()}`);
  });

  await step(page, "hover-frightened", async () => {
    const hover = page.locator(".monaco-hover:visible, .monaco-resizable-hover:visible").first();
    const content = await until("a hover with the Frightened rule and its book", async () => {
      const r = await textRect(page, "frightened 2");
      if (!r) throw new Error('"frightened 2" is not on screen');
      await page.mouse.move(r.x - 40, r.y - 60); // off the word, so the next move is a fresh hover
      await page.mouse.move(r.x + r.width / 3, r.y + r.height / 2, { steps: 3 });
      await hover.waitFor({ state: "visible", timeout: 4000 });
      const t = (await hover.innerText()) ?? "";
      return /Frightened/.test(t) && /Player Core/.test(t) ? t : null;
    }, 90000, 500);
    await page.waitForTimeout(400); // let the hover finish fading in before the screenshot
    console.log(`       hover: ${content.replace(/\s+/g, " ").slice(0, 140)}`);
  });

  await step(page, "insert-rule-text", async () => {
    const r = await textRect(page, "frightened 2");
    await page.mouse.click(r.x + 3, r.y + r.height / 2);
    await page.keyboard.press("Escape");
    await runCommand(page, "gmprep: Insert rule text");
    await until("the quote in the editor", async () => /> \*\*Frightened\*\*/.test(await editorText(page)), 30000);
    await page.keyboard.press("Control+S");
    const file = join(ws, NOTE);
    const saved = await until("the quote saved in the file", async () => {
      const t = readFileSync(file, "utf8");
      return t.includes("[pf2e:condition:frightened]") ? t : null;
    }, 15000);
    const quote = saved.split("\n").filter((l) => l.startsWith(">")).join("\n");
    console.log(`       quote: ${quote.slice(0, 160).replace(/\n/g, " / ")}`);
  });

  let title = "";
  await step(page, "chat-answer", async () => {
    const chat = await openChat(page);
    await until("the chat to belong to the note", async () =>
      (await chat.locator('[data-testid="note-label"]').textContent()) === NOTE, 20000);
    await chat.locator('[data-testid="question"]').fill(QUESTION);
    await chat.locator('[data-testid="ask"]').click();
    const answer = chat.locator('[data-testid="assistant-message"]').last();
    await answer.waitFor({ state: "visible", timeout: 120000 });
    const deltas = Number((await chat.locator('[data-testid="messages"]').getAttribute("data-deltas")) ?? "0");
    if (deltas < 1) throw new Error("the answer did not stream (no gmprep/answerDelta reached the panel)");
    const text = await answer.locator(".body").innerText();
    const chips = (await answer.locator('[data-testid="citation"]').allInnerTexts()).map((c) => c.replace(/\s+/g, " "));
    if (chips.length === 0) throw new Error(`the answer has no citations: ${text.slice(0, 200)}`);
    if (!chips.some((c) => /Frightened/.test(c))) throw new Error(`no Frightened citation among: ${chips.join(" | ")}`);
    title = ((await chat.locator('[data-testid="conversation-title"]').textContent()) ?? "").trim();
    console.log(`       ${deltas} deltas; answer: ${text.replace(/\s+/g, " ").slice(0, 120)}`);
    console.log(`       citations: ${chips.join(" | ")}`);
  });

  await step(page, "trace-toggle", async () => {
    const chat = chatFrame(page);
    const toggle = chat.locator('[data-testid="assistant-message"]').last().locator('[data-testid="trace-toggle"]');
    if ((await toggle.count()) === 0) {
      console.log("       (the server recorded no trace for this answer: no toggle shown)");
      return;
    }
    await toggle.click();
    const steps = chat.locator('[data-testid="trace"] li');
    await until("trace steps", async () => (await steps.count()) > 0, 20000);
    const names = await chat.locator('[data-testid="trace"] li > strong').allInnerTexts();
    console.log(`       trace: ${names.join(" → ")}`);
  });

  await step(page, "chat-insert-citation", async () => {
    const before = (await editorText(page)).split("[pf2e:condition:frightened]").length - 1;
    const r = await textRect(page, "Sunken Abbey");
    await page.mouse.click(r.x + r.width + 2, r.y + r.height / 2);
    const chat = chatFrame(page);
    await chat.locator('[data-testid="assistant-message"]').last()
      .locator(".chip", { hasText: "Frightened" }).first().locator('[data-testid="citation-insert"]').click();
    await until("a second Frightened quote in the note", async () =>
      (await editorText(page)).split("[pf2e:condition:frightened]").length - 1 > before, 20000);
    const r2 = await textRect(page, "Sunken Abbey");
    await page.mouse.click(r2.x + 2, r2.y + r2.height / 2);
    await page.keyboard.press("Control+S");
  });

  await step(page, "ask-about-selection", async () => {
    const r = await textRect(page, "Demoralize");
    await page.mouse.dblclick(r.x + r.width / 2, r.y + r.height / 2);
    await runCommand(page, "gmprep: Ask about selection");
    const question = chatFrame(page).locator('[data-testid="question"]');
    await until("the selection in the question box", async () => (await question.inputValue()) === "Demoralize", 20000);
    await question.fill("");
  });

  await step(page, "citation-opens-entry", async () => {
    const chat = chatFrame(page);
    await chat.locator('[data-testid="assistant-message"]').last().locator('[data-testid="citation"]', { hasText: "Frightened" }).first().click();
    const tab = page.locator(".tabs-container .tab", { hasText: "Frightened" }).first();
    await tab.waitFor({ state: "visible", timeout: 20000 });
    await until("the entry text in the editor", async () => /gripped by fear/.test(await editorText(page)), 20000);
  });

  await step(page, "reload-history", async () => {
    await page.reload({ waitUntil: "domcontentloaded" });
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 90000 });
    await openNote(page);
    const chat = await openChat(page);
    await until("the chat to belong to the note after reload", async () =>
      (await chat.locator('[data-testid="note-label"]').textContent()) === NOTE, 60000);
    // The conversation that was open before the reload is open again.
    await chat.locator('[data-testid="assistant-message"]').first().waitFor({ state: "visible", timeout: 60000 });
    await page.screenshot({ path: join(artifacts, `${String(stepNo).padStart(2, "0")}-reload-restored.png`) });
    await chat.locator('[data-testid="new"]').click();
    await until("an empty conversation", async () => (await chat.locator('[data-testid="assistant-message"]').count()) === 0, 10000);
    await chat.locator('[data-testid="history"]').click();
    const item = chat.locator('[data-testid="conversation-item"]').first();
    await item.waitFor({ state: "visible", timeout: 30000 });
    const listed = await chat.locator('[data-testid="conversation-item"]').allInnerTexts();
    // The run starts from a store without conversations, so exactly the one asked above is listed.
    if (listed.length !== 1 || listed[0].trim() !== title) {
      throw new Error(`expected only "${title}" listed, got: ${listed.join(" | ")}`);
    }
    console.log(`       listed: ${listed.join(" | ")}`);
  });

  await step(page, "reopen-conversation", async () => {
    const chat = chatFrame(page);
    await chat.locator('[data-testid="conversation-item"]', { hasText: title }).first().click();
    const answer = chat.locator('[data-testid="assistant-message"]').last();
    await answer.waitFor({ state: "visible", timeout: 30000 });
    const asked = await chat.locator('[data-testid="user-message"]').first().innerText();
    if (asked.trim() !== QUESTION) throw new Error(`reopened conversation starts with "${asked}"`);
    if ((await answer.locator('[data-testid="citation"]').count()) === 0) throw new Error("reopened answer lost its citations");
  });

  await step(page, "switch-notes", async () => {
    // The chat belongs to the active note: another note has its own (empty) list; coming back restores ours.
    await openNote(page, OTHER_NOTE, "Brassbottle");
    const chat = await openChat(page); // opening the note from the explorer hid the chat
    const label = chat.locator('[data-testid="note-label"]');
    await until("the chat to switch to the other note", async () => (await label.textContent()) === OTHER_NOTE, 20000);
    await until("no conversation for the other note", async () =>
      (await chat.locator('[data-testid="assistant-message"]').count()) === 0, 10000);
    await page.screenshot({ path: join(artifacts, `${String(stepNo).padStart(2, "0")}-switch-notes-other.png`) });
    await page.locator(".tabs-container .tab", { hasText: NOTE }).first().click();
    await until("the chat to switch back", async () => (await label.textContent()) === NOTE, 20000);
    await chat.locator('[data-testid="assistant-message"]').first().waitFor({ state: "visible", timeout: 20000 });
  });

  await step(page, "stop-cancels", async () => {
    const chat = chatFrame(page);
    const before = await chat.locator('[data-testid="assistant-message"]').count();
    await chat.locator('[data-testid="question"]').fill("How does flanking work?");
    await chat.locator('[data-testid="ask"]').click();
    await chat.locator('[data-testid="stop"]').click({ timeout: 5000 });
    // The server answers a cancelled ask with what it had, saved with outcome "cancelled".
    await until("the cancelled answer", async () => (await chat.locator('[data-testid="assistant-message"]').count()) > before, 60000);
    const outcome = await chat.locator('[data-testid="assistant-message"]').last().locator(".outcome").innerText();
    if (!/cancelled/i.test(outcome)) throw new Error(`expected a cancelled answer, got outcome "${outcome}"`);
    if (!(await chat.locator('[data-testid="ask"]').isVisible())) throw new Error("the Ask button did not come back");
  });

  await step(page, "export", async () => {
    await chatFrame(page).locator('[data-testid="export"]').click();
    await until("the exported conversation in an editor", async () => (await editorText(page)).includes(`# ${QUESTION}`), 20000);
    const tab = page.locator(".tabs-container .tab.active", { hasText: "Untitled" }).first();
    await tab.waitFor({ state: "visible", timeout: 10000 });
    await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+End"); // the cancelled exchange is at the end of the export
    await until("the second exchange in the export", async () => (await editorText(page)).includes("How does flanking work?"), 10000);
  });

  await step(page, "delete", async () => {
    const chat = chatFrame(page);
    await chat.locator('[data-testid="delete"]').click();
    const confirm = page.locator(".monaco-dialog-box .monaco-button", { hasText: "Delete" }).first();
    await confirm.waitFor({ state: "visible", timeout: 10000 });
    await confirm.click();
    await until("an empty chat", async () => (await chat.locator('[data-testid="assistant-message"]').count()) === 0, 10000);
    await chat.locator('[data-testid="history"]').click();
    await until("an empty history", async () =>
      (await chat.locator('[data-testid="history-list"]').innerText()).includes("No conversations for this note yet."), 10000);
  });

  await step(page, "rebuild-index", async () => {
    // The status item follows the server's $/progress while the index rebuilds, then shows ready again.
    const item = page.locator(".statusbar-item", { hasText: "gmprep" }).first();
    await runCommand(page, "gmprep: Rebuild index");
    const seen = await until("the status item to show the build", async () => {
      const t = (await item.textContent()) ?? "";
      return /indexing/.test(t) ? t : null;
    }, 30000, 100);
    await page.screenshot({ path: join(artifacts, `${String(stepNo).padStart(2, "0")}-rebuild-index-progress.png`) });
    await until("the index to be ready again", async () => /rules/.test((await item.textContent()) ?? ""), 300000, 1000);
    console.log(`       status bar while building: ${seen.trim()}`);
  });

  await context.close();
  return pageErrors;
}

/** The code action menu (Ctrl+.) on the line holding `text`: click the entry whose label contains `label`. */
async function codeAction(page, text, label, shot) {
  // the editor may still be scrolling or re-rendering after the previous step: wait for the text
  const r = await until(`"${text}" on screen`, () => textRect(page, text), 15000, 250);
  await page.mouse.click(r.x + 4, r.y + r.height / 2);
  const row = page.locator(".action-widget .monaco-list-row", { hasText: label }).first();
  await until(`the code action "${label}"`, async () => {
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+.");
    await row.waitFor({ state: "visible", timeout: 4000 });
    return true;
  }, 60000, 1000);
  if (shot) await page.screenshot({ path: join(artifacts, shot) });
  const title = (await row.innerText()).trim();
  await row.click();
  return title;
}

async function waitForServer(page) {
  const item = page.locator(".statusbar-item", { hasText: "gmprep" }).first();
  return until("the gmprep status item to say the index is ready", async () => {
    const t = await item.textContent({ timeout: 1000 });
    if (/not running|index error/.test(t ?? "")) throw new Error(`status bar says: ${t}`);
    return /rules/.test(t ?? "") ? t : null;
  }, 180000, 1000);
}

/** GM creators (issue 14) on a prep note with encounter blocks and a statblock: inlay hints and code lens,
 * the hover explaining the arithmetic, "Build encounter" and "Insert creature statblock" actions, the
 * statblock quick fix, and a build request answered in the chat. */
async function creatorsScenario() {
  const { context, page, pageErrors } = await launch();
  const note = "reed-maze.md";
  const file = join(ws, note);
  const tag = () => String(stepNo).padStart(2, "0");

  await step(page, "creators-open", async () => {
    await page.goto(url, { waitUntil: "domcontentloaded" });
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 90000 });
    await openNote(page, note, "Reed Maze");
    await waitForServer(page);
  });

  await step(page, "creators-inlay-hints", async () => {
    // Inlay hints are injected text: they show in the editor's rendered lines.
    const text = await until("the XP inlay hints of the encounter blocks", async () => {
      const t = await editorText(page);
      return t.includes("70 XP · moderate (4 PCs, level 3)") && t.includes("2 × 10 = 20 XP (level -1)") ? t : null;
    }, 90000, 500);
    const lens = await until("the encounter code lens", async () => {
      const t = await page.locator(".monaco-editor .codelens-decoration").allInnerTexts();
      return t.find((x) => x.includes("Encounter: 70 XP")) ?? null;
    }, 30000, 500);
    const hinted = text.split("\n").filter((l) => /XP/.test(l));
    console.log(`       hints: ${hinted.slice(0, 4).join(" | ")}`);
    console.log(`       lens: ${lens}`);
  });

  await step(page, "creators-hover-arithmetic", async () => {
    const hover = page.locator(".monaco-hover:visible, .monaco-resizable-hover:visible").first();
    const content = await until("the encounter hover with the arithmetic and GM Core", async () => {
      const r = await textRect(page, "(4 PCs, level 3)");
      if (!r) throw new Error("the encounter heading is not on screen");
      await page.mouse.move(r.x - 40, r.y + 80);
      await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2, { steps: 3 });
      await hover.waitFor({ state: "visible", timeout: 4000 });
      const t = (await hover.innerText()) ?? "";
      return /Encounter: 70 XP, moderate/.test(t) && /GM Core/.test(t) ? t : null;
    }, 60000, 500);
    await page.waitForTimeout(400);
    console.log(`       hover: ${content.replace(/\s+/g, " ").slice(0, 160)}`);
  });

  await step(page, "creators-build-encounter", async () => {
    await page.mouse.move(5, 5);
    const title = await codeAction(page, "moderate encounter for 4 level-3 PCs", "Build encounter, option 1",
      `${tag()}-creators-build-encounter-menu.png`);
    await until("the encounter block in the editor", async () => /party: 4 PCs, level 3/.test(await editorText(page)), 30000);
    await until("the hints of the inserted block", async () =>
      ((await editorText(page)).match(/· moderate \(4 PCs, level 3\)/g) ?? []).length >= 2, 30000);
    console.log(`       action: ${title}`);
  });

  await step(page, "creators-insert-statblock", async () => {
    const title = await codeAction(page, "level 4 brute: a bog troll", "Insert creature statblock",
      `${tag()}-creators-insert-statblock-menu.png`);
    await until("the statblock in the editor", async () => /\*\*Creature 4\*\*/.test(await editorText(page)), 30000);
    await page.keyboard.press("Control+S");
    const saved = await until("the statblock saved in the file", async () => {
      const t = readFileSync(file, "utf8");
      return t.includes("**Creature 4**") && t.includes("GM Core, p. 117") ? t : null;
    }, 15000);
    const r = await textRect(page, "**Creature 4**");
    if (r) await page.mouse.wheel(0, Math.max(0, r.y - 200)); // the statblock in view for the screenshot
    await page.waitForTimeout(300);
    console.log(`       action: ${title}; ${saved.split("\n").filter((l) => /\*\*(AC|HP)\*\*/.test(l)).join(" / ")}`);
  });

  await step(page, "creators-statblock-fix", async () => {
    await page.keyboard.press("Control+End");
    const title = await codeAction(page, "25; **Fort**", "Use the table value 22", `${tag()}-creators-statblock-fix-menu.png`);
    await until("AC 22 in the editor", async () => /\*\*AC\*\* 22; \*\*Fort\*\* \+9/.test(await editorText(page)), 30000);
    console.log(`       quick fix: ${title}`);
  });

  await step(page, "creators-chat-build", async () => {
    const chat = await openChat(page);
    await until("the chat to belong to the note", async () =>
      (await chat.locator('[data-testid="note-label"]').textContent()) === note, 20000);
    await chat.locator('[data-testid="question"]').fill("build a moderate encounter for 4 level 3 PCs with undead");
    await chat.locator('[data-testid="ask"]').click();
    const answer = chat.locator('[data-testid="assistant-message"]').last();
    await answer.waitFor({ state: "visible", timeout: 120000 });
    const text = await answer.locator(".body").innerText();
    if (!/Option 1/.test(text) || !/party: 4 PCs, level 3/.test(text)) throw new Error(`not a built encounter: ${text.slice(0, 300)}`);
    const chips = (await answer.locator('[data-testid="citation"]').allInnerTexts()).map((c) => c.replace(/\s+/g, " "));
    if (!chips.some((c) => /Encounter Budget|GM Core/.test(c))) throw new Error(`no GM Core citation among: ${chips.join(" | ")}`);
    console.log(`       answer: ${text.replace(/\s+/g, " ").slice(0, 140)}`);
    console.log(`       citations: ${chips.slice(0, 5).join(" | ")}`);
  });

  await context.close();
  return pageErrors;
}

/** Point the user settings at another answer backend: VS Code reloads the file it watches and the extension
 * hands the change to the running server (workspace/didChangeConfiguration). */
function setLlmSettings(llm) {
  const file = must("GMPREP_E2E_SETTINGS");
  const settings = JSON.parse(readFileSync(file, "utf8"));
  for (const [k, v] of Object.entries(llm)) settings[`gmprep.llm.${k}`] = v;
  writeFileSync(file, JSON.stringify(settings, null, 2));
}

/** Sources first, then the answer (issue 13). First `gmprep.llm.backend` "auto" on a machine without a
 * model: a quoted answer and, once per session, the notice with the command that installs the model. Then
 * SmolLM2-135M through llama.cpp (the test model, CPU): the numbered sources appear before any answer text,
 * the model's answer streams in beneath them, and when it is done the sources it did not cite are dimmed. */
async function modelScenario() {
  const smollm2 = must("GMPREP_E2E_SMOLLM2");
  const { context, page, pageErrors } = await launch();
  const tag = () => String(stepNo).padStart(2, "0");
  const ask = async (chat, question) => {
    const before = await chat.locator('[data-testid="assistant-message"]').count();
    await chat.locator('[data-testid="question"]').fill(question);
    await chat.locator('[data-testid="ask"]').click();
    return before;
  };

  await step(page, "model-open", async () => {
    await page.goto(url, { waitUntil: "domcontentloaded" });
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 90000 });
    await openNote(page);
    console.log(`       status bar: ${(await waitForServer(page)).trim()}`);
  });

  await step(page, "auto-no-model-notice", async () => {
    const chat = await openChat(page);
    await until("the chat to belong to the note", async () =>
      (await chat.locator('[data-testid="note-label"]').textContent()) === NOTE, 20000);
    const notice = chat.locator('[data-testid="notice"]');
    for (const [i, question] of [QUESTION, "How does Demoralize work?"].entries()) {
      const before = await ask(chat, question);
      await until(`answer ${i + 1}`, async () => (await chat.locator('[data-testid="assistant-message"]').count()) > before, 120000);
      const backend = await chat.locator('[data-testid="messages"]').getAttribute("data-backend");
      if (backend !== "extractive") throw new Error(`auto without a model answered with ${backend}`);
      if (i === 0) {
        await notice.waitFor({ state: "visible", timeout: 10000 });
        const text = await notice.innerText();
        if (!/gmprep model install/.test(text)) throw new Error(`the notice has no install command: ${text}`);
        console.log(`       notice: ${text.replace(/\s+/g, " ").slice(0, 200)}`);
        await page.screenshot({ path: join(artifacts, `${tag()}-auto-no-model-notice-shown.png`) });
        await chat.locator('[data-testid="notice-dismiss"]').click();
      } else if (await notice.isVisible()) {
        throw new Error("the no-model notice came back on the second answer (it is shown once per session)");
      }
    }
  });

  await step(page, "model-settings", async () => {
    // A window reload reads the user settings afresh: the server restarts with the model backend.
    setLlmSettings({ backend: "llamacpp", modelPath: smollm2 });
    await page.reload({ waitUntil: "domcontentloaded" });
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 90000 });
    await openNote(page);
    await waitForServer(page);
    const chat = await openChat(page);
    await until("the chat to belong to the note after reload", async () =>
      (await chat.locator('[data-testid="note-label"]').textContent()) === NOTE, 60000);
  });

  await step(page, "model-sources-then-stream", async () => {
    const chat = chatFrame(page);
    await chat.locator('[data-testid="new"]').click();
    await until("an empty conversation", async () => (await chat.locator('[data-testid="assistant-message"]').count()) === 0, 10000);
    await ask(chat, QUESTION);
    const streaming = chat.locator('[data-testid="streaming-answer"]');
    const log = chat.locator('[data-testid="messages"]');
    // The model needs seconds to start; the sources are on screen before its first token.
    await streaming.locator('[data-testid="sources"]').waitFor({ state: "visible", timeout: 180000 });
    const atSources = await log.getAttribute("data-deltas-at-sources");
    if (atSources !== "0") throw new Error(`the sources came after ${atSources} answer deltas`);
    const sources = await streaming.locator('[data-testid="citation"]').allInnerTexts();
    console.log(`       sources (before any answer text): ${sources.map((s) => s.replace(/\s+/g, " ")).join(" | ")}`);
    // Catch the answer mid-stream under its sources for the screenshot (SmolLM2 on the CPU: a few seconds).
    const mid = await until("answer text streaming under the sources", async () => {
      const n = Number((await log.getAttribute("data-deltas")) ?? "0");
      if (n >= 8 && (await streaming.count()) > 0) return n;
      if ((await streaming.count()) === 0) return -1; // already finished
      return null;
    }, 120000, 50);
    console.log(mid > 0 ? `       screenshot mid-stream after ${mid} deltas` : "       (the answer finished before a mid-stream screenshot)");
  });

  await step(page, "model-answer-marks-used", async () => {
    const chat = chatFrame(page);
    const log = chat.locator('[data-testid="messages"]');
    await until("the finished model answer", async () => (await chat.locator('[data-testid="streaming-answer"]').count()) === 0, 180000);
    const answer = chat.locator('[data-testid="assistant-message"]').last();
    const backend = await log.getAttribute("data-backend");
    if (backend !== "llamacpp") throw new Error(`answered by ${backend}, not the model`);
    const deltas = Number((await log.getAttribute("data-deltas")) ?? "0");
    if (deltas < 2) throw new Error(`the model answer did not stream (${deltas} deltas)`);
    // sources above the answer text in the saved message too
    const order = await answer.evaluate((node) => {
      const src = node.querySelector('[data-testid="sources"]');
      const body = node.querySelector(".body");
      return src && body ? src.compareDocumentPosition(body) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
    });
    if (!order) throw new Error("the sources are not above the answer text");
    const marks = await answer.locator('[data-testid="source"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-cited")));
    if (marks.length === 0 || marks.some((m) => m !== "true" && m !== "false")) throw new Error(`sources not marked used/unused: ${marks}`);
    const caption = await answer.locator(".sources-title").innerText();
    const inline = await answer.locator(".body a.cite-n").count();
    const text = await answer.locator(".body").innerText();
    console.log(`       ${deltas} deltas; ${caption}; ${inline} inline [n] links`);
    console.log(`       answer: ${text.replace(/\s+/g, " ").slice(0, 160)}`);
    if (inline > 0) {
      // an inline [n] opens the n-th source's entry
      const link = answer.locator(".body a.cite-n").first();
      const n = await link.getAttribute("data-n");
      const name = (await answer.locator(`[data-testid="source"][data-n="${n}"] .chip-name`).innerText()).trim();
      await link.click();
      await page.locator(".tabs-container .tab", { hasText: name }).first().waitFor({ state: "visible", timeout: 20000 });
      console.log(`       [${n}] opened ${name}`);
    }
  });

  await context.close();
  return pageErrors;
}

/** A server that cannot start (settings point at a missing Python): a clear message and install help. */
async function noServerScenario() {
  const { context, page, pageErrors } = await launch();
  await step(page, "server-cannot-start", async () => {
    await page.goto(url, { waitUntil: "domcontentloaded" });
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 90000 });
    await openNote(page);
    const failure = page.locator(".notification-toast", { hasText: "could not start" }).first();
    await failure.waitFor({ state: "visible", timeout: 60000 });
    const message = await failure.locator(".notification-list-item-message").innerText();
    if (!/was not found/.test(message)) throw new Error(`unexpected message: ${message}`);
    await until("the status bar to say the server is not running", async () =>
      /not running/.test((await page.locator(".statusbar-item", { hasText: "gmprep" }).first().textContent()) ?? ""), 20000);
    console.log(`       message: ${message.replace(/\s+/g, " ").slice(0, 200)}`);
  });
  await step(page, "how-to-install", async () => {
    const toast = page.locator(".notification-toast", { hasText: "could not start" }).first();
    await toast.locator(".monaco-button", { hasText: "How to install" }).first().click();
    const tab = page.locator(".tabs-container .tab", { hasText: "README" }).first();
    await tab.waitFor({ state: "visible", timeout: 30000 });
    const preview = page
      .frameLocator('iframe.webview[src*="extensionId=vscode.markdown-language-features"]')
      .frameLocator("iframe#active-frame");
    await preview.getByText("Install (step by step)").first().waitFor({ state: "visible", timeout: 30000 });
    console.log(`       opened: ${(await tab.innerText()).trim()}`);
  });
  await context.close();
  return pageErrors;
}

async function main() {
  const scenario = process.argv[2] ?? "main";
  if (scenario === "no-server") stepNo = 30; // its screenshots sort after the main run's
  if (scenario === "creators") stepNo = 40;
  if (scenario === "model") stepNo = 50;
  const scenarios = { main: mainScenario, "no-server": noServerScenario, creators: creatorsScenario, model: modelScenario };
  if (!(scenario in scenarios)) throw new Error(`unknown scenario ${scenario}`);
  const pageErrors = await scenarios[scenario]();
  const total = Date.now() - started;
  writeFileSync(join(artifacts, `timings-${scenario}.json`), JSON.stringify({ totalMs: total, steps: timings, pageErrors }, null, 2));
  console.log(`e2e ${scenario}: all steps passed in ${(total / 1000).toFixed(1)} s (browser part)`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
