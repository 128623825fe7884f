/**
 * Issue 19, item 2: two JSON objects glued on one line (two programs appending at once) are each
 * read as their own entry, in order, with a warning; a rewrite writes them on separate lines.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { splitGluedObjects } from "../../src/format/json-syntax.js";
import { SessionManager } from "../../src/session/manager.js";
import type { BodyLoading } from "../../src/storage/load.js";
import { assistantMsg, iso, tempDir, userMsg } from "../helpers/session-builders.js";

const { dir, cleanup } = tempDir();
after(cleanup);

const header = { type: "session", version: 3, id: "s-glued", timestamp: iso(0), cwd: "/w" };
const line = (value: unknown) => JSON.stringify(value);
const u1 = { type: "message", id: "aaaa0001", parentId: null, timestamp: iso(1), message: userMsg("first question") };
const a1 = { type: "message", id: "aaaa0002", parentId: "aaaa0001", timestamp: iso(2), message: assistantMsg("first answer") };
const c1 = { type: "compaction", id: "aaaa0003", parentId: "aaaa0002", timestamp: iso(3), summary: "## Goal\nanswer", firstKeptEntryId: "aaaa0002", tokensBefore: 10 };
const u2 = { type: "message", id: "aaaa0004", parentId: "aaaa0003", timestamp: iso(4), message: userMsg("second question") };

function gluedFile(name: string): string {
  const file = join(dir, name);
  writeFileSync(file, `${line(header)}\n${line(u1)}\n${line(a1)}${line(c1)}\n${line(u2)}\n`);
  return file;
}

describe("splitGluedObjects", () => {
  const bytes = (text: string) => Buffer.from(text, "utf8");
  it("finds each complete object of a run of objects, and nothing in one object or in broken text", () => {
    const text = '{"a":1}{"b":"}{"} {"c":[{}]}';
    const pieces = splitGluedObjects(bytes(text), 0, Buffer.byteLength(text));
    assert.deepEqual(pieces?.map(([s, e]) => text.slice(s, e)), ['{"a":1}', '{"b":"}{"}', '{"c":[{}]}']);
    assert.equal(splitGluedObjects(bytes('{"a":1}'), 0, 7), undefined);
    assert.equal(splitGluedObjects(bytes('{"a":1}{"b":'), 0, 12), undefined);
    assert.equal(splitGluedObjects(bytes('{"a":1}[1]'), 0, 10), undefined);
  });
});

for (const bodies of ["checked", "parsed", "eager"] as BodyLoading[]) {
  describe(`a line with two glued entries (${bodies})`, () => {
    it("gives both entries, in order, and warns about the repair", () => {
      const warnings: string[] = [];
      const session = SessionManager.open(gluedFile(`read-${bodies}.jsonl`), { readOnly: true, bodies, onWarning: (w) => warnings.push(w) });
      assert.deepEqual(session.getEntries().map((e) => e.id), ["aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004"]);
      assert.equal(session.getLeafId(), "aaaa0004");
      const context = session.buildSessionContext();
      assert.equal(context.messages[0].role, "compactionSummary");
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0], /:3: 2 JSON objects on one line/);
      session.close();
    });
  });
}

describe("a rewrite of a file with glued entries", () => {
  it("writes them on separate lines and keeps a backup", () => {
    const file = gluedFile("rewrite.jsonl");
    const original = readFileSync(file, "utf8");
    const session = SessionManager.open(file, { onWarning: () => {} });
    session.appendSessionInfo("renamed");
    session.close();
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    assert.deepEqual(lines.slice(1, 5), [line(u1), line(a1), line(c1), line(u2)]);
    const backups = readdirSync(dir).filter((f) => f.startsWith("rewrite.jsonl.bak"));
    assert.equal(backups.length, 1, `one backup, got ${backups.join(", ")}`);
    // the backup holds the file as it was before the rewrite: the glued line, then the append
    assert.ok(readFileSync(join(dir, backups[0]), "utf8").startsWith(original));
  });
});
