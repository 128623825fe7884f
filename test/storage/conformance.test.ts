/**
 * The conformance corpus in every database store: each shared case is copied into SQLite and
 * PostgreSQL, opened through SessionManager.openUrl, and must give the reference's answers (the
 * same goldens test/conformance.test.ts checks on the files).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { flattenTree } from "../../src/session/tree.js";
import { copySession } from "../../src/storage/copy.js";
import { conformanceCases, REAL_SESSION, realGolden } from "../helpers/fixtures.js";
import { testDatabase } from "../helpers/postgres.js";

const cases = conformanceCases();

function conformanceSuite(name: string, setup: () => Promise<{ store: string; done: () => Promise<void> }>): void {
  describe(`conformance corpus in ${name}`, () => {
    let store: string;
    let done: () => Promise<void>;
    before(async () => {
      ({ store, done } = await setup());
    });
    after(async () => done());

    it(`gives the reference answers on all ${cases.length} cases`, async () => {
      assert.ok(cases.length >= 12);
      for (const { name: caseName, file, golden } of cases) {
        const location = `${store}#${caseName}`;
        await copySession(file, location);
        const session = await SessionManager.openUrl(location, { readOnly: true });
        assert.equal(session.getLocation(), location);
        assert.equal(session.getSessionFile(), undefined, "a database session is not a file");
        assert.equal(session.getEntries().length, golden.entryCount, caseName);
        assert.deepEqual(session.getLoadIssues(), []);
        assert.equal(session.getLeafId(), golden.leafId, caseName);
        for (const expected of golden.contexts) {
          const context = session.buildSessionContext(expected.leafId);
          assert.equal(context.thinkingLevel, expected.thinkingLevel, `${caseName} at ${expected.leafId}`);
          assert.deepEqual(context.model, expected.model, `${caseName} at ${expected.leafId}`);
          assert.deepEqual(context.messages, expected.messages, `${caseName} at ${expected.leafId}`);
        }
        const flat = flattenTree(session.getTree()).map(({ node }) => ({
          id: node.entry.id,
          parentId: node.entry.parentId,
          children: node.children.map((c) => c.entry.id),
          label: node.label ?? null,
        }));
        assert.deepEqual(flat, golden.tree, caseName);
        await session.close();
      }
    });

    it("migrates the real v1 session in place, keeping the original as a backup session", async () => {
      const golden = realGolden();
      const location = `${store}#real-v1`;
      await copySession(REAL_SESSION, location);
      let backupPath: string | undefined;
      const session = await SessionManager.openUrl(location, { migrate: true, onMigrate: (m) => (backupPath = m.backupPath) });
      assert.match(backupPath ?? "", /#real-v1\.bak-\d{4}-/);
      assert.equal(session.getEntries().length, golden.entryCount);
      assert.deepEqual(session.buildSessionContext().messages, golden.messages);
      await session.close();

      const reopened = await SessionManager.openUrl(location, { readOnly: true, onMigrate: () => assert.fail("already migrated") });
      assert.equal(reopened.getHeader().version, 3);
      assert.deepEqual(reopened.buildSessionContext().messages, golden.messages);
      const backup = await SessionManager.openUrl(backupPath!, { readOnly: true, onMigrate: (m) => assert.equal(m.fromVersion, 1) });
      assert.equal(backup.getEntries().length, golden.entryCount);
    });
  });
}

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

conformanceSuite("SQLite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  dirs.push(dir);
  return { store: `sqlite:${join(dir, "conformance.sqlite")}`, done: async () => {} };
});

conformanceSuite("PostgreSQL", async () => {
  const db = await testDatabase();
  return { store: db.url, done: db.stop };
});
