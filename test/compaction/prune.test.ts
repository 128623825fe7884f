/**
 * Tool-output pruning with the archive of docs/ARCHITECTURE.md (storage decisions): thresholds, protected
 * tools, the notice, the sidecar file of originals, atomic rewrite, restore.
 */
import { entriesInContext } from "../../src/format/context.js";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  prunedArchivePath,
  pruneSession,
  readPrunedRecords,
  restorePrunedOutputs,
} from "../../src/ops/prune.js";
import { DEFAULT_PRUNE_CONFIG, planPruning, prunedNotice, pruneToolOutputs } from "../../src/compaction/prune.js";
import { estimateTokens } from "../../src/compaction/tokens.js";
import { convertToLlm } from "../../src/messages/convert.js";
import type { AgentMessage, ToolResultMessage } from "../../src/format/message-types.js";
import { SessionManager } from "../../src/session/manager.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { a, compaction, messageOf, path, text, tr, u } from "../helpers/paths.js";
import { tempDir } from "../helpers/session-builders.js";

const TEN_K = text(40_000); // 10,000 estimated tokens
const resultOf = (e: SessionEntry) => (e as { message: ToolResultMessage }).message;
const userMsgOf = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });

/** A user message, then `n` tool calls with results of `sizes[i]` characters, oldest first. */
function toolSession(sizes: number[], toolNames: string[] = []) {
  const specs = [u("go")];
  for (const [i, size] of sizes.entries()) {
    specs.push(a("", { calls: [{ name: toolNames[i] ?? "bash" }] }), tr(text(size), toolNames[i] ?? "bash"));
  }
  return path(...specs);
}
const resultIds = (entries: SessionEntry[]) => entries.filter((e) => e.type === "message" && e.message.role === "toolResult").map((e) => e.id);

describe("planPruning / pruneToolOutputs", () => {
  it("defaults: 40,000 protected, 20,000 minimum, skill and read protected", () => {
    assert.deepEqual({ ...DEFAULT_PRUNE_CONFIG, protectedTools: [...DEFAULT_PRUNE_CONFIG.protectedTools] }, {
      protectTokens: 40_000,
      minimumSavings: 20_000,
      protectedTools: ["skill", "read"],
    });
  });

  it("keeps the newest 40,000 tokens of tool output, the result crossing the line included, and prunes older ones", () => {
    const entries = toolSession([60_000, 60_000, 60_000, 60_000, 60_000]); // 15,000 tokens each
    const ids = resultIds(entries);
    const plan = planPruning(entries);
    // newest first: 0 -> 15k -> 30k seen before each; the third (30k before) crosses 40k and is still protected
    assert.deepEqual(plan.candidates.map((c) => c.entryId), [ids[1], ids[0]]);
    const notice = Math.ceil(prunedNotice(15_000).length / 4);
    assert.equal(plan.tokensSaved, 2 * (15_000 - notice));
    assert.deepEqual(plan.candidates[0], { entryId: ids[1], index: 4, toolName: "bash", tokens: 15_000, savings: 15_000 - notice });
  });

  it("prunes nothing when the savings stay under the minimum", () => {
    const entries = toolSession([40_000, 40_000, 40_000, 40_000, 40_000]); // 10k each: one candidate of 10k
    assert.deepEqual(planPruning(entries), { candidates: [], tokensSaved: 0 });
    assert.equal(planPruning(entries, { minimumSavings: 5000 }).candidates.length, 1);
    assert.deepEqual(pruneToolOutputs(entries), { prunedCount: 0, tokensSaved: 0, prunedEntryIds: [] });
    assert.equal(resultOf(entries[2]).prunedAt, undefined);
  });

  it("never prunes skill or read results", () => {
    const entries = toolSession([40_000, 40_000, 40_000, 40_000, 40_000, 40_000, 40_000, 40_000], ["read", "skill", "bash", "bash", "bash", "bash", "bash", "bash"]);
    const plan = planPruning(entries, { minimumSavings: 1 });
    assert.deepEqual(plan.candidates.map((c) => c.toolName), ["bash", "bash"]);
    assert.equal(planPruning(entries, { minimumSavings: 1, protectedTools: [] }).candidates.length, 4);
  });

  it("already pruned results count with their notice size and are not pruned again", () => {
    const entries = toolSession([40_000, 40_000, 40_000, 40_000, 40_000, 40_000, 40_000]);
    const first = pruneToolOutputs(entries, { now: 111 });
    assert.equal(first.prunedCount, 3);
    const again = planPruning(entries);
    assert.deepEqual(again.candidates, []);
  });

  it("pruneToolOutputs replaces content by the notice and sets one prunedAt, in place", () => {
    const entries = toolSession([40_000, 40_000, 40_000, 40_000, 40_000, 40_000, 40_000]);
    const oldest = resultOf(entries[2]);
    const result = pruneToolOutputs(entries, { now: 1234 });
    assert.equal(result.prunedCount, 3);
    assert.deepEqual(oldest.content, [{ type: "text", text: "[Output truncated - 10000 tokens]" }]);
    assert.equal(oldest.prunedAt, 1234);
    assert.equal(resultOf(entries[6]).prunedAt, 1234);
    assert.equal(resultOf(entries[8]).prunedAt, undefined, "within the protected 40k");
    assert.equal(estimateTokens(oldest), Math.ceil("[Output truncated - 10000 tokens]".length / 4));
    const [llm] = convertToLlm([oldest as AgentMessage]);
    assert.deepEqual((llm as ToolResultMessage).content, [{ type: "text", text: "[Output truncated - 10000 tokens]" }]);
  });

  it("a result smaller than its notice is left alone", () => {
    const entries = toolSession([400_000, 4, 4, 4]);
    const plan = planPruning(entries, { protectTokens: 1, minimumSavings: 1 });
    assert.deepEqual(plan.candidates.map((c) => c.index), [2]);
  });
});

