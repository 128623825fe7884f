/**
 * Issue 28, item 3: undoing a compaction (or a branch summary) without rewriting anything. The context at the new leaf
 * is the one before the compaction plus what was written since; the compacted branch stays; the
 * file only grows; a label after the compaction is reported, not copied; a dry run writes nothing.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, readlinkSync, rmSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it, mock } from "node:test";
import { compactSession } from "../../src/ops/compact.js";
import { uncompactSession } from "../../src/ops/uncompact.js";
import { SessionManager } from "../../src/session/manager.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";
import { ROOT, runBonsai } from "../helpers/cli.js";
import { a, messageOf, u } from "../helpers/paths.js";
import { cjsFs, fullDisk, whileMocked } from "../helpers/fs-mocks.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-uncompact-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const contextOf = (file: string) => {
  const session = SessionManager.open(file, { readOnly: true });
  return session.buildSessionContext().messages;
};

describe("uncompactSession", () => {
  it("brings back the context before the compaction with what came after it, keeping the compacted branch", async () => {
    const file = join(dir, "s.jsonl");
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), file);
    const before = contextOf(file);
    const compacted = await compactSession(file, { summarizer: extractiveSummarizer() });
    assert.ok("compactionId" in compacted && compacted.compactionId);
    const session = SessionManager.open(file);
    const question = session.appendMessage(messageOf(u("Is the limiter per key or per IP?")));
    session.appendMessage(messageOf(a("Per API key, falling back to the client IP.")));
    session.appendLabelChange(question, "asked");
    const compactedLeaf = session.getLeafId();
    await session.close();
    const bytes = readFileSync(file);
    const later = contextOf(file).slice(-2);
    assert.notEqual(contextOf(file).length, before.length + 2, "the compaction shortened the context");

    const planned = await uncompactSession(file, { dryRun: true });
    assert.equal(planned.changed, false);
    assert.deepEqual(readFileSync(file), bytes, "a dry run writes nothing");

    const result = await uncompactSession(file);
    assert.equal(result.compactionId, compacted.compactionId);
    assert.equal(result.copied.length, 2);
    assert.deepEqual(result.skipped, [{ id: result.skipped[0]?.id, type: "label", reason: "labels an entry by id" }]);
    assert.deepEqual(readFileSync(file).subarray(0, bytes.length), bytes, "nothing before was rewritten");
    assert.deepEqual(contextOf(file), [...before, ...later], "the context before the compaction, then what came after it");

    const reopened = SessionManager.open(file, { readOnly: true });
    assert.equal(reopened.getLeafId(), result.newLeafId, "the new leaf persists");
    assert.ok(reopened.getEntry(compacted.compactionId as string), "the compaction is still in the tree");
    const leaves = reopened.getEntries().filter((e) => !reopened.getEntries().some((c) => c.parentId === e.id)).map((e) => e.id);
    assert.ok(leaves.includes(compactedLeaf as string), "the compacted branch is kept");
  });

  it("undoes a branch summary the same way: the place moved to without the summary, then what came after", async () => {
    const file = join(dir, "branch.jsonl");
    const session = SessionManager.open(file);
    const start = session.appendMessage(messageOf(u("Plan the cache.")));
    session.appendMessage(messageOf(a("Two options: LRU or TTL.")));
    session.appendMessage(messageOf(u("Try LRU.")));
    session.appendMessage(messageOf(a("LRU done, but it thrashes.")));
    const summaryId = session.branchWithSummary(start, "Tried an LRU cache; it thrashed under the load test.");
    session.appendMessage(messageOf(u("Now try TTL.")));
    session.appendMessage(messageOf(a("TTL done.")));
    const summarizedLeaf = session.getLeafId();
    await session.close();
    const withSummary = contextOf(file);
    assert.ok(withSummary.some((m) => m.role === "branchSummary"));

    await assert.rejects(uncompactSession(file), /no compaction on the current branch: nothing to undo/);
    const result = await uncompactSession(file, { type: "branch_summary" });
    assert.equal(result.compactionId, summaryId);
    assert.equal(result.type, "branch_summary");
    assert.equal(result.branchFromId, start);
    assert.deepEqual(contextOf(file), withSummary.filter((m) => m.role !== "branchSummary"), "the same context without the summary");
    const reopened = SessionManager.open(file, { readOnly: true });
    assert.ok(reopened.getEntries().some((e) => e.id === summarizedLeaf), "the branch with the summary is kept");
    await assert.rejects(uncompactSession(file, { type: "branch_summary" }), /no branch summary on the current branch: nothing to undo/);
    await assert.rejects(uncompactSession(file, { compactionId: start }), /is a message entry, not a compaction or a branch summary/);
  });

  it("a disk that fills during the copies leaves the file as it was, its leaf on the compacted branch", async () => {
    const file = join(dir, "full.jsonl");
    const session = SessionManager.open(file);
    session.appendMessage(messageOf(u("Plan the cache.")));
    session.appendMessage(messageOf(a("An LRU cache, sized by entries.")));
    const kept = session.appendMessage(messageOf(u("Size it by bytes.")));
    session.appendCompaction("The user wants a cache; LRU was chosen.", kept, 1000);
    const first = session.appendMessage(messageOf(u("Is the limit per key or per IP?")));
    session.appendMessage(messageOf(a("Per API key, falling back to the client IP.")));
    const compactedLeaf = session.getLeafId();
    await session.close();
    const bytes = readFileSync(file);
    const firstLine = bytes.toString("utf8").split("\n").find((line) => line.includes(first)) as string;
    // room for the first copy and a few bytes of the second: copied one append at a time, the
    // file's last line was the first copy, a leaf part of the way through
    const real = cjsFs.writeSync;
    const target = realpathSync(file);
    let room = Buffer.byteLength(firstLine) + 1 + 20;
    const toSession = (fd: number) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === target;
      } catch {
        return true;
      }
    };
    mock.method(cjsFs, "writeSync", (fd: number, buffer: Buffer, offset = 0, length = buffer.length - offset, ...rest: unknown[]) => {
      if (typeof buffer === "string" || !toSession(fd)) return (real as (...a: unknown[]) => number)(fd, buffer, offset, length, ...rest);
      if (room === 0) throw fullDisk();
      const n = real(fd, buffer, offset, Math.min(length, room));
      room -= n;
      return n;
    });
    await whileMocked(() => assert.rejects(uncompactSession(file), /ENOSPC/));
    assert.deepEqual(readFileSync(file), bytes, "no copy, and no torn line, is left in the file");
    const reopened = SessionManager.open(file, { readOnly: true });
    assert.equal(reopened.getLeafId(), compactedLeaf);
    assert.deepEqual(reopened.getLoadIssues(), []);
    void reopened.close();
    const result = await uncompactSession(file); // once there is room
    assert.equal(result.copied.length, 2);
  });

  it("says so when there is nothing to undo", async () => {
    const file = join(dir, "plain.jsonl");
    const session = SessionManager.open(file);
    session.appendMessage(messageOf(u("hello there")));
    await session.close();
    await assert.rejects(uncompactSession(file), (error: Error) => error.message === `${file}: no compaction on the current branch: nothing to undo`);
  });
});

describe("bonsai uncompact", () => {
  it("undoes the latest compaction and prints where the leaf went", async () => {
    const file = join(dir, "cli.jsonl");
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), file);
    assert.equal((await runBonsai(["compact", file, "-q"])).code, 0);
    const run = await runBonsai(["uncompact", file]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^undid compaction [0-9a-f]{8}: a new branch from 9dd1f14e with copies of 0 entries written since it\nleaf: 9dd1f14e \(was [0-9a-f]{8}\)/);
    // the example's own compaction, earlier on the branch, is next; then there is none left
    const earlier = await runBonsai(["uncompact", file, "--json"]);
    assert.equal(earlier.code, 0, earlier.stderr);
    assert.ok(JSON.parse(earlier.stdout).copied.length > 50, "everything written after the example's compaction is copied");
    assert.equal(JSON.parse(earlier.stdout).type, "compaction");
    const again = await runBonsai(["uncompact", file]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no compaction on the current branch: nothing to undo/);
    const both = await runBonsai(["uncompact", file, "--compaction", "abcd", "--branch-summary"]);
    assert.equal(both.code, 2, "--compaction and --branch-summary name different things");
    // the example's branch summary (a move in its tree) is undone with --branch-summary
    const branch = await runBonsai(["uncompact", file, "--branch-summary"]);
    assert.equal(branch.code, 0, branch.stderr);
    assert.match(branch.stdout, /^undid branch summary [0-9a-f]{8}: a new branch from [0-9a-f]{8} with copies of \d+ entries written since it\n/);
  });
});
