import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { estimateMessagesTokens } from "../../src/compaction/tokens.js";
import { SessionManager } from "../../src/session/manager.js";
import { contextEstimates, timelineOf } from "../../src/view/timeline.js";
import { entry, tempDir, userEntry } from "../helpers/session-builders.js";
import { compactedExample, largeSession } from "../helpers/view-sessions.js";

const { dir, cleanup } = tempDir();
after(cleanup);

/** The estimate `bonsai context --leaf ID` reports, for every entry of the active path. */
function contextNumbers(session: SessionManager): number[] {
  return session.getBranch().map((e) => estimateMessagesTokens(session.buildSessionContext(e.id).messages));
}

describe("contextEstimates", () => {
  it("equals the estimate of the context at every entry of the compacted example", async () => {
    const { file } = await compactedExample(dir);
    const session = SessionManager.open(file, { readOnly: true });
    try {
      const path = session.getBranch();
      assert.ok(path.some((e) => e.type === "compaction"));
      assert.deepEqual(contextEstimates(path), contextNumbers(session));
    } finally {
      await session.close();
    }
  });

  it("equals it on a generated session with a compaction that keeps 30 entries", async () => {
    const big = largeSession(dir, 60, 300);
    const session = SessionManager.open(big.file, { readOnly: true });
    try {
      assert.deepEqual(contextEstimates(session.getBranch()), contextNumbers(session));
    } finally {
      await session.close();
    }
  });

  it("counts only the summary after a compaction whose first kept entry is not on the path", () => {
    const path = [
      userEntry("u1", null, "x".repeat(400)),
      entry("compaction", "c1", "u1", { summary: "s".repeat(40), firstKeptEntryId: "gone", tokensBefore: 100 }),
      userEntry("u2", "c1", "y".repeat(80)),
    ];
    const [first, atCompaction, last] = contextEstimates(path);
    assert.ok(first >= 100);
    assert.ok(atCompaction < first, "the compaction drops the context");
    assert.ok(last > atCompaction);
  });
});

describe("timelineOf", () => {
  it("has a point per assistant turn and per compaction, with reported usage beside the estimate", async () => {
    const big = largeSession(dir, 20, 200);
    const session = SessionManager.open(big.file, { readOnly: true });
    try {
      const path = session.getBranch();
      const points = timelineOf(path);
      const assistants = path.filter((e) => e.type === "message" && e.message.role === "assistant").length;
      assert.equal(points.filter((p) => p.kind === "turn").length, assistants);
      const compaction = points.find((p) => p.kind === "compaction");
      assert.equal(compaction?.id, big.compactionId);
      assert.ok(compaction!.tokensBefore! > compaction!.estimate);
      assert.ok(points.filter((p) => p.kind === "turn").every((p) => typeof p.usage === "number" && p.usage > 0));
    } finally {
      await session.close();
    }
  });
});
