/**
 * The PostgreSQL store against a real server (see helpers/postgres.ts): the shared store
 * contract, plus the advisory lock, queued writes and their errors, and schema versions.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { SessionLockedError } from "../../src/storage/lock.js";
import { listSessionsAt, openSessionAt, readLinesAt } from "../../src/storage/open.js";
import { lockKey, POSTGRES_SCHEMA_VERSION } from "../../src/storage/postgres.js";
import { StoreVersionError } from "../../src/storage/types.js";
import { testDatabase } from "../helpers/postgres.js";
import { sessionLines, storeContract } from "../helpers/store-contract.js";
import { scriptArgs } from "../helpers/bonsai-bin.js";

storeContract("postgres", async () => {
  const db = await testDatabase();
  return { store: db.url, session: (id) => `${db.url}#${id}`, done: db.stop };
});

describe("postgres store", () => {
  let url: string;
  let stop: () => Promise<void>;
  let admin: pg.Client;
  before(async () => {
    ({ url, stop } = await testDatabase());
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    await stop();
  });

  it("creates the schema once when many writers open a new database at the same moment", async () => {
    const opened = await Promise.all(["p1", "p2", "p3", "p4", "p5"].map((id) => openSessionAt(`${url}#${id}`)));
    for (const [i, { backend }] of opened.entries()) backend!.append(sessionLines(`p${i + 1}`, 3));
    await Promise.all(opened.map(({ backend }) => backend!.close()));
    const { rows } = await admin.query("SELECT version FROM bonsai.meta");
    assert.deepEqual(rows, [{ version: POSTGRES_SCHEMA_VERSION }]);
    assert.deepEqual((await listSessionsAt(url)).map((s) => s.id).sort(), ["p1", "p2", "p3", "p4", "p5"]);
  });

  it("stores lines as text, exactly as written, not as normalized JSON", async () => {
    const odd = ['{"type":"session","version":3,"id":"raw","timestamp":"t","cwd":"/"}', '{ "spaced" : 1 ,  "b":2, "a":1 }', '"\\u00e9 é"'];
    const { backend } = await openSessionAt(`${url}#raw`);
    backend!.append(odd);
    await backend!.close();
    assert.deepEqual((await readLinesAt(`${url}#raw`))!.lines, odd);
    const { rows } = await admin.query("SELECT line FROM bonsai.entries WHERE session_id = 'raw' ORDER BY seq");
    assert.deepEqual(rows.map((r) => r.line), odd);
  });

  it("holds the lock on the writer's connection: the holder is named, and a dropped connection frees it", async () => {
    const { backend } = await openSessionAt(`${url}#held`);
    backend!.append(sessionLines("held", 1));
    await backend!.flush();
    await assert.rejects(openSessionAt(`${url}#held`), (error: Error) => {
      assert.ok(error instanceof SessionLockedError);
      assert.match(error.message, new RegExp(`being written by process ${process.pid} on .*released by itself when that process or its connection ends`));
      return true;
    });
    // the writer's backend dies, as when its machine crashes
    const [k1, k2] = lockKey("held");
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND classid = ($1::bigint & 4294967295)::oid AND objid = ($2::bigint & 4294967295)::oid`,
      [k1, k2],
    );
    const next = await openSessionAt(`${url}#held`);
    assert.equal(next.loaded!.fileEntries.length, 2);
    await next.backend!.close();

    // the old writer finds out on its next write, with a reason, and never writes again
    backend!.append([JSON.stringify({ type: "custom", id: "late", parentId: null, timestamp: "t", customType: "x" })]);
    await assert.rejects(async () => backend!.flush(), /(lost the connection to PostgreSQL|writing to PostgreSQL failed).*open the session again/);
    assert.throws(() => backend!.append(["{}"]), /(lost the connection|writing to PostgreSQL failed)/);
    await assert.rejects(async () => backend!.close(), /PostgreSQL/);
    assert.equal((await readLinesAt(`${url}#held`))!.lines.length, 2, "the late line was not written");
  });

  it("queues appends in order, batching many lines per statement, and flush waits for them", async () => {
    const lines = sessionLines("many", 3000);
    const { backend } = await openSessionAt(`${url}#many`);
    assert.equal(backend!.writes, "queued");
    for (const line of lines) backend!.append([line]);
    await backend!.flush();
    assert.deepEqual((await readLinesAt(`${url}#many`))!.lines, lines);
    await backend!.close();
  });

  it("keeps the first failed write and refuses everything after it", async () => {
    const { backend } = await openSessionAt(`${url}#fails`);
    backend!.append(sessionLines("fails", 2));
    await backend!.flush();
    await admin.query(
      `CREATE FUNCTION bonsai_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.line = '"refused"' THEN RAISE EXCEPTION 'line refused by test'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER refuse BEFORE INSERT ON bonsai.entries FOR EACH ROW EXECUTE FUNCTION bonsai_refuse();`,
    );
    try {
      backend!.append(['"refused"']);
      backend!.append(['"after"']);
      await assert.rejects(async () => backend!.flush(), /writing to PostgreSQL failed \(line refused by test\)/);
      assert.throws(() => backend!.append(['"later"']), /line refused by test/);
      await assert.rejects(async () => backend!.close(), /line refused by test/);
    } finally {
      await admin.query("DROP TRIGGER refuse ON bonsai.entries; DROP FUNCTION bonsai_refuse()");
    }
    assert.equal((await readLinesAt(`${url}#fails`))!.lines.length, 3, "nothing after the failure was written");
  });

  it("rewrites in one transaction: a rewrite that fails part way leaves the old lines", async () => {
    const { backend } = await openSessionAt(`${url}#rw`);
    const old = sessionLines("rw", 4);
    backend!.append(old);
    await backend!.flush();
    await admin.query(
      `CREATE FUNCTION bonsai_refuse_rw() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.seq = 2500 THEN RAISE EXCEPTION 'refused at 2500'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER refuse_rw BEFORE INSERT ON bonsai.entries FOR EACH ROW EXECUTE FUNCTION bonsai_refuse_rw();`,
    );
    try {
      // 3001 lines: three INSERT statements; the third fails after two have run
      backend!.rewrite(sessionLines("rw", 3000));
      await assert.rejects(async () => backend!.flush(), /refused at 2500/);
    } finally {
      await admin.query("DROP TRIGGER refuse_rw ON bonsai.entries; DROP FUNCTION bonsai_refuse_rw()");
    }
    await assert.rejects(async () => backend!.close(), /refused at 2500/);
    assert.deepEqual((await readLinesAt(`${url}#rw`))!.lines, old);
    const listed = (await listSessionsAt(url)).find((s) => s.id === "rw");
    assert.equal(listed?.entryCount, 4);
  });

  it("refuses lines PostgreSQL text cannot hold before queueing them", async () => {
    const { backend } = await openSessionAt(`${url}#nul`);
    assert.throws(() => backend!.append(["x\u0000y"]), /raw NUL character/);
    assert.throws(() => backend!.rewrite(["a\nb"]), /holds a newline/);
    backend!.append(sessionLines("nul", 1));
    await backend!.close();
    assert.equal((await readLinesAt(`${url}#nul`))!.lines.length, 2);
  });

  it("refuses a schema from a newer bonsai with a clear message", async () => {
    await admin.query("UPDATE bonsai.meta SET version = $1", [POSTGRES_SCHEMA_VERSION + 1]);
    try {
      await assert.rejects(openSessionAt(`${url}#x`), (error: Error) => {
        assert.ok(error instanceof StoreVersionError);
        assert.ok(
          error.message.includes(`schema is version ${POSTGRES_SCHEMA_VERSION + 1}, this bonsai knows up to ${POSTGRES_SCHEMA_VERSION}; upgrade bonsai to use it`),
          error.message,
        );
        assert.doesNotMatch(error.message, /password/);
        return true;
      });
      await assert.rejects(listSessionsAt(url), StoreVersionError);
    } finally {
      await admin.query("UPDATE bonsai.meta SET version = $1", [POSTGRES_SCHEMA_VERSION]);
    }
  });

  it("upgrades a schema from an older bonsai step by step, keeping its sessions", async () => {
    const old = await testDatabase();
    try {
      const { backend } = await openSessionAt(`${old.url}#kept`);
      backend!.append(sessionLines("kept", 3));
      await backend!.close();
      // back to version 1, as the first release left it
      const client = new pg.Client({ connectionString: old.url });
      await client.connect();
      try {
        await client.query("DROP TABLE bonsai.pruned; UPDATE bonsai.meta SET version = 1");
        const opened = await openSessionAt(`${old.url}#kept`);
        assert.equal(opened.loaded!.fileEntries.length, 4);
        opened.backend!.archive!.append(['{"entryId":"e0000001"}']);
        await opened.backend!.close();
        assert.deepEqual((await client.query("SELECT version FROM bonsai.meta")).rows, [{ version: POSTGRES_SCHEMA_VERSION }]);
        assert.deepEqual((await client.query("SELECT line FROM bonsai.pruned")).rows, [{ line: '{"entryId":"e0000001"}' }]);
      } finally {
        await client.end();
      }
    } finally {
      await old.stop();
    }
  });

  it("says on stderr what was still queued when a process exits without close()", async () => {
    const child = spawnSync(process.execPath, [...scriptArgs(join(import.meta.dirname, "../helpers/pg-exit-early.ts")), `${url}#early`], {
      encoding: "utf8",
    });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stderr, /^bonsai: postgres:\/\/.*#early: 21 lines were never written: the process exited before close\(\) finished$/m);
  });

  it("says which server it could not reach", async () => {
    await assert.rejects(
      openSessionAt("postgres://nobody:secret@127.0.0.1:1/db#x"),
      (error: Error) => /postgres:\/\/nobody@127\.0\.0\.1:1\/db: cannot connect to PostgreSQL/.test(error.message) && !error.message.includes("secret"),
    );
  });
});
