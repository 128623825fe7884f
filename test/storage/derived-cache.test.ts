/**
 * The derived cache (storage/derived-cache.ts) keeps values worked out from a session file while
 * the file is only appended to, and nothing else: another file, a rewrite by any program, a torn
 * or foreign cache file, another version or a value of the wrong shape all give an empty cache.
 */
import assert from "node:assert/strict";
import { appendFileSync, closeSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { derivedCache } from "../../src/storage/derived-cache.js";
import { openIndexPath } from "../../src/storage/open-index-file.js";

let dir: string;
let n = 0;
const env = () => ({ ...process.env, BONSAI_INDEX_DIR: join(dir, "index"), BONSAI_INDEX: "" });
const isNumber = (value: unknown): value is number => typeof value === "number";
const open = (file: string, version = "v1") => derivedCache(file, "test", version, isNumber, env());
const readFileText = (path: string) => readFileSync(path, "utf8");
const cacheFile = (file: string) => openIndexPath(file, env())!.where.replace(/\.json$/, ".test.json");

before(() => {
  dir = mkdtempSync(join(tmpdir(), "bonsai-derived-cache-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A session-like file of `lines` lines, new for each test. */
function file(lines = 200): string {
  const path = join(dir, `s${n++}.jsonl`);
  writeFileSync(path, Array.from({ length: lines }, (_, i) => `{"id":"e${i}","text":"${"x".repeat(i % 97)}"}\n`).join(""));
  return path;
}

/** Opens the cache of `path`, adds `values` and saves. */
function fill(path: string, values: Record<string, number>, version = "v1"): void {
  const cache = open(path, version);
  assert.ok(cache.describes(path));
  for (const [id, value] of Object.entries(values)) cache.values.set(id, value);
  cache.save();
}

describe("derived cache", () => {
  test("keeps what was added, for the same file, and the values stay valid after appends", () => {
    const path = file();
    assert.equal(open(path).values.size, 0, "nothing at first");
    fill(path, { c1: 1, c2: 2 });
    assert.deepEqual([...open(path).values], [["c1", 1], ["c2", 2]]);
    appendFileSync(path, '{"id":"more"}\n');
    assert.deepEqual([...open(path).values], [["c1", 1], ["c2", 2]], "appends leave the values");
  });

  test("a rewrite by another program, same size or not, same inode or not, gives an empty cache", () => {
    const inPlace = file();
    fill(inPlace, { c1: 1 });
    writeFileSync(inPlace, readFileText(inPlace).replace('"e0"', '"E0"'));
    assert.equal(open(inPlace).values.size, 0, "same inode, same size, one byte changed");

    const renamed = file();
    fill(renamed, { c1: 1 });
    const copy = `${renamed}.new`;
    writeFileSync(copy, readFileText(renamed));
    renameSync(copy, renamed);
    assert.equal(open(renamed).values.size, 0, "same bytes, another inode");

    const shorter = file();
    fill(shorter, { c1: 1 });
    writeFileSync(shorter, readFileText(shorter).slice(0, 500));
    assert.equal(open(shorter).values.size, 0, "truncated");
  });

  test("a rewrite in place of the same size is refused by its modification time, even where no sample falls", () => {
    const path = file(4000);
    fill(path, { c1: 1 });
    const bytes = readFileSync(path);
    // a byte between the 20 sampled blocks of 4 KB (a ~200 KB file leaves gaps between them)
    const at = 4096 + 2000;
    bytes[at] = bytes[at] === 0x78 ? 0x79 : 0x78;
    const fd = openSync(path, "r+");
    writeSync(fd, bytes, at, 1, at);
    closeSync(fd);
    assert.equal(open(path).values.size, 0);
  });

  test("a file renamed over the session after the cache was opened is not described by it", () => {
    const path = file();
    fill(path, { c1: 1 });
    const cache = open(path);
    assert.equal(cache.values.size, 1);
    writeFileSync(`${path}.new`, readFileText(path));
    renameSync(`${path}.new`, path);
    assert.equal(cache.describes(path), false);
  });

  test("a torn or foreign cache file, another version and values of the wrong shape are ignored", () => {
    const path = file();
    fill(path, { c1: 1 });
    const where = cacheFile(path);
    const whole = readFileText(where);
    writeFileSync(where, whole.slice(0, whole.length >> 1));
    assert.equal(open(path).values.size, 0, "torn");
    writeFileSync(where, JSON.stringify({ format: 1, hello: "world" }));
    assert.equal(open(path).values.size, 0, "foreign");

    fill(path, { c1: 1 });
    assert.equal(open(path, "v2").values.size, 0, "another version");

    writeFileSync(where, whole.replace('"c1":1', '"c1":"one","c3":3'));
    assert.deepEqual([...open(path).values], [["c3", 3]], "only values of the right shape");
  });

  test("values worked out while the file was rewritten are never used", () => {
    const path = file();
    const cache = open(path);
    writeFileSync(path, readFileText(path).replace('"e5"', '"E5"'));
    cache.values.set("c1", 1);
    cache.save();
    assert.equal(open(path).values.size, 0);
  });

  test("describes only its own file, through a symlink too; indexes off or no file keep nothing", () => {
    const path = file();
    const link = join(dir, `link${n++}.jsonl`);
    symlinkSync(path, link);
    assert.ok(open(path).describes(link));
    assert.equal(open(path).describes(file()), false);
    assert.equal(open(path).describes(undefined), false);

    const off = derivedCache(path, "test", "v1", isNumber, { ...env(), BONSAI_INDEX: "off" });
    off.values.set("c1", 1);
    off.save();
    assert.equal(off.describes(path), false);
    assert.equal(open(path).values.size, 0);

    const none = derivedCache("sqlite:/nowhere.db#abc", "test", "v1", isNumber, env());
    assert.equal(none.describes("sqlite:/nowhere.db#abc"), false);
    none.values.set("c1", 1);
    none.save();
  });

  test("a folder that cannot be written (a full disk, a read-only home) keeps nothing and throws nothing", () => {
    const path = file();
    const blocked = join(dir, `not-a-folder-${n++}`);
    writeFileSync(blocked, "a file where the index folder should be");
    const cache = derivedCache(path, "test", "v1", isNumber, { ...env(), BONSAI_INDEX_DIR: join(blocked, "index") });
    assert.ok(cache.describes(path));
    cache.values.set("c1", 1);
    assert.doesNotThrow(() => cache.save());
    assert.equal(derivedCache(path, "test", "v1", isNumber, { ...env(), BONSAI_INDEX_DIR: join(blocked, "index") }).values.size, 0);
  });

  test("nothing is written when nothing was added; the file is private", () => {
    const path = file();
    open(path).save();
    assert.ok(!readdirSync(join(dir, "index")).includes(cacheFile(path).split("/").pop()!));
    fill(path, { c1: 1 });
    assert.equal(statSync(cacheFile(path)).mode & 0o777, 0o600);
  });
});
