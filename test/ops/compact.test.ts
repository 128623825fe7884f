/**
 * compactSession (ops/compact.ts) stores the coverage check's report: what it appended is in the
 * compaction entry's `details.coverage`, and the appended facts are in the stored summary.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CompactionDetails } from "../../src/compaction/compact.js";
import type { CompactionEntry } from "../../src/format/entry-types.js";
import { compactSession } from "../../src/ops/compact.js";
import { SessionManager } from "../../src/session/manager.js";
import { fakeSummarizer } from "../helpers/fake-summarizer.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";

describe("compactSession and the coverage check", () => {
  it("stores what the check appended in the entry", async () => {
    const session = SessionManager.inMemory("/project");
    session.appendMessage(messageOf(u("Speed up the search index build. Never drop the existing index before the new one is ready.")));
    session.appendMessage(messageOf(a("", { calls: [{ name: "bash", args: { command: "npm test" } }] })));
    session.appendMessage(messageOf(tr(`not ok 7 - rebuilds incrementally\n${"log line\n".repeat(300)}Command exited with code 1`)));
    session.appendMessage(messageOf(a("The incremental test fails. Should I keep the old builder as a fallback?")));
    session.appendMessage(messageOf(u("Yes, keep it behind a flag.")));
    session.appendMessage(messageOf(a("x".repeat(400))));
    const report = await compactSession(session, {
      keepRecentTokens: 105,
      shortSummary: false,
      summarizer: fakeSummarizer(() => "## Goal\nFaster builds."),
    });
    assert.ok(report.compacted);
    const entry = session.getEntry(report.compactionId as string) as CompactionEntry<CompactionDetails>;
    const coverage = entry.details?.coverage;
    assert.ok(coverage);
    assert.deepEqual(
      coverage.added.map((item) => item.kind),
      ["question", "error"],
    );
    for (const item of coverage.added) assert.ok(entry.summary.includes(item.text), `${item.kind} is in the stored summary`);
  });
});
