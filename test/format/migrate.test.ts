/**
 * Format migration v1 -> v2 -> v3 (as the reference migrates, with its defects fixed), in memory and
 * on open, where the file is rewritten atomically after a byte-identical backup.
 */
import assert from "node:assert/strict";
import { copyFileSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, mock } from "node:test";
import { parseSessionEntries } from "../../src/storage/load.js";
import { SessionManager } from "../../src/session/manager.js";
import { migrateSessionEntries, sessionVersion } from "../../src/format/migrate.js";
import type { FileEntry } from "../../src/format/entry-types.js";
import { toJsonl } from "../../src/storage/file-writer.js";
import { REAL_SESSION, realGolden } from "../helpers/fixtures.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";
import { cjsFs, fullDisk, whileMocked } from "../helpers/fs-mocks.js";

const { dir: DIR, cleanup } = tempDir();
after(cleanup);

type Loose = Record<string, unknown>;
const loose = (entries: FileEntry[]) => entries as unknown as Loose[];

const v1Header = { type: "session", id: "sess-1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" };
const v1Message = (message: unknown, at: number) => ({
  type: "message",
  timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, at)).toISOString(),
  message,
});

function v1Entries(): FileEntry[] {
  return structuredClone([
    v1Header,
    v1Message(userMsg("hello"), 1),
    v1Message(assistantMsg("hi"), 2),
  ]) as unknown as FileEntry[];
}

describe("migrateSessionEntries", () => {
  it("turns a v1 list into a v3 chain with 8-hex-digit ids", () => {
    const entries = v1Entries();
    assert.equal(sessionVersion(entries), 1);
    assert.equal(migrateSessionEntries(entries), true);
    const [header, first, second] = loose(entries);
    assert.equal(header.version, 3);
    assert.equal(sessionVersion(entries), 3);
    assert.match(first.id as string, /^[0-9a-f]{8}$/);
    assert.match(second.id as string, /^[0-9a-f]{8}$/);
    assert.equal(first.parentId, null);
    assert.equal(second.parentId, first.id);
    assert.equal("id" in header, true, "the header keeps its own id");
    assert.equal(header.id, "sess-1");
  });

  it("leaves a v2 list's ids and parents alone and renames hookMessage to custom", () => {
    const entries = structuredClone([
      { ...v1Header, version: 2 },
      { type: "message", id: "aaaa1111", parentId: null, timestamp: "t", message: userMsg("u") },
      {
        type: "message",
        id: "bbbb2222",
        parentId: "aaaa1111",
        timestamp: "t",
        message: { role: "hookMessage", customType: "x", content: "c", display: true, timestamp: 1 },
      },
    ]) as unknown as FileEntry[];
    assert.equal(migrateSessionEntries(entries), true);
    const [header, a, b] = loose(entries);
    assert.equal(header.version, 3);
    assert.deepEqual([a.id, a.parentId, b.id, b.parentId], ["aaaa1111", null, "bbbb2222", "aaaa1111"]);
    assert.equal((b.message as Loose).role, "custom");
  });

  it("is idempotent: a second run changes nothing and says so", () => {
    const entries = v1Entries();
    migrateSessionEntries(entries);
    const once = structuredClone(entries);
    assert.equal(migrateSessionEntries(entries), false);
    assert.deepEqual(entries, once);
  });

  it("gives a v1 model_change the oh-my-pi `model` spelling and keeps pi's", () => {
    const entries = [
      ...v1Entries(),
      { type: "model_change", timestamp: "2025-01-01T00:00:03.000Z", provider: "openai", modelId: "gpt-4o" },
    ] as unknown as FileEntry[];
    migrateSessionEntries(entries);
    const change = loose(entries)[3];
    assert.deepEqual([change.provider, change.modelId, change.model], ["openai", "gpt-4o", "openai/gpt-4o"]);
  });

  it("resolves firstKeptEntryIndex to firstKeptEntryId, counting the header as index 0", () => {
    const entries = [
      ...v1Entries(),
      v1Message(userMsg("third"), 3),
      { type: "compaction", timestamp: "2025-01-01T00:00:04.000Z", summary: "s", firstKeptEntryIndex: 2, tokensBefore: 9 },
      { type: "compaction", timestamp: "2025-01-01T00:00:05.000Z", summary: "s", firstKeptEntryIndex: 0, tokensBefore: 9 },
    ] as unknown as FileEntry[];
    migrateSessionEntries(entries);
    const all = loose(entries);
    // index 2 is the second line after the header: the assistant message
    assert.equal(all[4].firstKeptEntryId, all[2].id);
    assert.equal("firstKeptEntryIndex" in all[4], false);
    // index 0 is the header, which is no entry: nothing to point at
    assert.equal(all[5].firstKeptEntryId, undefined);
    assert.equal("firstKeptEntryIndex" in all[5], false);
  });

  it("gives the same ids on every migration of the same entries (issue 19), distinct even for identical lines", () => {
    const twice = () => {
      const entries = [...v1Entries(), v1Message(userMsg("hello"), 1), v1Message(userMsg("hello"), 1)] as unknown as FileEntry[];
      migrateSessionEntries(entries);
      return loose(entries).slice(1).map((e) => e.id as string);
    };
    const ids = twice();
    assert.deepEqual(twice(), ids);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}$/);
    // another session's header gives other ids to the same lines
    const other = [{ ...v1Header, id: "sess-2" }, ...v1Entries().slice(1)] as unknown as FileEntry[];
    migrateSessionEntries(other);
    assert.notEqual(loose(other)[1].id, ids[0]);
  });

  it("does nothing to a v3 list", () => {
    const entries = structuredClone([{ ...v1Header, version: 3 }]) as unknown as FileEntry[];
    assert.equal(migrateSessionEntries(entries), false);
    assert.deepEqual(entries, [{ ...v1Header, version: 3 }]);
  });
});

