/**
 * The free savings before a summary: superseded reads become notices pointing at the newer
 * entry, oversized results keep their head and tail; both archived and restorable.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { headAndTail, planOversizedResults, planSavings, planSupersededReads } from "../../src/compaction/prune-savings.js";
import { estimateTokens, messageTextTokens } from "../../src/compaction/tokens.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import type { ToolResultMessage } from "../../src/format/message-types.js";
import { applySavings, prunedArchivePath, readPrunedRecords, restorePrunedOutputs } from "../../src/ops/prune.js";
import { SessionManager } from "../../src/session/manager.js";
import { a, messageOf, path, text, tr, u } from "../helpers/paths.js";
import { tempDir } from "../helpers/session-builders.js";

const call = (name: string, args: Record<string, unknown>) => a("", { calls: [{ name, args }] });
const resultText = (e: SessionEntry) => ((e as { message: ToolResultMessage }).message.content[0] as { text: string }).text;

describe("planSupersededReads", () => {
  it("a read of the same file later makes the older one a notice pointing at the newer entry", () => {
    const entries = path(u("go"), call("read", { path: "src/a.ts" }), tr(text(4000), "read"), call("read", { path: "./src/a.ts" }), tr(text(4000), "read"));
    const plan = planSupersededReads(entries);
    assert.equal(plan.length, 1);
    assert.equal(plan[0].entryId, entries[2].id);
    assert.match(plan[0].content[0].text, new RegExp(`src/a.ts was read again later \\(entry ${entries[4].id}\\)`));
    assert.ok(plan[0].savings > 900);
  });

  it("a write or edit after a read supersedes it; reads of other ranges or files do not", () => {
    const entries = path(
      u("go"),
      call("read", { path: "a.ts" }),
      tr(text(4000), "read"),
      call("read", { path: "b.ts", offset: 1, limit: 100 }),
      tr(text(4000), "read"),
      call("read", { path: "b.ts", offset: 101, limit: 100 }),
      tr(text(4000), "read"),
      call("edit", { path: "a.ts", oldText: "x", newText: "y" }),
      tr("edited", "edit"),
    );
    const plan = planSupersededReads(entries);
    assert.deepEqual(plan.map((c) => c.entryId), [entries[2].id]);
    assert.match(plan[0].content[0].text, /a.ts was changed later by edit/);
  });

  it("failed reads and already pruned results are left alone", () => {
    const entries = path(u("go"), call("read", { path: "a.ts" }), tr(text(4000), "read", { isError: true }), call("read", { path: "a.ts" }), tr(text(4000), "read"));
    assert.deepEqual(planSupersededReads(entries), []);
    const pruned = path(u("go"), call("read", { path: "a.ts" }), tr("[Output truncated - 1000 tokens]", "read", { prunedAt: 1 }), call("read", { path: "a.ts" }), tr(text(4000), "read"));
    assert.deepEqual(planSupersededReads(pruned), []);
  });
});

describe("planOversizedResults", () => {
  it("results over the limit keep head and tail with a notice, about the limit in size", () => {
    const big = `HEAD${"m".repeat(80_000)}TAIL`;
    const entries = path(u("go"), call("bash", {}), tr(big), call("bash", {}), tr(text(400)));
    const plan = planOversizedResults(entries, 8000);
    assert.equal(plan.length, 1);
    const replacement = plan[0].content[0].text;
    assert.ok(replacement.startsWith("HEAD") && replacement.endsWith("TAIL"));
    assert.match(replacement, /tokens cut from the middle of this output/);
    assert.ok(messageTextTokens(replacement) <= 8000, `${messageTextTokens(replacement)} tokens`);
    assert.deepEqual(planOversizedResults(entries, 0), [], "0 turns it off");
  });

  it("headAndTail reports how much was cut", () => {
    const cut = headAndTail("x".repeat(40_000), 10_000, 1000);
    assert.match(cut, /\[\.\.\. \d+ of 10000 tokens cut/);
  });
});

describe("planSavings", () => {
  it("a result both superseded and oversized gets the superseded notice; newest first", () => {
    const entries = path(u("go"), call("read", { path: "a.ts" }), tr(text(80_000), "read"), call("bash", {}), tr(text(80_000)), call("read", { path: "a.ts" }), tr(text(400), "read"));
    const plan = planSavings(entries, { maxResultTokens: 8000 });
    assert.deepEqual(plan.map((c) => [c.entryId, c.kind]), [
      [entries[4].id, "oversized"],
      [entries[2].id, "superseded"],
    ]);
    assert.deepEqual(planSavings(entries, { maxResultTokens: 0, supersededReads: false }), []);
  });
});

describe("applySavings", () => {
  it("archives the originals, rewrites the file, and restore puts them back byte for byte", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, "s.jsonl");
      const writer = SessionManager.open(file);
      const specs = [u("go"), call("read", { path: "a.ts" }), tr(`v1 ${text(8000)}`, "read"), call("write", { path: "a.ts", content: "new" }), tr("written", "write"), call("bash", {}), tr(`OUT${"z".repeat(50_000)}END`)];
      for (const spec of specs) writer.appendMessage(messageOf(spec));
      writer.close();
      const original = readFileSync(file, "utf8");

      const session = SessionManager.open(file);
      const result = applySavings(session, { config: { maxResultTokens: 2000 }, now: 7000 });
      assert.equal(result.prunedCount, 2);
      assert.equal(result.archivePath, prunedArchivePath(file));
      const branch = session.getBranch();
      assert.match(resultText(branch[2]), /a.ts was changed later by write/);
      assert.ok(resultText(branch[6]).startsWith("OUT") && resultText(branch[6]).endsWith("END"));
      assert.ok(estimateTokens((branch[6] as { message: ToolResultMessage }).message) <= 2000);
      assert.equal(readPrunedRecords(prunedArchivePath(file)).length, 2);
      assert.equal(restorePrunedOutputs(session).restored.length, 2);
      session.close();
      assert.equal(readFileSync(file, "utf8"), original);
    } finally {
      cleanup();
    }
  });
});
