/**
 * Issue 30: an agent's turn never rewrites the file to prune. Where the session's agent reads no
 * context edits (pi 0.73, oh-my-pi), a turn's pruning (ops/prune.ts requestOnly) changes what the
 * next requests send and nothing in the file: no byte moves, nothing is archived, a later rewrite
 * writes every original back byte for byte, and a restore in the same process puts them back in
 * memory. `bonsai prune` (no requestOnly) still archives and rewrites.
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { TITLE_SLOT_BYTES } from "../../src/format/title-slot.js";
import type { ToolResultMessage } from "../../src/format/message-types.js";
import { applySavings, prunedArchivePath, pruneSession, restorePrunedOutputs } from "../../src/ops/prune.js";
import { recallTools } from "../../src/agent/recall.js";
import { SessionManager } from "../../src/session/manager.js";
import { ODD_PRUNED_LINE, oddSessionLines, PRUNE_ONE, PRUNED_ID, PRUNED_LINE } from "../helpers/odd-session.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);
let counter = 0;

/** omp 18's title slot: JSON padded with spaces to 256 bytes with its newline. */
function ompSlot(): string {
  const bare = JSON.stringify({ type: "title", v: 1, title: "Prune test", source: "user", updatedAt: "2026-12-03T00:00:00.000Z", pad: "" });
  return JSON.stringify({ type: "title", v: 1, title: "Prune test", source: "user", updatedAt: "2026-12-03T00:00:00.000Z", pad: " ".repeat(TITLE_SLOT_BYTES - 1 - Buffer.byteLength(bare)) });
}

const DIALECTS: [string, () => string[]][] = [
  ["pi 0.73", () => oddSessionLines()],
  ["oh-my-pi 18", () => [ompSlot(), ...oddSessionLines()]],
];

const prunedResult = (session: SessionManager) =>
  session.buildSessionContext().messages.find((m): m is ToolResultMessage => m.role === "toolResult" && m.toolCallId === "tc0");

