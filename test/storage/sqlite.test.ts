/** The SQLite store: the shared store contract, plus leases, WAL, schema versions and bad databases. */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import Database from "libsql";
import { SessionLockedError } from "../../src/storage/lock.js";
import { openSessionAt, readLinesAt } from "../../src/storage/open.js";
import { STALE_AFTER_MS } from "../../src/storage/owner.js";
import { listSqliteSessions, openSqliteDatabase, SQLITE_SCHEMA_VERSION, sqliteDriverError } from "../../src/storage/sqlite.js";
import { immediateTransaction, sqliteValue } from "../../src/storage/sqlite-schema.js";
import { StoreVersionError } from "../../src/storage/types.js";
import { ROOT } from "../helpers/cli.js";
import { sessionLines, storeContract } from "../helpers/store-contract.js";
import { BONSAI_ARGS, scriptArgs } from "../helpers/bonsai-bin.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

storeContract("sqlite", async () => {
  const db = join(tempDir(), "sessions.sqlite");
  return { store: `sqlite:${db}`, session: (id) => `sqlite:${db}#${id}`, done: async () => {} };
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("sqlite store", () => {
  it("puts the database in WAL mode and records the schema version", async () => {
    const db = join(tempDir(), "s.sqlite");
    const { backend } = await openSessionAt(`sqlite:${db}#a`);
    backend!.append(sessionLines("a", 1));
    await backend!.close();
    const raw = new Database(db);
    try {
      assert.equal(sqliteValue(raw.prepare("PRAGMA journal_mode")), "wal");
      assert.equal(sqliteValue(raw.prepare("SELECT version FROM bonsai_meta")), SQLITE_SCHEMA_VERSION);
      assert.equal(sqliteValue(raw.prepare("SELECT count(*) FROM leases")), 0, "close gives the lease back");
    } finally {
      raw.close();
    }
  });

  it("refuses a database from a newer bonsai, and one that is not a bonsai store", () => {
    const newer = join(tempDir(), "newer.sqlite");
    openSqliteDatabase(newer).close();
    const raw = new Database(newer);
    raw.prepare("UPDATE bonsai_meta SET version = ?").run(SQLITE_SCHEMA_VERSION + 1);
    raw.close();
    assert.throws(
      () => openSqliteDatabase(newer),
      (error: Error) =>
        error instanceof StoreVersionError &&
        error.message.includes(`schema is version ${SQLITE_SCHEMA_VERSION + 1}, this bonsai knows up to ${SQLITE_SCHEMA_VERSION}; upgrade bonsai`),
    );

    const foreign = join(tempDir(), "foreign.sqlite");
    const other = new Database(foreign);
    other.exec("CREATE TABLE invoices (id INTEGER)");
    other.close();
    assert.throws(() => openSqliteDatabase(foreign), /not a bonsai store \(it holds other tables\)/);
    // refused before anything changed: another application's database keeps its journal mode (issue 26, defect 12)
    const after = new Database(foreign);
    assert.equal(Object.values(after.prepare("PRAGMA journal_mode").get() as object)[0], "delete");
    after.close();

    const junk = join(tempDir(), "junk.sqlite");
    writeFileSync(junk, "this is not a database, just text that is long enough to have a header page".repeat(20));
    assert.throws(() => openSqliteDatabase(junk), /not a SQLite database|file is not a database/);
  });

  it("lets four processes create the same new store at once, every time", { timeout: 60_000 }, async () => {
    // Found as a one-in-thirty failure of the four-writers test: the foreign-database check read
    // "no bonsai_meta" and "some tables" in two statements, and a peer's schema landed in between.
    const dir = tempDir();
    const peers = 4;
    const runs = Array.from({ length: peers }, (_, peer) => {
      const child = spawn(process.execPath, [...scriptArgs("test/helpers/sqlite-first-open.ts"), dir, String(peer), "60", String(peers)]);
      let out = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      child.stderr.on("data", (chunk) => (out += chunk));
      return new Promise<string>((done) => child.on("close", () => done(out.trim())));
    });
    for (const out of await Promise.all(runs)) assert.equal(out, "done 0");
  });

  it("upgrades a database from an older bonsai step by step, keeping its sessions", async () => {
    const db = join(tempDir(), "old.sqlite");
    const { backend } = await openSessionAt(`sqlite:${db}#kept`);
    backend!.append(sessionLines("kept", 3));
    await backend!.close();
    // back to version 1, as the first release left it
    const raw = new Database(db);
    raw.exec("DROP TABLE pruned; UPDATE bonsai_meta SET version = 1");
    raw.close();
    const opened = await openSessionAt(`sqlite:${db}#kept`);
    assert.equal(opened.loaded!.fileEntries.length, 4);
    opened.backend!.archive!.append(['{"entryId":"e0000001"}']);
    assert.deepEqual(opened.backend!.archive!.lines(), ['{"entryId":"e0000001"}']);
    await opened.backend!.close();
    const after = new Database(db);
    try {
      assert.equal(sqliteValue(after.prepare("SELECT version FROM bonsai_meta")), SQLITE_SCHEMA_VERSION);
    } finally {
      after.close();
    }
  });

  it("opens read-only only what exists", async () => {
    const missing = join(tempDir(), "missing.sqlite");
    await assert.rejects(openSessionAt(`sqlite:${missing}#x`, { readOnly: true }), /cannot open the SQLite store: no such database file/);
    const db = join(tempDir(), "s.sqlite");
    openSqliteDatabase(db).close();
    assert.equal((await openSessionAt(`sqlite:${db}#nope`, { readOnly: true })).loaded, undefined);
  });

  it("takes over the lease of a process that is gone, and of another host whose heartbeat stopped", async () => {
    const db = join(tempDir(), "s.sqlite");
    openSqliteDatabase(db).close();
    const raw = new Database(db);
    const insert = raw.prepare("INSERT INTO leases (session_id, token, pid, host, since, heartbeat) VALUES (?, 't', ?, ?, 'then', ?)");
    insert.run("dead", deadPid(), hostname(), Date.now());
    insert.run("far-stale", 1, "elsewhere", Date.now() - STALE_AFTER_MS - 1000);
    insert.run("far-live", 1, "elsewhere", Date.now());
    raw.close();

    for (const id of ["dead", "far-stale"]) {
      const { backend } = await openSessionAt(`sqlite:${db}#${id}`);
      backend!.append(sessionLines(id, 1));
      await backend!.close();
      assert.equal((await readLinesAt(`sqlite:${db}#${id}`))!.lines.length, 2);
    }
    await assert.rejects(openSessionAt(`sqlite:${db}#far-live`), (error: Error) => {
      assert.ok(error instanceof SessionLockedError);
      assert.match(error.message, /being written by process 1 on elsewhere \(since then\); close it first/);
      return true;
    });
  });

  it("stops a writer whose lease was taken over instead of interleaving lines", async () => {
    const db = join(tempDir(), "s.sqlite");
    const { backend } = await openSessionAt(`sqlite:${db}#s`);
    backend!.append(sessionLines("s", 1));
    const raw = new Database(db);
    raw.prepare("UPDATE leases SET token = 'someone-else'").run();
    raw.close();
    assert.throws(() => backend!.append(["{}"]), /lease was taken over/);
    assert.throws(() => backend!.rewrite([]), /lease was taken over/);
    await backend!.close();
    assert.equal((await readLinesAt(`sqlite:${db}#s`))!.lines.length, 2);
  });

  it("rolls a failed append back as a whole", async () => {
    const db = join(tempDir(), "s.sqlite");
    const { backend } = await openSessionAt(`sqlite:${db}#s`);
    backend!.append(sessionLines("s", 2));
    assert.throws(() => backend!.append(['{"ok":1}', 'bad\nline']), /holds a newline/);
    const raw = new Database(db);
    // a trigger that fails the second insert of the next append
    raw.exec("CREATE TRIGGER no_second BEFORE INSERT ON entries WHEN NEW.line = '\"second\"' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    raw.close();
    assert.throws(() => backend!.append(['"first"', '"second"']), /refused/);
    backend!.append(['"third"']);
    await backend!.close();
    assert.deepEqual((await readLinesAt(`sqlite:${db}#s`))!.lines.slice(3), ['"third"']);
    assert.equal(listSqliteSessions(db)[0].entryCount, 3);
  });
});

describe("immediateTransaction", () => {
  it("commits, rolls back, and reports the error that failed even when SQLite already rolled back", () => {
    const dir = mkdtempSync(join(tmpdir(), "bonsai-sqlite-txn-"));
    const db = new Database(join(dir, "t.db"));
    try {
      db.exec("CREATE TABLE t (v INTEGER)");
      immediateTransaction(db, () => db.prepare("INSERT INTO t VALUES (1)").run());
      assert.throws(() => immediateTransaction(db, () => {
        db.prepare("INSERT INTO t VALUES (2)").run();
        throw new Error("the work failed");
      }), /^Error: the work failed$/);
      // as after a full disk: SQLite ended the transaction itself before the error reached us
      assert.throws(() => immediateTransaction(db, () => {
        db.prepare("INSERT INTO t VALUES (3)").run();
        db.exec("ROLLBACK");
        throw new Error("database or disk is full");
      }), /^Error: database or disk is full$/);
      assert.equal(db.inTransaction, false);
      assert.deepEqual(db.prepare("SELECT v FROM t").raw().all(), [[1]]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a write the database cannot take", () => {
  it("names the session it was for, and the session keeps what it had", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bonsai-sqlite-full-"));
    const location = `sqlite:${join(dir, "s.db")}#s1`;
    try {
      const { backend } = await openSessionAt(location);
      const lines = sessionLines("s1", 2);
      backend!.append(lines);
      // what SQLite says when the disk is full, raised where the next line would go
      const other = new Database(join(dir, "s.db"));
      other.exec("CREATE TRIGGER full_disk BEFORE INSERT ON entries BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
      other.close();
      assert.throws(() => backend!.append(sessionLines("s1", 3).slice(3)), (error: Error) => error.message === `${location}: database or disk is full`);
      await backend!.close();
      assert.deepEqual((await readLinesAt(location))?.lines, lines);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a SQLite driver that cannot load", () => {
  const where = "sqlite:/tmp/s.db";
  it("turns the driver's own load errors into one line that says how to fix it", () => {
    const errors: unknown[] = [];
    // the error libsql throws when npm left out the optional package with its binary
    try {
      createRequire(import.meta.url)("@libsql/absent-platform");
    } catch (error) {
      errors.push(error);
    }
    // a native module built for another Node or damaged
    const broken = join(tempDir(), "broken.node");
    writeFileSync(broken, "not a shared object");
    try {
      process.dlopen({ exports: {} }, broken);
    } catch (error) {
      errors.push(error);
    }
    assert.equal(errors.length, 2);
    for (const error of errors) {
      const message = sqliteDriverError(where, error)?.message ?? "";
      assert.match(message, /^sqlite:\/tmp\/s\.db: the SQLite driver \(libsql\) has no binary that loads on this system \(\w+-\w+, Node v\d+/);
      assert.match(message, /reinstall bonsai without omitting optional dependencies/);
      assert.ok(!message.includes("\n") && !message.includes("→"), message);
    }
    assert.equal(sqliteDriverError(where, new Error("disk I/O error")), undefined, "other errors pass through");
  });

  it("leaves every other command working, and a SQLite location fails with that line", async () => {
    // as after an install that left out libsql's optional package with the binary for this platform
    const preload = join(tempDir(), "no-sqlite.cjs");
    writeFileSync(
      preload,
      `const Module = require("node:module");
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request.startsWith("@libsql/")) { const e = new Error("Cannot find module '" + request + "'"); e.code = "MODULE_NOT_FOUND"; throw e; }
  return load.call(this, request, ...rest);
};`,
    );
    const run = (args: string[]) =>
      spawnSync(process.execPath, ["--require", preload, ...BONSAI_ARGS, ...args], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1", BONSAI_DEBUG: "" },
      });
    const info = run(["info", "examples/coding-session.jsonl"]);
    assert.equal(info.status, 0, info.stderr);
    const db = join(tempDir(), "s.db");
    const ls = run(["ls", `sqlite:${db}`]);
    assert.equal(ls.status, 1);
    assert.equal(ls.stderr.trim().split("\n").length, 1, ls.stderr);
    assert.match(ls.stderr, /^bonsai: sqlite:.*s\.db: the SQLite driver \(libsql\) has no binary .* reinstall bonsai without omitting optional dependencies/);
  });
});
