/**
 * `bonsai copy` carries a session's archive of pruned tool output along (docs/ARCHITECTURE.md, storage decisions:
 * pruning never destroys): file -> file, file -> SQLite -> file and file -> PostgreSQL, exactly,
 * so that restoring on the copy gives back the original tool results after the source is gone.
 * No archive is made up for an unpruned session, an archive already at the target is never
 * replaced without --force, a copy that fails halfway leaves the target as it was, and one killed
 * halfway leaves nothing a restore would take from the wrong session.
 */
import assert from "node:assert/strict";
import fs, { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "libsql";
import { sqliteValue } from "../../src/storage/sqlite-schema.js";
import { prunedArchivePath, pruneSession, restorePrunedOutputs } from "../../src/ops/prune.js";
import type { ToolResultMessage } from "../../src/format/message-types.js";
import { SessionManager } from "../../src/session/manager.js";
import { readArchiveAt } from "../../src/storage/archive.js";
import { copySession } from "../../src/storage/copy.js";
import { parseLocation } from "../../src/storage/location.js";
import { readLinesAt } from "../../src/storage/open.js";
import { runBonsai } from "../helpers/cli.js";
import { testDatabase } from "../helpers/postgres.js";
import { assistantMsg, tempDir, toolResultMsg, userMsg } from "../helpers/session-builders.js";
import { scriptArgs } from "../helpers/bonsai-bin.js";

const KILLED_COPY = resolve(import.meta.dirname, "../helpers/copy-killed.ts");

/** Prune settings under which the bulky session below loses its older results. */
const PRUNE = { protectTokens: 3_000, minimumSavings: 0 };

/**
 * A session file with `results` bash calls whose outputs are ~2,000 estimated tokens each, each
 * one different (its number leads), and, when `prune`, pruned: two passes with one entry
 * restored in between, so the archive holds a repeated record and its order matters.
 * Returns the tool results as they were before pruning, by entry id.
 */
async function bulkySession(file: string, options: { results?: number; prune?: boolean } = {}): Promise<Map<string, ToolResultMessage>> {
  const session = SessionManager.open(file);
  session.appendMessage(userMsg("look around the repository"));
  for (let i = 0; i < (options.results ?? 6); i++) {
    session.appendMessage({
      ...assistantMsg(""),
      content: [{ type: "toolCall", id: `call_${i}`, name: "bash", arguments: { command: `ls -R dir${i}` } }],
      stopReason: "toolUse",
    });
    session.appendMessage({ ...toolResultMsg(`${i}:${"listing ".repeat(1_000)}`), toolCallId: `call_${i}`, toolName: "bash" });
  }
  const originals = new Map<string, ToolResultMessage>();
  for (const entry of session.getBranch()) {
    if (entry.type === "message" && entry.message.role === "toolResult") originals.set(entry.id, structuredClone(entry.message));
  }
  if (options.prune) {
    const first = pruneSession(session, { config: PRUNE, now: 1_000 });
    assert.ok(first.prunedCount >= 3, "the session is bulky enough to prune");
    assert.deepEqual(restorePrunedOutputs(session, { entryIds: [first.candidates[0].entryId] }).restored, [first.candidates[0].entryId]);
    assert.equal(pruneSession(session, { config: PRUNE, now: 2_000 }).prunedCount, 1);
  }
  await session.close();
  return originals;
}

const toolResults = (session: SessionManager) =>
  new Map(
    session
      .getBranch()
      .flatMap((e) => (e.type === "message" && e.message.role === "toolResult" ? [[e.id, e.message] as const] : [])),
  );

/** Restores everything in the session at `location` and checks every tool result is the original again. */
async function restoreAndCompare(location: string, originals: Map<string, ToolResultMessage>): Promise<void> {
  const session = await SessionManager.openUrl(location);
  try {
    const pruned = [...toolResults(session).values()].filter((m) => m.prunedAt !== undefined).length;
    assert.ok(pruned >= 3, `${location}: the copy is pruned`);
    const result = restorePrunedOutputs(session);
    assert.equal(result.restored.length, pruned, `${location}: every pruned result restored`);
    assert.deepEqual(result.notRestored, []);
  } finally {
    await session.close();
  }
  const reread = await SessionManager.openUrl(location, { readOnly: true });
  try {
    assert.deepEqual(toolResults(reread), originals, `${location}: the restored tool results are the originals`);
  } finally {
    await reread.close();
  }
}

const archiveLines = async (location: string) => (await readArchiveAt(parseLocation(location))).lines;
const sidecarLines = (file: string) => readFileSync(prunedArchivePath(file), "utf8").split("\n").slice(0, -1);

describe("bonsai copy with the archive of pruned tool output", () => {
  it("file -> file: the sidecar is copied byte for byte, and the copy restores after the original is gone", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      const originals = await bulkySession(src, { prune: true });
      const sidecar = readFileSync(prunedArchivePath(src));
      const dest = join(dir, "out", "copy.jsonl");
      const result = await copySession(src, dest);
      assert.deepEqual(readFileSync(prunedArchivePath(dest)), sidecar);
      assert.deepEqual(result.archive, {
        from: prunedArchivePath(src),
        to: prunedArchivePath(dest),
        lines: sidecarLines(src).length,
        bytes: sidecar.length,
      });
      assert.equal(result.replacedArchive, undefined);
      rmSync(src);
      rmSync(prunedArchivePath(src));
      await restoreAndCompare(dest, originals);
    } finally {
      cleanup();
    }
  });

  it("file -> SQLite -> file: the archive becomes the store's rows and back the same lines, and each copy restores", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      const originals = await bulkySession(src, { prune: true });
      const lines = sidecarLines(src);
      const sidecar = readFileSync(prunedArchivePath(src));
      const db = `sqlite:${join(dir, "s.sqlite")}#copied`;
      const toDb = await copySession(src, db);
      assert.equal(toDb.archive?.to, `${db} (table pruned)`);
      assert.deepEqual(await archiveLines(db), lines);
      rmSync(src);
      rmSync(prunedArchivePath(src));

      const back = join(dir, "back.jsonl");
      const toFile = await copySession(db, back);
      assert.equal(toFile.archive?.from, `${db} (table pruned)`);
      assert.deepEqual(readFileSync(prunedArchivePath(back)), sidecar, "the round trip gives the sidecar back byte for byte");

      await restoreAndCompare(db, originals);
      await restoreAndCompare(back, originals);
    } finally {
      cleanup();
    }
  });

  it("an unpruned session gets no archive at the target", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "plain.jsonl");
      await bulkySession(src);
      const file = await copySession(src, join(dir, "copy.jsonl"));
      const db = `sqlite:${join(dir, "s.sqlite")}#plain`;
      const row = await copySession(src, db);
      assert.equal(file.archive, undefined);
      assert.equal(row.archive, undefined);
      assert.equal(existsSync(prunedArchivePath(join(dir, "copy.jsonl"))), false);
      assert.deepEqual(await archiveLines(db), []);
      assert.deepEqual(readdirSync(dir).filter((name) => !name.startsWith("s.sqlite")).sort(), ["copy.jsonl", "plain.jsonl"]);
    } finally {
      cleanup();
    }
  });

  it("copies the complete records of a sidecar whose last append was cut short, and reports the torn line", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      await bulkySession(src, { prune: true });
      const complete = sidecarLines(src);
      fs.appendFileSync(prunedArchivePath(src), '{"entryId":"cut sh');
      const db = `sqlite:${join(dir, "s.sqlite")}#torn`;
      const result = await copySession(src, db);
      assert.deepEqual(await archiveLines(db), complete);
      assert.deepEqual(result.archive?.skippedTornTail, { line: complete.length + 1, bytes: 18 });
    } finally {
      cleanup();
    }
  });

  it("refuses an archive already at the target without --force, writing nothing, and replaces it with --force", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      await bulkySession(src, { prune: true });
      const dest = join(dir, "dest.jsonl");
      const stray = '{"entryId":"left over","content":[]}\n';
      writeFileSync(prunedArchivePath(dest), stray);
      await assert.rejects(copySession(src, dest), (error: Error) => {
        assert.equal(error.message, `${prunedArchivePath(dest)}: an archive of pruned tool output already exists there; choose another target or overwrite it (--force)`);
        return true;
      });
      assert.equal(existsSync(dest), false, "no session written");
      assert.equal(readFileSync(prunedArchivePath(dest), "utf8"), stray);

      const forced = await copySession(src, dest, { overwrite: true });
      assert.deepEqual(forced.replacedArchive, { location: prunedArchivePath(dest), lines: 1 });
      assert.deepEqual(readFileSync(prunedArchivePath(dest)), readFileSync(prunedArchivePath(src)));

      // an unpruned session forced over the copy takes its place without the old archive
      const plain = join(dir, "plain.jsonl");
      await bulkySession(plain);
      const replaced = await copySession(plain, dest, { overwrite: true });
      assert.equal(replaced.archive, undefined);
      assert.equal(replaced.replacedArchive?.lines, sidecarLines(src).length);
      assert.equal(existsSync(prunedArchivePath(dest)), false);
      assert.deepEqual(readFileSync(dest), readFileSync(plain));
    } finally {
      cleanup();
    }
  });

  it("SQLite: a failure in the session's write, or inside the archive's write after it, leaves the target as it was", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      const originals = await bulkySession(src, { prune: true });
      const path = join(dir, "s.sqlite");
      const db = `sqlite:${path}#target`;
      await copySession(join(dir, "src.jsonl"), `sqlite:${path}#other`); // creates the schema
      const raw = new Database(path);
      const count = (table: string) => sqliteValue(raw.prepare(`SELECT count(*) FROM ${table} WHERE ${table === "sessions" ? "id" : "session_id"} = 'target'`));
      try {
        const failArchive = "CREATE TRIGGER fail_archive BEFORE INSERT ON pruned WHEN NEW.session_id = 'target' AND NEW.seq = 2 BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END";
        const failEntries = "CREATE TRIGGER fail_entries BEFORE INSERT ON entries WHEN NEW.session_id = 'target' AND NEW.seq = 3 BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END";
        // the session's write fails: nothing is written, the archive is not touched
        raw.exec(failEntries);
        await assert.rejects(copySession(src, db), /disk full \(simulated\)/);
        assert.deepEqual([count("pruned"), count("entries"), count("sessions")], [0, 0, 0]);
        raw.exec("DROP TRIGGER fail_entries");

        // the session is written, then the third archive row fails: the session is taken back
        raw.exec(failArchive);
        await assert.rejects(copySession(src, db), /disk full \(simulated\)/);
        assert.deepEqual([count("pruned"), count("entries"), count("sessions")], [0, 0, 0]);

        // over an existing copy (--force), the failed copy puts the old session and archive back exactly
        raw.exec("DROP TRIGGER fail_archive");
        await copySession(src, db);
        const [keptLines, keptArchive] = [(await readLinesAt(parseLocation(db)))?.lines, await archiveLines(db)];
        const other = join(dir, "other.jsonl");
        await bulkySession(other, { results: 8, prune: true });
        assert.notDeepEqual(sidecarLines(other), keptArchive);
        for (const failure of [failEntries, failArchive]) {
          raw.exec(failure);
          await assert.rejects(copySession(other, db, { overwrite: true }), /disk full \(simulated\)/);
          assert.deepEqual([(await readLinesAt(parseLocation(db)))?.lines, await archiveLines(db)], [keptLines, keptArchive]);
          raw.exec(`DROP TRIGGER ${failure.split(" ")[2]}`);
        }
      } finally {
        raw.close();
      }
      await restoreAndCompare(db, originals);
    } finally {
      cleanup();
    }
  });

  it("file: a failed write of the session, or of the archive after it, leaves the target as it was, with no temp file", async () => {
    const { dir, cleanup } = tempDir();
    const realRename = fs.renameSync;
    const failRenameTo = (suffix: string) => {
      fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
        if (String(to).endsWith(suffix)) throw Object.assign(new Error(`ENOSPC: no space left on device, rename '${to}'`), { code: "ENOSPC" });
        realRename(from, to);
      };
      syncBuiltinESMExports();
    };
    try {
      const src = join(dir, "src", "s.jsonl");
      await bulkySession(src, { prune: true });
      const out = join(dir, "out");
      fs.mkdirSync(out);
      const dest = join(out, "copy.jsonl");

      failRenameTo("copy.jsonl");
      await assert.rejects(copySession(src, dest), /ENOSPC/);
      assert.deepEqual(readdirSync(out), [], "nothing at the target: no archive, no session, no temp file, no lock");

      failRenameTo(".pruned.jsonl");
      await assert.rejects(copySession(src, dest), (error: Error) => {
        assert.match(error.message, /ENOSPC/);
        assert.doesNotMatch(error.message, /could not be put back/);
        return true;
      });
      assert.deepEqual(readdirSync(out), [], "the session written first was taken back");

      // over an existing copy (--force): the old session and its archive stay exactly as they were
      fs.renameSync = realRename;
      syncBuiltinESMExports();
      await copySession(src, dest);
      const other = join(dir, "src", "other.jsonl");
      await bulkySession(other, { results: 8, prune: true });
      const [session, archive] = [readFileSync(dest), readFileSync(prunedArchivePath(dest))];
      failRenameTo(".pruned.jsonl");
      await assert.rejects(copySession(other, dest, { overwrite: true }), /ENOSPC/);
      assert.deepEqual([readFileSync(dest), readFileSync(prunedArchivePath(dest))], [session, archive]);
      assert.deepEqual(readdirSync(out).sort(), [dest, prunedArchivePath(dest)].map((path) => path.slice(out.length + 1)).sort());
    } finally {
      fs.renameSync = realRename;
      syncBuiltinESMExports();
      cleanup();
    }
  });

  it("a copy --force killed between its two writes leaves the new session beside the old archive, which restores nothing into it", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const [a, b, dest] = ["a.jsonl", "b.jsonl", "dest.jsonl"].map((name) => join(dir, name));
      await bulkySession(a, { prune: true });
      const originals = await bulkySession(b, { results: 8, prune: true });
      await copySession(a, dest);
      const oldArchive = readFileSync(prunedArchivePath(dest));

      const child = spawnSync(process.execPath, [...scriptArgs(KILLED_COPY), b, dest], { encoding: "utf8" });
      assert.equal(child.signal, "SIGKILL", `the copy was killed half way: ${child.stderr}`);
      assert.deepEqual(readFileSync(dest), readFileSync(b), "the session was replaced first");
      assert.deepEqual(readFileSync(prunedArchivePath(dest)), oldArchive, "the archive was not replaced yet");

      const session = SessionManager.open(dest);
      try {
        const result = restorePrunedOutputs(session);
        assert.deepEqual(result.restored, [], "nothing of the other session's archive is written into it");
        assert.ok(result.notRestored.length >= 3);
      } finally {
        await session.close();
      }
      assert.deepEqual(readFileSync(dest), readFileSync(b));

      await copySession(b, dest, { overwrite: true }); // the copy run again completes it
      await restoreAndCompare(dest, originals);
    } finally {
      cleanup();
    }
  });

  it("through the CLI: prune, copy into SQLite, delete the original, restore on the copy", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      const originals = await bulkySession(src);
      const prune = await runBonsai(["prune", src, "--protect", String(PRUNE.protectTokens), "--min-savings", "0", "--json"]);
      assert.equal(prune.code, 0, prune.stderr);
      const pruned = JSON.parse(prune.stdout).prunedCount as number;
      assert.ok(pruned >= 3);
      const lines = sidecarLines(src);

      const db = `sqlite:${join(dir, "s.sqlite")}`;
      const copy = await runBonsai(["copy", src, db]);
      assert.equal(copy.code, 0, copy.stderr);
      const id = JSON.parse(readFileSync(src, "utf8").split("\n")[0]).id as string;
      const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
      assert.match(copy.stdout, new RegExp(`^with its pruned originals: .*src\\.jsonl\\.pruned\\.jsonl -> ${db}#${id} \\(table pruned\\) \\(${lines.length} lines, .*, verified\\)$`, "m"));
      assert.ok(bytes > 0);
      rmSync(src);
      rmSync(prunedArchivePath(src));

      const again = await runBonsai(["copy", `${db}#${id}`, join(dir, "back.jsonl"), "--json"]);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(JSON.parse(again.stdout).archive, {
        from: `${db}#${id} (table pruned)`,
        to: prunedArchivePath(join(dir, "back.jsonl")),
        lines: lines.length,
        bytes,
      });

      const restore = await runBonsai(["prune", `${db}#${id}`, "--restore", "--json"]);
      assert.equal(restore.code, 0, restore.stderr);
      assert.equal(JSON.parse(restore.stdout).restored.length, pruned);
      const copy2 = await SessionManager.openUrl(`${db}#${id}`, { readOnly: true });
      try {
        assert.deepEqual(toolResults(copy2), originals);
      } finally {
        await copy2.close();
      }
    } finally {
      cleanup();
    }
  });
});

