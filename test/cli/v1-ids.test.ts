/**
 * Issue 19, item 1: entries of an id-less (v1) file get the same ids on every read, so the ids
 * that one command prints are the ids the next command takes, and migration keeps them.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { runBonsai } from "../helpers/cli.js";
import { REAL_SESSION } from "../helpers/fixtures.js";

const tmp = mkdtempSync(join(tmpdir(), "bonsai-v1ids-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe("ids of a v1 file", () => {
  const file = join(tmp, "v1.jsonl");
  copyFileSync(REAL_SESSION, file);

  it("are the same on every read: tree's ids work with context --leaf", async () => {
    const first = await runBonsai(["tree", file, "--json"]);
    const second = await runBonsai(["tree", file, "--json"]);
    assert.equal(first.code, 0, first.stderr);
    const ids = JSON.parse(first.stdout).nodes.map((n: { id: string }) => n.id) as string[];
    assert.deepEqual(JSON.parse(second.stdout).nodes.map((n: { id: string }) => n.id), ids);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}$/);
    const middle = ids[Math.floor(ids.length / 2)];
    const context = await runBonsai(["context", file, "--leaf", middle, "--json"]);
    assert.equal(context.code, 0, context.stderr);
    assert.equal(JSON.parse(context.stdout).leafId, middle);
  });

  it("compact --dry-run names the first kept entry the real compact keeps, and migration keeps every id", async () => {
    const before = SessionManager.open(file, { readOnly: true });
    const idsBefore = before.getEntries().map((e) => e.id);
    before.close();
    const dry = await runBonsai(["compact", file, "--dry-run", "--json"]);
    assert.equal(dry.code, 0, dry.stderr);
    const real = await runBonsai(["compact", file, "--json"]);
    assert.equal(real.code, 0, real.stderr);
    assert.equal(JSON.parse(real.stdout).firstKeptEntryId, JSON.parse(dry.stdout).firstKeptEntryId);
    const after = SessionManager.open(file, { readOnly: true });
    const idsAfter = after.getEntries().map((e) => e.id);
    after.close();
    assert.deepEqual(idsAfter.slice(0, idsBefore.length), idsBefore);
  });
});