describe("parseSessionEntries", () => {
  it("returns every JSON line in order and skips blank and malformed ones", () => {
    const text = `${JSON.stringify(v1Header)}\n\n{"type":"message", broken\n${JSON.stringify({ type: "label", x: 1 })}\n`;
    assert.deepEqual(parseSessionEntries(text), [v1Header, { type: "label", x: 1 }]);
  });
});

describe("migration on open", () => {
  const writeV1 = (name: string, entries: unknown[]) => {
    const file = join(DIR, name);
    writeFileSync(file, toJsonl(entries));
    return file;
  };
  const lines = (file: string) => readFileSync(file, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));

  it("by default, opening without writing leaves a v1 file as it was; the first write migrates it, backup first", () => {
    const file = writeV1("v1-lazy.jsonl", v1Entries());
    const original = readFileSync(file);
    const heard: { fromVersion: number; backupPath?: string }[] = [];
    const reader = SessionManager.open(file, { onMigrate: (m) => heard.push(m) });
    assert.equal(reader.getEntries().length, 2);
    reader.close();
    assert.deepEqual(readFileSync(file), original, "a program that only reads changes nothing");
    assert.deepEqual(readdirSync(DIR).filter((f) => f.startsWith("v1-lazy.jsonl.bak")), [], "and leaves no backup");
    assert.deepEqual(heard, [{ fromVersion: 1 }], "told of the migration in memory only");

    heard.length = 0;
    const writer = SessionManager.open(file, { onMigrate: (m) => heard.push(m) });
    const entries = structuredClone(writer.getEntries());
    const id = writer.appendMessage(userMsg("more"));
    writer.close();
    assert.equal(heard.length, 2);
    assert.deepEqual(readFileSync(heard[1].backupPath as string), original, "the backup holds the original bytes");
    const rewritten = lines(file);
    assert.equal(rewritten[0].version, 3);
    assert.deepEqual(rewritten.slice(1, -1), entries, "the migrated entries, then the new one");
    assert.equal(rewritten.at(-1).id, id);
  });

  it("rewrites the file as v3 after a backup identical to the original (migrate: true)", () => {
    const file = writeV1("v1.jsonl", v1Entries());
    const original = readFileSync(file);
    let backupPath: string | undefined;
    let fromVersion: number | undefined;
    const s = SessionManager.open(file, {
      migrate: true,
      onMigrate: (m) => {
        backupPath = m.backupPath;
        fromVersion = m.fromVersion;
      },
    });
    const entries = structuredClone(s.getEntries());
    s.close();
    assert.equal(fromVersion, 1);
    assert.ok(backupPath, "a backup was made");
    assert.deepEqual(readFileSync(backupPath), original);
    const rewritten = lines(file);
    assert.equal(rewritten[0].version, 3);
    assert.deepEqual(rewritten.slice(1), entries);
    // no temp files are left beside it
    assert.deepEqual(readdirSync(DIR).filter((f) => f.endsWith(".tmp")), []);
    // a second open finds nothing to migrate
    let again = false;
    SessionManager.open(file, { onMigrate: () => (again = true) }).close();
    assert.equal(again, false);
  });

  it("a migration the disk cannot take leaves the file as it was and no backup: retries do not pile them up", () => {
    const file = writeV1("v1-full-disk.jsonl", v1Entries());
    const original = readFileSync(file);
    const real = cjsFs.writeSync;
    // the lock and the backup are written; the new file's bytes (the rewrite's temp file) are where the disk is full
    mock.method(cjsFs, "writeSync", (fd: number, ...rest: unknown[]) => {
      if (/\/\.v1-full-disk\.jsonl\.[0-9a-f]{12}\.tmp$/.test(readlinkSync(`/proc/self/fd/${fd}`))) throw fullDisk();
      return (real as (...a: unknown[]) => number)(fd, ...rest);
    });
    whileMocked(() => {
      for (let retry = 0; retry < 2; retry++) assert.throws(() => SessionManager.open(file, { migrate: true }), /ENOSPC: no space left on device/);
    });
    assert.deepEqual(readFileSync(file), original);
    assert.deepEqual(readdirSync(DIR).filter((f) => f.startsWith("v1-full-disk.jsonl.") || f.startsWith(".v1-full-disk")), [], "no backup, lock or temp file");
    const s = SessionManager.open(file, { migrate: true }); // once there is room
    s.close();
    assert.equal(lines(file)[0].version, 3);
  });

  it("read-only and migrate:false opens migrate in memory only and leave the file alone", () => {
    const file = writeV1("v1-untouched.jsonl", v1Entries());
    const before = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    const r = SessionManager.open(file, { readOnly: true });
    assert.equal(r.getEntries().length, 2);
    assert.equal(r.getBranch().length, 2);
    const w = SessionManager.open(file, { migrate: false });
    assert.equal(w.getEntries().length, 2);
    w.close();
    assert.deepEqual(readFileSync(file), before);
    assert.equal(statSync(file).mtimeMs, mtime);
  });

  it("a file opened without migration refuses writes instead of mixing formats", () => {
    const file = writeV1("v1-nowrite.jsonl", v1Entries());
    const before = readFileSync(file);
    const w = SessionManager.open(file, { migrate: false });
    const first = w.getEntries()[0].id;
    assert.throws(() => w.appendMessage(userMsg("more")), /migrat/);
    w.branch(first);
    w.close();
    assert.deepEqual(readFileSync(file), before);
  });

  it("migrates the real v1 fixture like the reference (copied to a temp dir)", () => {
    const golden = realGolden();
    const file = join(DIR, "real.jsonl");
    copyFileSync(REAL_SESSION, file);
    let backupPath: string | undefined;
    const s = SessionManager.open(file, { migrate: true, onMigrate: (m) => (backupPath = m.backupPath) });
    assert.equal(s.getEntries().length, golden.entryCount);
    const context = s.buildSessionContext();
    s.close();
    assert.deepEqual(readFileSync(backupPath!), readFileSync(REAL_SESSION));
    const r = SessionManager.open(file, { readOnly: true });
    assert.equal(r.getHeader().version, 3);
    assert.deepEqual(r.getLoadIssues(), []);
    assert.equal(r.getBranch().length, golden.branchLength);
    assert.deepEqual(r.buildSessionContext(), context);
    assert.deepEqual(context.messages, golden.messages);
    assert.deepEqual(context.model, golden.model);
    assert.equal(context.thinkingLevel, golden.thinkingLevel);
    // every line of the rewritten file carries tree fields
    for (const entry of r.getEntries()) assert.match(entry.id, /^[0-9a-f]{8}$/);
  });
});
