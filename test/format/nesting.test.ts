/**
 * Entries nested deeper than JSON.stringify can handle (src/format/validate.ts, MAX_NESTING):
 * JSON.parse reads a 5,000-deep array, but every command that estimates, previews, serializes or
 * rewrites it then overflowed the stack naming no file or line. Such a line is now reported with
 * its number and skipped at read; the rest of the session works.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MAX_NESTING, nestsDeeperThan, validateEntry } from "../../src/format/validate.js";
import { SessionManager } from "../../src/session/manager.js";
import { runBonsai } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-nesting-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const nested = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
const T = "2026-01-01T00:00:00.000Z";
const usage = '{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}';

/** A session whose second message calls a tool with arguments nested `depth` levels. */
function sessionFile(depth: number): string {
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: T, cwd: "/tmp" }),
    JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: T, message: { role: "user", content: "hi", timestamp: 1 } }),
    `{"type":"message","id":"a2","parentId":"a1","timestamp":"${T}","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"x":${nested(depth)}}}],"provider":"p","model":"m","usage":${usage},"stopReason":"toolUse","timestamp":2}}`,
    JSON.stringify({ type: "message", id: "a3", parentId: "a2", timestamp: T, message: { role: "user", content: "after", timestamp: 3 } }),
  ];
  const file = join(dir, `deep-${depth}.jsonl`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

describe("nesting depth", () => {
  it("counts levels of arrays and objects exactly, without recursion", () => {
    assert.equal(nestsDeeperThan(JSON.parse(nested(10)), 10), false);
    assert.equal(nestsDeeperThan(JSON.parse(nested(11)), 10), true);
    assert.equal(nestsDeeperThan({ a: [{ b: 1 }] }, 3), false);
    assert.equal(nestsDeeperThan({ a: [{ b: {} }] }, 3), true);
    assert.equal(nestsDeeperThan(JSON.parse(nested(200_000)), MAX_NESTING), true);
    // across the depth where the walk leaves recursion for its own stack, still exact
    for (const limit of [63, 64, 65, 100]) {
      assert.equal(nestsDeeperThan(JSON.parse(nested(limit)), limit), false, `${limit} levels within ${limit}`);
      assert.equal(nestsDeeperThan(JSON.parse(nested(limit + 1)), limit), true, `${limit + 1} levels over ${limit}`);
    }
  });

  it("validateEntry refuses an entry nested deeper than MAX_NESTING, and keeps one at the limit", () => {
    const entry = (depth: number) => JSON.parse(`{"type":"custom","customType":"x","id":"c","parentId":null,"data":${nested(depth)}}`);
    assert.equal(validateEntry(entry(MAX_NESTING - 1)), undefined);
    assert.match(validateEntry(entry(5000)) ?? "", /nested more than 1000 levels deep/);
  });

  it("a session with a 5,000-deep line opens with that line reported; context and estimates work", () => {
    const session = SessionManager.open(sessionFile(5000), { readOnly: true });
    try {
      const context = session.buildSessionContext();
      assert.deepEqual(
        context.messages.map((m) => (m as { content: unknown }).content),
        ["after"],
        "the deep line is skipped, so a3 starts a new path",
      );
      const issues = session.getLoadIssues();
      assert.ok(
        issues.some((i) => i.line === 3 && i.skipped && /nested more than 1000 levels/.test(i.message)),
        JSON.stringify(issues),
      );
    } finally {
      void session.close();
    }
  });

  it("info, tree, context and compact --dry-run answer on it, naming the line instead of overflowing the stack", async () => {
    const file = sessionFile(5000);
    for (const command of [["info"], ["tree"], ["context"], ["compact", "--dry-run"]]) {
      const run = await runBonsai([...command, file]);
      assert.equal(run.code, 0, `${command.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, /deep-5000\.jsonl:3: invalid entry: arrays or objects nested more than 1000 levels deep; line skipped/);
      assert.doesNotMatch(run.stderr, /call stack/);
    }
  });
});
