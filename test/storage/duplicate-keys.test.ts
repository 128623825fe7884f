/**
 * A message line with a key written twice (src/storage/bodies.ts): the open indexes the first
 * `id` read off the line's start, JSON.parse keeps the last, and every command used to fail with
 * "cannot read entry … back: it now holds entry dupe0001". Now the line is reported, the session
 * is read again in full, and the entry goes by the id JSON.parse keeps.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { runBonsai } from "../helpers/cli.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);
const T = "2026-01-01T00:00:00.000Z";

function sessionWithDuplicateId(): string {
  const file = join(temp.dir, "dupe.jsonl");
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: T, cwd: "/tmp" }),
    JSON.stringify({ type: "message", id: "aaaa0001", parentId: null, timestamp: T, message: { role: "user", content: "first", timestamp: 1 } }),
    `{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"${T}","message":{"role":"user","content":"second","timestamp":2},"id":"dupe0001"}`,
    JSON.stringify({ type: "message", id: "aaaa0003", parentId: "aaaa0002", timestamp: T, message: { role: "user", content: "third", timestamp: 3 } }),
  ];
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

describe("a key written twice in a message line", () => {
  it("is reported with its line, and the session works with the value JSON.parse keeps", () => {
    const warnings: string[] = [];
    const session = SessionManager.open(sessionWithDuplicateId(), { readOnly: true, onWarning: (w) => warnings.push(w) });
    try {
      const texts = session.buildSessionContext().messages.map((m) => (m as { content: unknown }).content);
      // the line is entry dupe0001 (JSON.parse's reading), so aaaa0003's parent aaaa0002 is missing
      assert.deepEqual(texts, ["third"]);
      assert.equal((session.getEntry("dupe0001") as { parentId?: string } | undefined)?.parentId, "aaaa0001");
      assert.equal(session.getEntry("aaaa0002"), undefined);
      const issue = session.getLoadIssues().find((i) => i.line === 3);
      assert.match(issue?.message ?? "", /the key `id` appears more than once; its last value "dupe0001"/);
      assert.equal(warnings.filter((w) => w.includes(":3: ")).length, 1, warnings.join("\n"));
    } finally {
      void session.close();
    }
  });

  it("info, tree and context answer; context, which reads the body, names the line", async () => {
    const file = sessionWithDuplicateId();
    for (const command of ["info", "tree", "context"]) {
      const run = await runBonsai([command, file]);
      assert.equal(run.code, 0, `${command}: ${run.stderr}`);
      assert.doesNotMatch(run.stderr, /cannot read entry/);
      if (command === "context") assert.match(run.stderr, /dupe\.jsonl:3: the key `id` appears more than once/);
    }
  });
});