describe("bonsai copy with the archive, PostgreSQL", () => {
  let pgUrl: string;
  let stopPg: () => Promise<void>;
  before(async () => {
    ({ url: pgUrl, stop: stopPg } = await testDatabase());
  });
  after(async () => {
    await stopPg();
  });

  it("file -> PostgreSQL -> file: the archive's rows are the sidecar's lines, and each copy restores", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      const originals = await bulkySession(src, { prune: true });
      const sidecar = readFileSync(prunedArchivePath(src));
      const pg = `${pgUrl}#copied`;
      const toPg = await copySession(src, pg);
      assert.equal(toPg.archive?.to, `${pg} (table bonsai.pruned)`);
      assert.deepEqual(await archiveLines(pg), sidecarLines(src));
      rmSync(src);
      rmSync(prunedArchivePath(src));

      const back = join(dir, "back.jsonl");
      await copySession(pg, back);
      assert.deepEqual(readFileSync(prunedArchivePath(back)), sidecar);
      // a session already there is refused, its lines and archive untouched
      const plain = join(dir, "plain.jsonl");
      await bulkySession(plain);
      await assert.rejects(copySession(plain, pg), /a session already exists there/);
      assert.deepEqual((await readLinesAt(pg))?.lines, readFileSync(back, "utf8").split("\n").slice(0, -1));
      assert.deepEqual(await archiveLines(pg), sidecarLines(back));

      await restoreAndCompare(pg, originals);
      await restoreAndCompare(back, originals);
    } finally {
      cleanup();
    }
  });

  it("a failed PostgreSQL write of the session, or of the archive after it, leaves nothing at the target", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(dir, "src.jsonl");
      await bulkySession(src, { prune: true });
      const pg = `${pgUrl}#failing`;
      await copySession(src, `${pgUrl}#schema`); // creates the schema
      const { default: pgDriver } = await import("pg");
      const admin = new pgDriver.Client({ connectionString: pgUrl });
      await admin.connect();
      try {
        await admin.query(`CREATE FUNCTION fail() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk full (simulated)'; END $$ LANGUAGE plpgsql`);
        await admin.query(`CREATE TRIGGER fail_entries BEFORE INSERT ON bonsai.entries FOR EACH ROW WHEN (NEW.session_id = 'failing') EXECUTE FUNCTION fail()`);
        await assert.rejects(copySession(src, pg), /disk full \(simulated\)/);
        const { rows } = await admin.query("SELECT (SELECT count(*) FROM bonsai.pruned WHERE session_id = 'failing') AS archived, (SELECT count(*) FROM bonsai.sessions WHERE id = 'failing') AS sessions");
        assert.deepEqual(rows, [{ archived: "0", sessions: "0" }]);
        await admin.query("DROP TRIGGER fail_entries ON bonsai.entries");
        // the session is written, then the archive fails: the session is taken back
        await admin.query(`CREATE TRIGGER fail_pruned BEFORE INSERT ON bonsai.pruned FOR EACH ROW WHEN (NEW.session_id = 'failing') EXECUTE FUNCTION fail()`);
        await assert.rejects(copySession(src, pg), /disk full \(simulated\)/);
        const again = await admin.query("SELECT (SELECT count(*) FROM bonsai.pruned WHERE session_id = 'failing') AS archived, (SELECT count(*) FROM bonsai.entries WHERE session_id = 'failing') AS entries, (SELECT count(*) FROM bonsai.sessions WHERE id = 'failing') AS sessions");
        assert.deepEqual(again.rows, [{ archived: "0", entries: "0", sessions: "0" }]);
        await admin.query("DROP TRIGGER fail_pruned ON bonsai.pruned");
      } finally {
        await admin.end();
      }
      const result = await copySession(src, pg);
      assert.equal(result.archive?.lines, sidecarLines(src).length);
    } finally {
      cleanup();
    }
  });
});