describe("pruning on an agent's turn, where the agent reads no context edits", () => {
  for (const [name, lines] of DIALECTS) {
    it(`${name}: what is sent is pruned, the file is not touched, a rewrite writes the originals, a restore puts them back`, async () => {
      const file = join(temp.dir, `turn-${++counter}.jsonl`);
      const original = `${lines().join("\n")}\n`;
      writeFileSync(file, original);
      const session = SessionManager.open(file);
      try {
        assert.equal(session.getDialect().contextEdits, false);
        const before = prunedResult(session)!;
        const result = pruneSession(session, { config: PRUNE_ONE, now: 1000, requestOnly: true });
        assert.equal(result.prunedCount, 1);
        assert.equal(result.requestOnly, true);
        assert.equal(result.archivePath, undefined);
        assert.equal(prunedResult(session)?.prunedAt, 1000, "the next request is sent the notice");
        assert.ok(result.contextTokensAfter < result.contextTokensBefore);
        assert.equal(readFileSync(file, "utf8"), original, "not a byte of the file changed");
        assert.equal(existsSync(prunedArchivePath(file)), false, "nothing archived: the file holds the original");
        assert.equal(pruneSession(session, { config: PRUNE_ONE, now: 2000, requestOnly: true }).prunedCount, 0, "pruned once");
        // the agent can still look back at the original: history_read reads it from memory
        const read = recallTools(session).find((t) => t.name === "history_read")!;
        const back = await read.execute("1", { ids: [PRUNED_ID] });
        assert.match(JSON.stringify(back.content), /old output old output/);

        // appends go on after it; a rewrite (asked for by something else) writes the original line back
        session.appendMessage({ role: "user", content: "go on", timestamp: 5 });
        const appended = readFileSync(file, "utf8");
        assert.ok(appended.startsWith(original));
        session.rewriteFile();
        assert.equal(readFileSync(file, "utf8"), appended, "the rewrite wrote every line as it was");
        assert.equal(prunedResult(session)?.prunedAt, 1000, "still pruned in what is sent");

        assert.deepEqual(restorePrunedOutputs(session).restored, [PRUNED_ID]);
        assert.deepEqual(prunedResult(session), before);
        assert.equal(readFileSync(file, "utf8"), appended);
      } finally {
        void session.close();
      }
      const reopened = SessionManager.open(file, { readOnly: true });
      try {
        assert.equal(prunedResult(reopened)?.prunedAt, undefined, "the next open reads the original");
      } finally {
        void reopened.close();
      }
    });
  }

  it("a restore and a second prune before the next rewrite keep the line byte for byte", () => {
    const file = join(temp.dir, `again-${++counter}.jsonl`);
    const lines = oddSessionLines();
    lines[PRUNED_LINE] = ODD_PRUNED_LINE; // a line JSON.stringify does not give back
    const original = `${lines.join("\n")}\n`;
    writeFileSync(file, original);
    const session = SessionManager.open(file);
    try {
      pruneSession(session, { config: PRUNE_ONE, now: 1000, requestOnly: true });
      session.rewriteFile();
      assert.deepEqual(restorePrunedOutputs(session).restored, [PRUNED_ID]);
      assert.equal(pruneSession(session, { config: PRUNE_ONE, now: 2000, requestOnly: true }).prunedCount, 1);
      session.rewriteFile();
      assert.equal(readFileSync(file, "utf8"), original);
    } finally {
      void session.close();
    }
  });

  it("an older format waiting for its first write is written before the notices go in, with the originals", () => {
    const file = join(temp.dir, `v1-${++counter}.jsonl`);
    copyFileSync(join(import.meta.dirname, "../fixtures/real/pi-large-session.v1.jsonl"), file);
    const session = SessionManager.open(file);
    let pruned: string[];
    try {
      const result = pruneSession(session, { config: { protectTokens: 1, minimumSavings: 0 }, now: 1000, requestOnly: true });
      pruned = result.candidates.map((c) => c.entryId);
      assert.ok(pruned.length > 0);
      session.appendMessage({ role: "user", content: "go on", timestamp: 5 });
    } finally {
      void session.close();
    }
    const written = readFileSync(file, "utf8");
    assert.match(written.slice(0, written.indexOf("\n")), /"version":3/, "migrated");
    assert.doesNotMatch(written, /"prunedAt"/, "no notice was written");
    const reopened = SessionManager.open(file, { readOnly: true });
    try {
      for (const id of pruned) {
        const entry = reopened.getEntry(id);
        assert.ok(entry?.type === "message" && entry.message.role === "toolResult" && entry.message.prunedAt === undefined, id);
      }
    } finally {
      void reopened.close();
    }
  });

  it("a fork written since does not hold the originals: a restore does not claim it put them back", () => {
    const file = join(temp.dir, `fork-${++counter}.jsonl`);
    writeFileSync(file, `${oddSessionLines().join("\n")}\n`);
    const session = SessionManager.open(file);
    try {
      pruneSession(session, { config: PRUNE_ONE, now: 1000, requestOnly: true });
      const fork = session.createBranchedSession(session.getLeafId()!)!;
      assert.notEqual(fork, file);
      assert.deepEqual(restorePrunedOutputs(session), { restored: [], notRestored: [] });
    } finally {
      void session.close();
    }
  });

  it("without requestOnly (bonsai prune), the original is archived and the file rewritten", () => {
    const file = join(temp.dir, `cli-${++counter}.jsonl`);
    writeFileSync(file, `${oddSessionLines().join("\n")}\n`);
    const session = SessionManager.open(file);
    try {
      const result = pruneSession(session, { config: PRUNE_ONE, now: 1000 });
      assert.equal(result.requestOnly, false);
      assert.ok(result.archivePath && existsSync(result.archivePath));
      assert.match(readFileSync(file, "utf8"), /"prunedAt":1000/);
    } finally {
      void session.close();
    }
  });

  it("savings on a turn (a superseded read) are made the same way", () => {
    const file = join(temp.dir, `savings-${++counter}.jsonl`);
    const header = { type: "session", version: 3, id: "s", timestamp: "2026-12-03T00:00:00.000Z", cwd: "/w" };
    const entry = (id: string, parentId: string | null, message: object) => ({ type: "message", id, parentId, timestamp: "2026-12-03T00:00:00.000Z", message });
    const read = (n: number) => ({ role: "assistant", content: [{ type: "toolCall", id: `c${n}`, name: "read", arguments: { path: "a.ts" } }], api: "x", provider: "p", model: "m", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: "toolUse", timestamp: n });
    const result = (n: number) => ({ role: "toolResult", toolCallId: `c${n}`, toolName: "read", content: [{ type: "text", text: `export const a = ${n}; ${"x".repeat(4000)}` }], isError: false, timestamp: n });
    const entries = [entry("u", null, { role: "user", content: "read a.ts twice", timestamp: 0 }), entry("a1", "u", read(1)), entry("r1", "a1", result(1)), entry("a2", "r1", read(2)), entry("r2", "a2", result(2))];
    const original = `${[header, ...entries].map((e) => JSON.stringify(e)).join("\n")}\n`;
    writeFileSync(file, original);
    const session = SessionManager.open(file);
    try {
      const saved = applySavings(session, { now: 1000, requestOnly: true });
      assert.deepEqual(
        saved.candidates.map((c) => c.entryId),
        ["r1"],
      );
      const sent = session.buildSessionContext().messages.find((m): m is ToolResultMessage => m.role === "toolResult" && m.toolCallId === "c1")!;
      assert.match(JSON.stringify(sent.content), /read again later/);
      assert.equal(readFileSync(file, "utf8"), original);
      assert.equal(existsSync(prunedArchivePath(file)), false);
    } finally {
      void session.close();
    }
  });
});
