/**
 * SessionManager over each database store: the same behaviour as over a file (appends, reload,
 * persisted leaf, names, branched sessions, lossy rewrites with a backup, one writer), and the
 * PostgreSQL write queue seen through the manager (flush and close report a failed write).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { SessionFileError } from "../../src/storage/load.js";
import { SessionLockedError } from "../../src/storage/lock.js";
import { SessionManager } from "../../src/session/manager.js";
import { copySession } from "../../src/storage/copy.js";
import { listSessionsAt, readLinesAt } from "../../src/storage/open.js";
import { testDatabase } from "../helpers/postgres.js";
import { assistantMsg, userMsg } from "../helpers/session-builders.js";

function managerSuite(name: string, setup: () => Promise<{ store: string; done: () => Promise<void> }>): void {
  describe(`SessionManager over ${name}`, () => {
    let store: string;
    let done: () => Promise<void>;
    let dir: string;
    before(async () => {
      ({ store, done } = await setup());
      dir = mkdtempSync(join(tmpdir(), "bonsai-"));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await done();
    });

    it("creates a session in the store, appends, and reads it back with the same tree, leaf and context", async () => {
      const session = await SessionManager.createIn(store, "/work/project");
      const id = session.getSessionId();
      assert.equal(session.getLocation(), `${store}#${id}`);
      assert.equal(session.getStoreKind(), name === "SQLite" ? "sqlite" : "postgres");
      const first = session.appendMessage(userMsg("hello"));
      session.appendMessage(assistantMsg("hi"));
      session.appendModelChange("anthropic", "claude-sonnet-4-5");
      session.appendMessage(userMsg("again"));
      session.branch(first);
      await session.close();

      const reopened = await SessionManager.openUrl(`${store}#${id}`);
      assert.equal(reopened.getCwd(), "/work/project");
      assert.equal(reopened.getEntries().length, 5, "four entries and the checkout marker");
      assert.equal(reopened.getLeafId(), first, "the moved leaf survived the reload");
      assert.deepEqual(
        reopened.buildSessionContext().messages.map((m) => m.role),
        ["user"],
      );
      reopened.appendMessage(assistantMsg("from the branch"));
      await reopened.flush();
      await reopened.close();
      const lines = (await readLinesAt(`${store}#${id}`))!.lines;
      assert.equal(lines.length, 7);
      assert.equal(JSON.parse(lines[0]).id, id, "the header carries the id the session is stored under");
    });

    it("opens a new session by location, names it, and lists it under its name", async () => {
      const session = await SessionManager.openUrl(`${store}#named`);
      assert.equal(session.getSessionId(), "named");
      session.appendMessage(userMsg("first"));
      session.appendSessionInfo("Refactor the parser");
      await session.close();
      const listed = (await listSessionsAt(store)).find((s) => s.id === "named");
      assert.equal(listed?.title, "Refactor the parser");
      const reopened = await SessionManager.openUrl(`${store}#named`, { readOnly: true });
      assert.equal(reopened.getSessionName(), "Refactor the parser");
      assert.equal(reopened.getHeader().title, "Refactor the parser", "the header title was rewritten too");
    });

    it("refuses a second writer and a write to a read-only or closed session", async () => {
      const writer = await SessionManager.createIn(`${store}#one-writer`, "/w");
      writer.appendMessage(userMsg("x"));
      await writer.flush();
      await assert.rejects(SessionManager.openUrl(`${store}#one-writer`), SessionLockedError);
      const reader = await SessionManager.openUrl(`${store}#one-writer`, { readOnly: true });
      assert.throws(() => reader.appendMessage(userMsg("y")), /read-only/);
      await writer.close();
      assert.throws(() => writer.appendMessage(userMsg("z")), /closed/);
      await assert.rejects(SessionManager.createIn(`${store}#one-writer`, "/w"), /already exists/);
      await assert.rejects(SessionManager.openUrl(`${store}#missing`, { readOnly: true }), (error: Error) => {
        assert.ok(error instanceof SessionFileError);
        assert.match(error.message, /#missing: no such session/);
        return true;
      });
    });

    it("branches into a new session in the same store and keeps writing there", async () => {
      const session = await SessionManager.createIn(store, "/w");
      const a = session.appendMessage(userMsg("a"));
      session.appendMessage(assistantMsg("b"));
      session.appendLabelChange(a, "start");
      const oldLocation = session.getLocation()!;
      const next = session.createBranchedSession(a)!;
      assert.notEqual(next, oldLocation);
      assert.ok(next.startsWith(`${store}#`), next);
      session.appendMessage(assistantMsg("c"));
      await session.close();

      const branched = await SessionManager.openUrl(next, { readOnly: true });
      assert.equal(branched.getHeader().parentSession, oldLocation);
      assert.deepEqual(
        branched.getEntries().map((e) => e.type),
        ["message", "label", "message"],
      );
      assert.equal(branched.getLabel(a), "start");
      const old = await SessionManager.openUrl(oldLocation, { readOnly: true });
      assert.equal(old.getEntries().length, 3, "the old session is untouched");
    });

    it("keeps a backup before rewriting a session whose skipped lines are not in memory", async () => {
      const file = join(dir, "damaged.jsonl");
      const header = { type: "session", version: 3, id: "damaged", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" };
      const entry = { type: "message", id: "m1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: userMsg("x") };
      writeFileSync(file, `${JSON.stringify(header)}\nnot json\n${JSON.stringify(entry)}\n`);
      await copySession(file, `${store}#damaged`);
      const warnings: string[] = [];
      const session = await SessionManager.openUrl(`${store}#damaged`, { onWarning: (w) => warnings.push(w) });
      assert.match(warnings[0], /#damaged:2: malformed JSON/);
      session.appendSessionInfo("renamed");
      await session.close();
      const backups = (await listSessionsAt(store)).filter((s) => s.id.startsWith("damaged.bak-"));
      assert.equal(backups.length, 1);
      assert.deepEqual((await readLinesAt(backups[0].location))!.lines[1], "not json");
      const lines = (await readLinesAt(`${store}#damaged`))!.lines;
      assert.ok(!lines.includes("not json"));
      assert.equal(JSON.parse(lines[0]).title, "renamed");
    });
  });
}

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

managerSuite("SQLite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  dirs.push(dir);
  return { store: `sqlite:${join(dir, "s.sqlite")}`, done: async () => {} };
});

managerSuite("PostgreSQL", async () => {
  const db = await testDatabase();
  return { store: db.url, done: db.stop };
});

describe("SessionManager over PostgreSQL: the write queue", () => {
  let url: string;
  let stop: () => Promise<void>;
  before(async () => {
    ({ url, stop } = await testDatabase());
  });
  after(async () => stop());

  it("reports a failed write from flush() and close(), and refuses appends after it", async () => {
    const session = await SessionManager.createIn(`${url}#queue`, "/w");
    session.appendMessage(userMsg("kept"));
    await session.flush();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // the writer's connection dies, as when the server restarts
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'bonsai %' AND datname = current_database()");
    } finally {
      await admin.end();
    }
    session.appendMessage(userMsg("lost"));
    await assert.rejects(session.flush(), /PostgreSQL/);
    assert.throws(() => session.appendMessage(userMsg("refused")), /PostgreSQL/);
    await assert.rejects(session.close(), /PostgreSQL/);
    const reopened = await SessionManager.openUrl(`${url}#queue`, { readOnly: true });
    assert.deepEqual(
      reopened.buildSessionContext().messages.map((m) => (m.role === "user" ? m.content : "")),
      ["kept"],
    );
  });
});
