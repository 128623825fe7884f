/**
 * Issue 24: in a pi 1.x file (which reads context edits) `bonsai prune` appends `context_edit`
 * entries instead of rewriting the file, so every earlier byte stays where it was while pi may be
 * appending, and `--restore` appends the edits that undo them. Older dialects keep the rewrite
 * and the archive (test/compaction/prune.test.ts).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pruneToolOutput, restoreToolOutput } from "../../src/ops/prune-report.js";
import { prunedArchivePath } from "../../src/ops/prune.js";
import { SessionManager } from "../../src/session/manager.js";
import { oracleCases } from "../../oracle/cases.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);

const PRUNE = { protectTokens: 1, minimumSavings: 0 };
const textOf = (file: string, id: string) => {
  const session = SessionManager.open(file, { readOnly: true });
  try {
    const m = session.buildSessionContext().messages.find((x) => x.role === "toolResult" && (x as { toolCallId: string }).toolCallId === id);
    return JSON.stringify((m as { content: unknown }).content);
  } finally {
    void session.close();
  }
};

describe("pruning a pi 1.x session", () => {
  const c = oracleCases().find((x) => x.name === "pi1-context-edits")!;
  const original = `${c.lines.join("\n")}\n`;

  it("appends context edits: every earlier byte in place, no archive; --restore appends the edits that undo them", async () => {
    const file = join(temp.dir, "pi1.jsonl");
    writeFileSync(file, original);
    const outputBefore = textOf(file, "c3");
    const report = await pruneToolOutput(file, { config: PRUNE });
    assert.deepEqual(report.entries.map((e) => e.id), ["r3"]);
    assert.equal(report.contextEdits, true);
    assert.equal(report.archive, null);
    const pruned = readFileSync(file, "utf8");
    assert.ok(pruned.startsWith(original), "the file was rewritten");
    const added = pruned.slice(original.length).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(added.map((e) => [e.type, e.targetId, typeof e.prunedAt]), [["context_edit", "r3", "number"]]);
    assert.match(textOf(file, "c3"), /Output truncated/);
    assert.equal(existsSync(prunedArchivePath(file)), false);

    // a second prune finds nothing more: the edited result counts as pruned
    assert.equal((await pruneToolOutput(file, { config: PRUNE })).prunedCount, 0);

    const restored = await restoreToolOutput(file);
    assert.deepEqual(restored.restored, ["r3"]);
    assert.ok(readFileSync(file, "utf8").startsWith(pruned));
    assert.equal(textOf(file, "c3"), outputBefore);
    assert.deepEqual((await restoreToolOutput(file)).restored, [], "nothing left to restore");
  });
});
