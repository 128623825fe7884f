/**
 * The open index (storage/open-index-file.ts) is a cache: whatever state it is in (none, current,
 * left behind by another writer's appends, torn, or describing a file another program rewrote),
 * an open through it gives exactly what a read of every line gives: entries, leaf, context, tree,
 * and the same warnings at the same lines.
 */
import assert from "node:assert/strict";
import { appendFileSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { SessionManager } from "../../src/index.js";
import { TreeIndex } from "../../src/session/tree.js";
import { openIndexPath, readThroughOpenIndex, WRITE_AFTER_BYTES } from "../../src/storage/open-index-file.js";
import { decodeIndex } from "../../src/storage/open-index-codec.js";

let dir: string;
const indexDir = () => join(dir, "index");
const withIndex = () => ({ ...process.env, BONSAI_INDEX_DIR: indexDir(), BONSAI_INDEX: "" });
const withoutIndex = () => ({ ...process.env, BONSAI_INDEX: "off" });

before(() => {
  dir = mkdtempSync(join(tmpdir(), "bonsai-open-index-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const text = (n: number) => `step ${n}: ${"the parser reads the session and keeps the tree ".repeat(12)}`;

/** A session of `turns` user/assistant pairs with a label, a custom entry, a compaction, a malformed line and an unknown type. */
function sessionText(turns: number, idPrefix = "e"): string {
  let out = line({ type: "session", version: 3, id: "s-1", timestamp: "2026-12-01T00:00:00.000Z", cwd: "/work" });
  let parent: string | null = null;
  let n = 0;
  const add = (entry: Record<string, unknown>) => {
    const id = `${idPrefix}${n++}`;
    out += line({ ...entry, id, parentId: parent, timestamp: "2026-12-01T00:00:00.000Z" });
    parent = id;
    return id;
  };
  for (let t = 0; t < turns; t++) {
    const user = add({ type: "message", message: { role: "user", content: [{ type: "text", text: text(t) }], timestamp: t } });
    add({ type: "message", message: { role: "assistant", content: [{ type: "text", text: text(t) }], api: "x", provider: "p", model: "m", usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 }, stopReason: "stop", timestamp: t } });
    if (t === 3) add({ type: "label", targetId: user, label: "start" });
    if (t === 5) out += "{ this line is not JSON\n";
    if (t === 6) add({ type: "custom", customType: "other.agent", data: { t } });
    if (t === 7) add({ type: "future_kind", note: "kept, ignored" });
    if (t === turns - 4) add({ type: "compaction", summary: "what came before", firstKeptEntryId: user, tokensBefore: 1000 });
  }
  return out;
}

interface Seen {
  entries: unknown;
  leaf: string | null;
  context: unknown;
  tree: unknown;
  warnings: string[];
}

/** Everything an open shows, with the index on or off. */
function seen(path: string, env: NodeJS.ProcessEnv): Seen {
  const saved = { BONSAI_INDEX: process.env.BONSAI_INDEX, BONSAI_INDEX_DIR: process.env.BONSAI_INDEX_DIR };
  Object.assign(process.env, { BONSAI_INDEX: env.BONSAI_INDEX ?? "", BONSAI_INDEX_DIR: env.BONSAI_INDEX_DIR ?? "" });
  const warnings: string[] = [];
  try {
    const session = SessionManager.open(path, { readOnly: true, onWarning: (w) => warnings.push(w) });
    try {
      return { entries: session.getEntries(), leaf: session.getLeafId(), context: session.buildSessionContext(), tree: JSON.parse(JSON.stringify(session.getTree())), warnings };
    } finally {
      session.close();
    }
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** How many bytes an open through the index read from the file's lines. */
function scanned(path: string): number {
  const fd = openSync(path, "r");
  try {
    return readThroughOpenIndex(path, fd, "checked", new TreeIndex(), withIndex()).scanned;
  } finally {
    closeSync(fd);
  }
}

const sameAsFullRead = (path: string) => assert.deepEqual(seen(path, withIndex()), seen(path, withoutIndex()));

describe("open index", () => {
  test("no index: the open reads every line, matches a full read, and leaves an index the next open reads instead", () => {
    const path = join(dir, "fresh.jsonl");
    writeFileSync(path, sessionText(200));
    assert.ok(statSync(path).size >= WRITE_AFTER_BYTES, "the session is large enough to be indexed");
    sameAsFullRead(path);
    const where = openIndexPath(path, withIndex())!.where;
    assert.ok(statSync(where).isFile());
    assert.equal(statSync(where).mode & 0o777, 0o600, "the index is private to the user");
    assert.equal(scanned(path), 0, "a current index: no line read");
    sameAsFullRead(path);
    assert.deepEqual(readdirSync(dir).sort(), ["fresh.jsonl", "index"], "nothing is written beside the session");
  });

  test("left stale by another writer's appends: only the new lines are read, with their issues, and the result matches", () => {
    const path = join(dir, "appended.jsonl");
    writeFileSync(path, sessionText(200));
    seen(path, withIndex());
    // another agent (pi takes no lock) appends a turn, a bad line, a label on an old entry and a second unknown-type line
    const more =
      line({ type: "message", id: "x1", parentId: "e420", timestamp: "t", message: { role: "user", content: "and another thing", timestamp: 1 } }) +
      "not json either\n" +
      line({ type: "label", id: "x2", parentId: "x1", timestamp: "t", targetId: "e10", label: "later" }) +
      line({ type: "future_kind", id: "x3", parentId: "x2", timestamp: "t" });
    appendFileSync(path, more);
    assert.equal(scanned(path), Buffer.byteLength(more));
    const withIt = seen(path, withIndex());
    assert.deepEqual(withIt, seen(path, withoutIndex()));
    assert.ok(withIt.warnings.some((w) => w.includes("(2 lines, the first here)")), "the unknown type's count goes on from the index");
  });

  test("a torn append is left out of the index, and read whole once another writer finishes it", () => {
    const path = join(dir, "torn.jsonl");
    writeFileSync(path, sessionText(200));
    const rest = line({ type: "message", id: "t1", parentId: "e420", timestamp: "t", message: { role: "user", content: "finished later", timestamp: 1 } });
    appendFileSync(path, rest.slice(0, 40));
    sameAsFullRead(path);
    assert.equal(scanned(path), 40, "the index ends at the last newline");
    appendFileSync(path, rest.slice(40));
    sameAsFullRead(path);
    assert.equal((seen(path, withIndex()).entries as { id: string }[]).at(-1)?.id, "t1");
  });

  test("a rewrite by another program (same size in place, a new file renamed over it, shorter, or longer with the same head) is read in full", () => {
    const path = join(dir, "rewritten.jsonl");
    const original = sessionText(200);
    const cases: [string, () => void][] = [
      ["same size, in place", () => writeFileSync(path, original.replace('"label":"start"', '"label":"START"'))],
      ["renamed over", () => {
        writeFileSync(`${path}.new`, sessionText(200, "r"));
        renameSync(`${path}.new`, path);
      }],
      ["the header edited in place, then appended to", () => {
        writeFileSync(path, original.replace('"id":"s-1"', '"id":"s-2"'));
        appendFileSync(path, line({ type: "label", id: "z1", parentId: "e1", timestamp: "t", targetId: "e1", label: "z" }));
      }],
      ["shorter", () => truncateSync(path, original.lastIndexOf("\n", original.length / 2) + 1)],
      ["longer, ids changed after the head", () => writeFileSync(path, original.slice(0, 400) + sessionText(210, "q").slice(400))],
    ];
    for (const [name, rewrite] of cases) {
      writeFileSync(path, original);
      seen(path, withIndex());
      assert.equal(scanned(path), 0, `${name}: indexed first`);
      rewrite();
      assert.equal(scanned(path), statSync(path).size, `${name}: the index is refused before any of it is used`);
      assert.deepEqual(seen(path, withIndex()), seen(path, withoutIndex()), name);
    }
  });

  test("a rewrite in place that the checks miss (a parent swapped at the same length, bytes no sample covers, then an append) is caught when the body is read: the file is read in full and the index dropped", () => {
    const path = join(dir, "swapped.jsonl");
    const original = sessionText(200);
    writeFileSync(path, original);
    seen(path, withIndex());
    // a message line in the middle that none of the 20 sampled 4 KB blocks touches
    const size = Buffer.byteLength(original);
    const last = size - 4096;
    const sampled = Array.from({ length: 20 }, (_, i) => Math.floor((last * i) / 19));
    const lines = original.split("\n");
    let offset = 0;
    let target = -1;
    for (let i = 0; i < lines.length; i++) {
      const end = offset + Buffer.byteLength(lines[i]) + 1;
      const untouched = sampled.every((at) => at + 4096 <= offset || at >= end);
      if (i > lines.length / 2 && untouched && lines[i].includes('"parentId":"e') && lines[i].includes('"type":"message"')) {
        target = i;
        break;
      }
      offset = end;
    }
    assert.ok(target > 0, "found a line no sample covers");
    const parent = /"parentId":"(e\d+)"/.exec(lines[target])![1];
    const other = `e${String(Number(parent.slice(1)) - 2).padStart(parent.length - 1, "0")}`;
    assert.equal(other.length, parent.length);
    lines[target] = lines[target].replace(`"parentId":"${parent}"`, `"parentId":"${other}"`);
    writeFileSync(path, lines.join("\n")); // in place: the same inode
    appendFileSync(path, line({ type: "label", id: "w1", parentId: "e1", timestamp: "t", targetId: "e1", label: "w" }));
    assert.equal(scanned(path) < statSync(path).size, true, "the checks pass: only the appended line is read");
    assert.deepEqual(seen(path, withIndex()), seen(path, withoutIndex()));
    assert.equal(existsSync(openIndexPath(path, withIndex())!.where), false, "the stale index is gone");
  });

  test("a torn, emptied or foreign index is ignored: the open reads the file and replaces it", () => {
    const path = join(dir, "damaged.jsonl");
    writeFileSync(path, sessionText(200));
    seen(path, withIndex());
    const where = openIndexPath(path, withIndex())!.where;
    const good = readFileSync(where);
    const damage: [string, Buffer][] = [
      ["torn", good.subarray(0, Math.floor(good.length / 2))],
      ["empty", Buffer.alloc(0)],
      ["JSON", Buffer.from('{"format":2}')],
      ["a byte of an id flipped", Buffer.concat([good.subarray(0, good.length - 10), Buffer.from([good[good.length - 10] ^ 0x01]), good.subarray(good.length - 9)])],
    ];
    for (const [name, bytes] of damage) {
      writeFileSync(where, bytes);
      assert.equal(scanned(path), statSync(path).size, `${name}: refused`);
      writeFileSync(where, bytes);
      assert.deepEqual(seen(path, withIndex()), seen(path, withoutIndex()), name);
      assert.equal(scanned(path), 0, `${name}: replaced by a good index`);
    }
  });

  test("an index that cannot be written changes nothing: the open works as without one", () => {
    const path = join(dir, "unwritable.jsonl");
    writeFileSync(path, sessionText(200));
    const blocked = { ...withIndex(), BONSAI_INDEX_DIR: join(path, "not-a-folder") };
    const fd = openSync(path, "r");
    try {
      assert.equal(readThroughOpenIndex(path, fd, "checked", new TreeIndex(), blocked).scanned, statSync(path).size);
    } finally {
      closeSync(fd);
    }
    assert.deepEqual(seen(path, blocked), seen(path, withoutIndex()));
  });

  test("writing an index sweeps those of sessions not opened for 30 days", () => {
    mkdirSync(indexDir(), { recursive: true });
    const old = join(indexDir(), "0123456789abcdef0123456789abcdef.json");
    const recent = join(indexDir(), "fedcba9876543210fedcba9876543210.json");
    writeFileSync(old, "an index of a session long gone");
    writeFileSync(recent, "an index of a session opened yesterday");
    const day = 86_400;
    const now = Date.now() / 1000;
    utimesSync(old, now - 40 * day, now - 40 * day);
    utimesSync(recent, now - day, now - day);
    const path = join(dir, "sweeper.jsonl");
    writeFileSync(path, sessionText(200));
    seen(path, withIndex());
    assert.equal(existsSync(old), false, "swept");
    assert.equal(existsSync(recent), true, "kept");
    assert.ok(existsSync(openIndexPath(path, withIndex())!.where), "the new index is there");
  });

  test("ids that come twice: a replay takes ids on trust only after a read that refused none, and refuses a later duplicate as a full read does", () => {
    const flag = (path: string) => decodeIndex(readFileSync(openIndexPath(path, withIndex())!.where))!.head.distinct;
    // every id once: the index says so, and lines appended since are checked against every replayed id
    const path = join(dir, "distinct.jsonl");
    writeFileSync(path, sessionText(200));
    const { leaf } = seen(path, withIndex());
    assert.equal(flag(path), true);
    appendFileSync(
      path,
      // hung off the last entry, so nothing looks an id up before the duplicate comes
      line({ type: "message", id: "e5", parentId: leaf, timestamp: "t", message: { role: "user", content: "an id taken already", timestamp: 1 } }) +
        line({ type: "message", id: "y1", parentId: "e7", timestamp: "t", message: { role: "user", content: "a fork far up", timestamp: 2 } }),
    );
    const full = seen(path, withoutIndex());
    assert.ok(full.warnings.some((w) => w.includes("e5")), "a full read refuses the second e5");
    assert.deepEqual(seen(path, withIndex()), full);
    // a read that refused an id: no trust, and the result is still a full read's
    const twice = join(dir, "twice.jsonl");
    const text = sessionText(200);
    const doubled = text.split("\n");
    doubled.splice(300, 0, line({ type: "message", id: "e9", parentId: "e10", timestamp: "t", message: { role: "user", content: "e9 again", timestamp: 3 } }).trimEnd());
    writeFileSync(twice, doubled.join("\n"));
    seen(twice, withIndex());
    assert.equal(flag(twice), false);
    assert.deepEqual(seen(twice, withIndex()), seen(twice, withoutIndex()));
    // an index extended by a long read keeps what it says: distinct only when both parts were
    const extend = (file: string) => {
      const leaf = seen(file, withIndex()).leaf;
      const more = sessionText(200, `z${file.length}-`).split("\n").slice(1).join("\n").replace('"parentId":null', `"parentId":${JSON.stringify(leaf)}`);
      assert.ok(Buffer.byteLength(more) >= WRITE_AFTER_BYTES, "long enough to write the index again");
      appendFileSync(file, more);
      assert.deepEqual(seen(file, withIndex()), seen(file, withoutIndex()));
    };
    const clean = join(dir, "distinct-extended.jsonl");
    writeFileSync(clean, sessionText(200, "d"));
    extend(clean);
    assert.equal(flag(clean), true);
    extend(path);
    assert.equal(flag(path), false, "the second e5, read since the index was written, was refused");
    extend(twice);
    assert.equal(flag(twice), false, "the id refused before the extension is still refused on replay");
    assert.equal(scanned(twice), 0, "the extended index covers the file");
    // every id answers through a replayed index as through a full read
    const saved = { BONSAI_INDEX: process.env.BONSAI_INDEX, BONSAI_INDEX_DIR: process.env.BONSAI_INDEX_DIR };
    Object.assign(process.env, { BONSAI_INDEX_DIR: indexDir(), BONSAI_INDEX: "" });
    try {
      for (const file of [path, twice]) {
        assert.ok(scanned(file) < statSync(file).size, "opened through the index");
        const replayed = SessionManager.open(file, { readOnly: true });
        const read = SessionManager.open(file, { readOnly: true, bodies: "eager" });
        try {
          for (const { id } of read.getEntries()) assert.deepEqual(replayed.getEntry(id), read.getEntry(id), id);
          assert.equal(replayed.getEntry("nowhere"), undefined);
        } finally {
          replayed.close();
          read.close();
        }
      }
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });

  test("BONSAI_INDEX=off: no index is read or written", () => {
    const path = join(dir, "off.jsonl");
    writeFileSync(path, sessionText(200));
    assert.equal(openIndexPath(path, withoutIndex()), undefined);
    seen(path, { ...withoutIndex(), BONSAI_INDEX_DIR: join(dir, "never") });
    assert.deepEqual(readdirSync(dir).includes("never"), false);
  });
});
