import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { randomBytes } from "node:crypto";
import { statusText } from "../src/shared/indexView.js";
import { chatShell, contentSecurityPolicy, makeNonce } from "../src/shared/webviewHtml.js";

describe("chat webview shell", () => {
  it("allows only nonce-carrying scripts and no network", () => {
    const csp = contentSecurityPolicy("https://res.example", "abc123");
    assert.match(csp, /^default-src 'none'/);
    assert.match(csp, /script-src 'nonce-abc123'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /connect-src 'none'/);
  });

  it("puts the nonce on the one script and the CSP in a meta tag", () => {
    const html = chatShell({ cspSource: "https://res.example", scriptUri: "https://res.example/w.js", styleUri: "https://res.example/c.css", nonce: "N0nce" });
    assert.equal([...html.matchAll(/<script/g)].length, 1);
    assert.match(html, /<script nonce="N0nce" src="https:\/\/res.example\/w.js"><\/script>/);
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;nonce-N0nce&#39;/);
  });

  it("makes distinct 32-character alphanumeric nonces", () => {
    const a = makeNonce((n) => randomBytes(n));
    const b = makeNonce((n) => randomBytes(n));
    assert.match(a, /^[A-Za-z0-9]{32}$/);
    assert.notEqual(a, b);
  });
});

describe("status-bar text", () => {
  it("shows index progress and entry counts", () => {
    assert.equal(statusText({ state: "building", message: "", percentage: 41.6, entries: null }), "$(sync~spin) gmprep: indexing 42%");
    assert.equal(statusText({ state: "ready", message: "", percentage: null, entries: 5364 }), "$(book) gmprep: 5,364 rules");
    assert.equal(statusText({ state: "offline", message: "", percentage: null, entries: null }), "$(error) gmprep: server not running");
  });
});