describe("entriesInContext", () => {
  it("leaves out what the latest compaction summarized", () => {
    const entries = path(u("q"), a("x"), tr(TEN_K), u("q2"), compaction("s", "e3"), a("y"), tr(TEN_K));
    assert.deepEqual(entriesInContext(entries).map((e) => e.id), ["e3", "e5", "e6"]);
    assert.equal(entriesInContext(entries.slice(0, 3)).length, 3);
  });
});

/** A session file with `n` 10k-token bash results (and one compacted-away one), written to disk. */
function sessionFile(dir: string, n: number): string {
  const file = join(dir, "s.jsonl");
  const session = SessionManager.open(file);
  const add = (m: AgentMessage) => session.appendMessage(m);
  for (const spec of [u("q"), a("", { calls: [{ name: "bash" }] }), tr(TEN_K)]) add(messageOf(spec));
  const kept = add(userMsgOf("q2"));
  session.appendCompaction("summary", kept, 1, undefined);
  for (let i = 0; i < n; i++) {
    add(messageOf(a("", { calls: [{ name: "bash" }] })));
    add(messageOf(tr(`${i}:${TEN_K}`)));
  }
  session.close();
  return file;
}

describe("pruneSession and restorePrunedOutputs", () => {
  it("archives originals, rewrites the file, and restores them exactly", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = sessionFile(dir, 7);
      const original = readFileSync(file, "utf8");
      const session = SessionManager.open(file);
      const result = pruneSession(session, { now: 5000 });
      assert.equal(result.prunedCount, 3);
      assert.equal(result.archivePath, prunedArchivePath(file));
      assert.equal(result.contextTokensBefore - result.contextTokensAfter, result.tokensSaved);
      const records = readPrunedRecords(prunedArchivePath(file));
      assert.deepEqual(records.map((r) => r.entryId), result.candidates.map((c) => c.entryId));
      assert.deepEqual(records.map((r) => (r.content[0] as { text: string }).text.split(":")[0]), ["2", "1", "0"]);
      assert.ok(records.every((r) => r.prunedAt === 5000 && r.toolName === "bash" && r.tokens > 10_000));
      session.close();

      const reread = SessionManager.open(file, { readOnly: true });
      const pruned = reread.getBranch().filter((e) => e.type === "message" && e.message.role === "toolResult" && e.message.prunedAt === 5000);
      assert.equal(pruned.length, 3);
      const compactedAway = reread.getBranch()[2];
      assert.equal(resultOf(compactedAway).prunedAt, undefined, "tool output already compacted away is not rewritten");
      reread.close();

      const writer = SessionManager.open(file);
      const restored = restorePrunedOutputs(writer);
      assert.equal(restored.restored.length, 3);
      writer.close();
      assert.equal(readFileSync(file, "utf8"), original, "the file is byte for byte what it was");
    } finally {
      cleanup();
    }
  });

  it("restores one entry on request and reports what it cannot restore", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = sessionFile(dir, 7);
      const session = SessionManager.open(file);
      const { candidates } = pruneSession(session);
      const result = restorePrunedOutputs(session, { entryIds: [candidates[0].entryId, candidates[0].entryId.slice(0, 3), session.getBranch()[1].id] });
      assert.deepEqual(result.restored, [candidates[0].entryId]);
      assert.deepEqual(result.notRestored.map((r) => r.reason), ["no such entry", "not a tool result"]);
      const again = restorePrunedOutputs(session, { entryIds: [candidates[0].entryId] });
      assert.deepEqual(again.notRestored, [{ entryId: candidates[0].entryId, reason: "not pruned" }]);
      assert.equal(resultOf(session.getEntry(candidates[1].entryId)!).prunedAt !== undefined, true);
      session.close();
    } finally {
      cleanup();
    }
  });

  it("writes nothing when nothing qualifies, and nothing on a dry run", () => {
    const { dir, cleanup } = tempDir();
    try {
      const small = sessionFile(dir, 4);
      const before = statSync(small).mtimeMs;
      const bytes = readFileSync(small);
      const session = SessionManager.open(small);
      assert.equal(pruneSession(session).prunedCount, 0);
      session.close();
      assert.deepEqual(readFileSync(small), bytes);
      assert.equal(statSync(small).mtimeMs, before);
      assert.throws(() => statSync(prunedArchivePath(small)));

      const file = sessionFile(join(dir, "big"), 7);
      const content = readFileSync(file);
      const writer = SessionManager.open(file);
      const dry = pruneSession(writer, { dryRun: true });
      writer.close();
      assert.equal(dry.prunedCount, 3);
      assert.equal(dry.dryRun, true);
      assert.deepEqual(readFileSync(file), content);
      assert.throws(() => statSync(prunedArchivePath(file)));
    } finally {
      cleanup();
    }
  });

  it("the archive survives a torn last line: it is skipped on read and closed off on the next append", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = sessionFile(dir, 7);
      const session = SessionManager.open(file);
      pruneSession(session);
      appendFileSync(prunedArchivePath(file), '{"entryId":"torn');
      const warnings: string[] = [];
      assert.equal(readPrunedRecords(prunedArchivePath(file), (w) => warnings.push(w)).length, 3);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], /:4: unreadable line/);
      restorePrunedOutputs(session);
      assert.equal(pruneSession(session).prunedCount, 3, "pruned again after the restore");
      assert.equal(readPrunedRecords(prunedArchivePath(file)).length, 6, "new records on their own lines");
      session.close();
    } finally {
      cleanup();
    }
  });

  it("a read-only session cannot be pruned", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = sessionFile(dir, 7);
      const session = SessionManager.open(file, { readOnly: true });
      assert.throws(() => pruneSession(session), /read-only/);
      assert.throws(() => statSync(prunedArchivePath(file)), "refused before anything is archived");
    } finally {
      cleanup();
    }
  });
});
