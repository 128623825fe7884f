/**
 * The CLI over database stores, as a user runs it: `bonsai copy` between a file, SQLite and
 * PostgreSQL and back (byte for byte), `bonsai ls` of each store, and the session commands
 * (info, tree, context, label, migrate, compact) on `sqlite:…#ID` and `postgres://…#ID` giving
 * what they give on the file; bad locations fail in one line.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliRun as Run, runBonsai } from "../helpers/cli.js";
import { conformanceCases, REAL_SESSION } from "../helpers/fixtures.js";
import { testDatabase } from "../helpers/postgres.js";

const bonsai = (...args: string[]) => runBonsai(args);

async function json(...args: string[]): Promise<Record<string, unknown>> {
  const run = await bonsai(...args, "--json");
  assert.equal(run.code, 0, `bonsai ${args.join(" ")}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

function assertOneLineError(run: Run, mentions: RegExp): void {
  assert.equal(run.code, 1, `exit code (stderr: ${run.stderr})`);
  const lines = run.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line on stderr, got: ${JSON.stringify(run.stderr)}`);
  assert.match(lines[0], /^bonsai: /);
  assert.match(lines[0], mentions);
  assert.equal(run.stdout, "");
}

/** A report without the fields that name where the session is. */
function withoutPlace(report: Record<string, unknown>): Record<string, unknown> {
  const { file: _file, compactionId: _id, ...rest } = report;
  return rest;
}

