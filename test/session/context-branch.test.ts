/**
 * getContextBranch, the end of the branch a context is built from, stands in for the whole branch
 * in the checks an agent makes every turn (ops/prune.ts, agent/compaction-control.ts): at every
 * leaf of every fixture and of a generated branched session with compactions, it gives the same
 * entries in context, the same context messages, the same answer to "before the latest
 * compaction?", while reading only from where the context starts.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { generateSession } from "../../bench/generate.js";
import { isBeforeLatestCompaction } from "../../src/agent/overflow.js";
import { contextFromPath, entriesInContext } from "../../src/format/context.js";
import { shownMessages } from "../../src/format/context.js";
import { SessionManager } from "../../src/index.js";

const FIXTURES = resolve(import.meta.dirname, "../fixtures");
const dir = mkdtempSync(join(tmpdir(), "bonsai-context-branch-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function sessions(): string[] {
  const files = readdirSync(join(FIXTURES, "conformance"))
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => join(FIXTURES, "conformance", f));
  files.push(join(FIXTURES, "real/pi-large-session.v1.jsonl"));
  const generated = join(dir, "branched.jsonl");
  generateSession(generated, { entries: 3000, branched: true, compactEvery: 250, seed: 11 });
  files.push(generated);
  return files;
}

test("at every leaf, the end of the branch from where the context starts answers as the whole branch does", () => {
  let leaves = 0;
  let shorter = 0;
  for (const file of sessions()) {
    const session = SessionManager.open(file, { readOnly: true });
    try {
      const dialect = session.getDialect();
      const ids = session.getEntries().map((e) => e.id);
      // every leaf of the small files, every 7th of the large ones
      const step = ids.length > 300 ? 7 : 1;
      for (let i = 0; i < ids.length; i += step) {
        const full = session.getBranch(ids[i]);
        const end = session.getContextBranch(ids[i]);
        const where = `${file}, leaf ${ids[i]}`;
        assert.deepEqual(end, full.slice(full.length - end.length), `${where}: a suffix of the branch`);
        if (end.length < full.length) shorter++;
        assert.deepEqual(entriesInContext(end, dialect), entriesInContext(full, dialect), `${where}: entries in context`);
        const messages = contextFromPath(full, dialect).messages;
        assert.deepEqual(contextFromPath(end, dialect).messages, messages, `${where}: context messages`);
        assert.deepEqual(shownMessages(end, dialect), shownMessages(full, dialect), `${where}: messages as shown`);
        for (const message of messages) assert.equal(isBeforeLatestCompaction(end, message), isBeforeLatestCompaction(full, message), `${where}: stale`);
        leaves++;
      }
    } finally {
      session.close();
    }
  }
  assert.ok(leaves > 500, `checked ${leaves} leaves`);
  assert.ok(shorter > leaves / 3, `the context branch is shorter than the branch at ${shorter} of ${leaves} leaves`);
});
