import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { statusLines } from "../../packages/pi-bonsai/src/status.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { assistantEntry, entry, userEntry } from "../helpers/session-builders.js";

const long = (label: string) => Array.from({ length: 300 }, (_, i) => `${label} ${i}`).join(" ");
const settings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 800 };

function conversation(turns: number): SessionEntry[] {
  const branch: SessionEntry[] = [];
  let parent: string | null = null;
  for (let i = 0; i < turns; i++) {
    const u = `u000000${i}`;
    const a = `a000000${i}`;
    branch.push(userEntry(u, parent, `request ${i}`), assistantEntry(a, u, long(`answer ${i}`)));
    parent = a;
  }
  return branch;
}

describe("/bonsai status lines", () => {
  it("reports the window, the threshold and what the next compaction would summarize and keep", () => {
    const lines = statusLines({ branch: conversation(4), usage: { tokens: 3000, contextWindow: 8000 }, settings });
    assert.match(lines[0], /^context: 3,000 tokens \(38%\) of the 8,000-token window; compaction at 7,000 \(window - reserve 1,000\)$/);
    assert.match(lines[1], /^next compaction: summarizes \d+ messages \(~[\d,]+ tokens\)(, splitting a turn)?; keeps \d+ messages? from entry [ua]000000\d/);
    assert.equal(lines[2], "last compaction: none on this branch");
  });

  it("reads the last compaction from the branch, and says what request pruning did", () => {
    const branch = conversation(3);
    branch.push(
      entry("compaction", "c0000001", branch.at(-1)!.id, {
        summary: "s",
        firstKeptEntryId: "u0000002",
        tokensBefore: 5123,
        details: { method: "extractive", coverage: { added: [{ kind: "request", text: "x" }, { kind: "error", text: "y" }] }, bonsai: { ms: 2500 } },
      }),
    );
    const lines = statusLines({ branch, settings, lastPruning: { replaced: 2, tokensSaved: 4100 } });
    assert.equal(lines[0], "context: no model selected, so no window to measure against");
    assert.match(lines[1], /^next compaction: /);
    assert.equal(lines[2], "last compaction: extractive in 2.5 s, 5,123 tokens before, kept from u0000002, coverage check added 2 facts");
    assert.equal(lines[3], "request pruning: 2 tool results replaced in the last request, ~4,100 tokens saved (the file is unchanged)");
  });

  it("an unknown token count right after a compaction is said as such", () => {
    const lines = statusLines({ branch: conversation(1), usage: { tokens: null, contextWindow: 8000 }, settings });
    assert.match(lines[0], /^context: unknown until the next answer of the 8,000-token window/);
  });
});