describe("bonsai over database stores", () => {
  let tmp: string;
  let pgUrl: string;
  let stopPg: () => Promise<void>;
  const sample = conformanceCases()[3];
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "bonsai-"));
    ({ url: pgUrl, stop: stopPg } = await testDatabase());
  });
  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await stopPg();
  });

  it("copies a file into SQLite, on to PostgreSQL and back to a file, byte for byte, and lists each store", async () => {
    const db = join(tmp, "s.sqlite");
    const headerId = JSON.parse(readFileSync(sample.file, "utf8").split("\n")[0]).id as string;
    const toSqlite = await json("copy", sample.file, `sqlite:${db}`);
    assert.equal(toSqlite.to, `sqlite:${db}#${headerId}`, "the session keeps its own id");
    assert.equal(toSqlite.bytes, readFileSync(sample.file).length);

    const toPg = await json("copy", `sqlite:${db}#${headerId}`, `${pgUrl}#copied`);
    assert.equal(toPg.to, `${pgUrl}#copied`);
    const back = join(tmp, "back");
    mkdirSync(back);
    const toFile = await json("copy", `${pgUrl}#copied`, back);
    assert.ok(readFileSync(toFile.to as string).equals(readFileSync(sample.file)));
    assert.deepEqual(readdirSync(back), [String(toFile.to).slice(back.length + 1)]);

    const listed = (await json("ls", `sqlite:${db}`)) as unknown as { id: string; entryCount: number; bytes: number }[];
    assert.deepEqual(
      listed.map((s) => [s.id, s.entryCount, s.bytes]),
      [[headerId, sample.golden.entryCount, readFileSync(sample.file).length]],
    );
    const human = await bonsai("ls", pgUrl);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`${sample.golden.entryCount}\\s+\\d+\\.\\d KB\\s+.*#copied\\n1 session,`));
    const files = (await json("ls", back)) as unknown as { location: string }[];
    assert.deepEqual(
      files.map((s) => s.location),
      [toFile.to],
    );

    const again = await bonsai("copy", sample.file, `sqlite:${db}`);
    assertOneLineError(again, /a session already exists there; .*--force/);
    assert.equal((await bonsai("copy", sample.file, `sqlite:${db}`, "--force")).code, 0);
  });

  it("answers info, tree and context on a database session exactly as on the file", async () => {
    const locations = [`sqlite:${join(tmp, "i.sqlite")}#s`, `${pgUrl}#inspect`];
    await Promise.all(locations.map((location) => json("copy", sample.file, location)));
    const commands = ["info", "tree", "context"];
    const fromFile = await Promise.all(commands.map((command) => json(command, sample.file)));
    await Promise.all(
      locations.flatMap((location) =>
        commands.map(async (command, i) => {
          const fromStore = await json(command, location);
          assert.deepEqual(withoutPlace(fromStore), withoutPlace(fromFile[i]), `${command} ${location}`);
          if (command === "info") assert.equal(fromStore.file, location);
        }),
      ),
    );
  });

  it("compacts a PostgreSQL session like the file, and labels, checks out and migrates database sessions", async () => {
    const file = join(tmp, "compact.jsonl");
    copyFileSync(REAL_SESSION, file);
    // migrated once, so both copies hold the same entry ids (a v1 file gets new ones on each migration)
    await json("migrate", file);
    const location = `${pgUrl}#compact-me`;
    await json("copy", file, location);
    const onFile = await json("compact", file, "--keep-recent", "4000");
    const onPg = await json("compact", location, "--keep-recent", "4000");
    assert.equal(onPg.compacted, true);
    assert.deepEqual(withoutPlace(onPg), withoutPlace(onFile));
    // the same context, but for the new compaction entry's own id and time
    const onStore = (await json("context", location)) as { messages: { role: string; summary?: string }[] };
    const onDisk = (await json("context", file)) as { messages: { role: string; summary?: string }[] };
    assert.equal(onStore.messages[0].role, "compactionSummary");
    assert.equal(onStore.messages[0].summary, onDisk.messages[0].summary);
    assert.deepEqual(onStore.messages.slice(1), onDisk.messages.slice(1));

    const sqlite = `sqlite:${join(tmp, "l.sqlite")}#labels`;
    await json("copy", sample.file, sqlite);
    const leaf = sample.golden.tree[1].id;
    const labeled = await json("label", sqlite, leaf, "here");
    assert.equal(labeled.changed, true);
    const moved = await json("checkout", sqlite, leaf);
    assert.equal(moved.newLeafId, leaf);
    const tree = (await json("tree", sqlite)) as { leafId: string; nodes: { id: string; label: string | null }[] };
    assert.equal(tree.leafId, leaf);
    assert.equal(tree.nodes.find((n) => n.id === leaf)?.label, "here");

    const old = `sqlite:${join(tmp, "m.sqlite")}#v1`;
    await json("copy", REAL_SESSION, old);
    const migrated = await json("migrate", old);
    assert.equal(migrated.migrated, true);
    assert.match(String(migrated.backupPath), /#v1\.bak-/);
    assert.equal((await json("migrate", old)).migrated, false);
  });

  it("prunes a database session with its originals archived in the store, and restores them", async () => {
    const file = join(tmp, "prune.jsonl");
    copyFileSync(REAL_SESSION, file);
    await json("migrate", file);
    for (const location of [`sqlite:${join(tmp, "p.sqlite")}#prune`, `${pgUrl}#prune`]) {
      await json("copy", file, location);
      const before = await json("context", location);
      const pruned = await json("prune", location, "--protect", "2000", "--min-savings", "0");
      assert.ok((pruned.prunedCount as number) > 0, `something to prune in ${location}`);
      assert.match(String(pruned.archive), /#prune \(table (bonsai\.)?pruned\)$/);
      const after = await json("context", location);
      assert.ok((after.estimatedTokens as number) < (before.estimatedTokens as number));
      const restored = await json("prune", location, "--restore");
      assert.equal((restored.restored as string[]).length, pruned.prunedCount);
      assert.deepEqual((await json("context", location)).messages, before.messages, "the originals are back");
    }
  });

  it("fails in one line on a missing session, a store without an id, an unknown store", async () => {
    const db = `sqlite:${join(tmp, "e.sqlite")}`;
    await json("copy", sample.file, `${db}#there`);
    const [info, label, tree, ls, lsDir, copy] = await Promise.all([
      bonsai("info", `${db}#missing`),
      bonsai("label", `${db}#missing`, "abc", "x"),
      bonsai("tree", db),
      bonsai("ls", "mysql://h/db"),
      bonsai("ls", join(tmp, "nowhere")),
      bonsai("copy", `${db}#nope`, join(tmp, "x.jsonl")),
    ]);
    assertOneLineError(info, /#missing: no such session/);
    assertOneLineError(label, /#missing: no such session/);
    assertOneLineError(tree, /which session\? add #SESSION_ID \(bonsai ls sqlite:/);
    assertOneLineError(ls, /unknown store "mysql:"/);
    assertOneLineError(lsDir, /no such directory/);
    assertOneLineError(copy, /no such session; nothing copied/);
  });
});
