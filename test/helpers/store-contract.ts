/**
 * What every session store must do, as one suite run against each store (file, SQLite,
 * PostgreSQL): exact lines, appends that continue after a reopen, atomic rewrites, one writer,
 * the `ls` columns, exact copies in both directions, the archive of pruned tool output, and
 * reading a session into a tree index through the store map (what session/opening.ts needs).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { archiveLocation, readArchiveAt } from "../../src/storage/archive.js";
import type { BodyReader, DeferredBody } from "../../src/storage/bodies.js";
import { type EntrySink, SessionFileError } from "../../src/storage/load.js";
import { SessionLockedError } from "../../src/storage/lock.js";
import { copySession } from "../../src/storage/copy.js";
import { parseLocation } from "../../src/storage/location.js";
import { listSessionsAt, openSessionAt, readLinesAt } from "../../src/storage/open.js";
import { readIntoIndex } from "../../src/storage/reads.js";
import { storeOf } from "../../src/storage/stores.js";
import { pruneToolOutput } from "../../src/ops/prune-report.js";
import { restorePrunedOutputs } from "../../src/ops/prune.js";
import { SessionManager } from "../../src/session/manager.js";
import { conformanceCases, REAL_SESSION } from "./fixtures.js";
import { oddSessionLines, PRUNE_ONE, PRUNED_ID, PRUNED_LINE } from "./odd-session.js";

/** Line `i` of the test session `id`: the header at 0, then messages whose text exercises escapes and characters outside ASCII. */
export function sessionLine(id: string, i: number, title?: string): string {
  if (i === 0) {
    const header: Record<string, unknown> = { type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work/ü" };
    if (title) header.title = title;
    return JSON.stringify(header);
  }
  const n = i - 1;
  const text = `line ${n}: "quotes" \\ back\\slash \u2028 sep, emoji 🌳, é, 中文, tab\t, nul-escape \u0000 end`;
  return JSON.stringify({
    type: "message",
    id: `e${String(n).padStart(7, "0")}`,
    parentId: n === 0 ? null : `e${String(n - 1).padStart(7, "0")}`,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: n % 2 ? { role: "assistant", content: [{ type: "text", text }], timestamp: 1 } : { role: "user", content: text, timestamp: 1 },
  });
}

/** A header and `n` entries (see sessionLine). */
export function sessionLines(id: string, n: number, title?: string): string[] {
  return Array.from({ length: n + 1 }, (_, i) => sessionLine(id, i, title));
}

const bytesOf = (lines: readonly string[]) => lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);

/**
 * The least an index does with what a store reads into it (the session layer's TreeIndex does
 * more): entries in order, bodies left in a file read back through its BodyReader.
 */
class ListSink implements EntrySink {
  private readonly slots: ({ entry: SessionEntry } | { body: DeferredBody })[] = [];
  private readonly ids = new Set<string>();
  private bodies: BodyReader | undefined;

  private take(id: string, slot: { entry: SessionEntry } | { body: DeferredBody }): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    this.slots.push(slot);
    return true;
  }

  addIfNew(entry: SessionEntry): boolean {
    return this.take(entry.id, { entry });
  }

  addDeferred(type: string, id: string, _parentId: string | null, _role: string | undefined, line: number, offset: number, length: number): boolean {
    return this.take(id, { body: { id, type, line, offset, length } });
  }

  attachBodies(bodies: BodyReader): void {
    this.bodies = bodies;
  }

  entries(): SessionEntry[] {
    return this.slots.map((slot) => ("entry" in slot ? slot.entry : this.bodies!.read([slot.body])[0]));
  }

  close(): void {
    this.bodies?.close();
  }
}

/**
 * `store()` gives the store's location without a session (a directory for files); `session(store,
 * id)` the location of one session in it.
 */
export function storeContract(
  name: string,
  setup: () => Promise<{ store: string; session: (id: string) => string; done: () => Promise<void> }>,
): void {
  describe(`${name} store contract`, () => {
    let store: string;
    let at: (id: string) => string;
    let done: () => Promise<void>;
    let dir: string;
    before(async () => {
      ({ store, session: at, done } = await setup());
      dir = mkdtempSync(join(tmpdir(), "bonsai-"));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await done();
    });

    it("keeps every line exactly, and appends continue after a reopen", async () => {
      const lines = sessionLines("s-exact", 30);
      const first = await openSessionAt(at("s-exact"));
      assert.equal(first.loaded, undefined, "a new session does not exist before its first append");
      first.backend!.append(lines.slice(0, 1 + 10));
      first.backend!.append(lines.slice(11, 21));
      await first.backend!.close();

      const second = await openSessionAt(at("s-exact"));
      assert.equal(second.loaded!.fileEntries.length, 21);
      assert.deepEqual(second.loaded!.issues, []);
      second.backend!.append(lines.slice(21));
      await second.backend!.close();

      assert.deepEqual((await readLinesAt(at("s-exact")))!.lines, lines);
      const readOnly = await openSessionAt(at("s-exact"), { readOnly: true });
      assert.equal(readOnly.backend, undefined);
      assert.equal(readOnly.loaded!.fileEntries.length, 31);
      assert.equal(readOnly.loaded!.header.id, "s-exact");
    });

    it("with mustExist, refuses a session that is not there instead of starting it", async () => {
      for (const readOnly of [false, true]) {
        await assert.rejects(openSessionAt(at("s-absent"), { mustExist: true, readOnly }), (error: Error) => {
          assert.ok(error instanceof SessionFileError && error.code === "NOT_FOUND", `${error.name}: ${error.message}`);
          return true;
        });
      }
      assert.equal(await readLinesAt(at("s-absent")), undefined, "nothing was created");
    });

    it("lists sessions with title, cwd, size, entries and last activity", async () => {
      const before = Date.now();
      const lines = sessionLines("s-listed", 3, "header title");
      const { backend } = await openSessionAt(at("s-listed"));
      backend!.append(lines);
      await backend!.flush();
      let listed = (await listSessionsAt(store)).find((s) => s.title === "header title");
      assert.ok(listed, "the session is listed under its header title");
      assert.equal(listed.cwd, "/work/ü");
      assert.equal(listed.created, "2026-01-01T00:00:00.000Z");
      assert.equal(listed.entryCount, 3);
      assert.equal(listed.bytes, bytesOf(lines));
      assert.ok(Date.parse(listed.updated!) >= before - 1000, `updated ${listed.updated} is recent`);

      const info = JSON.stringify({ type: "session_info", id: "i1", parentId: "e0000002", timestamp: "2026-01-01T00:00:02.000Z", name: " renamed " });
      backend!.append([info]);
      await backend!.close();
      listed = (await listSessionsAt(store)).find((s) => s.location === listed!.location);
      assert.equal(listed?.title, "renamed", "the newest session_info names the session");
      assert.equal(listed?.entryCount, 4);
      assert.equal(listed?.bytes, bytesOf([...lines, info]));
    });

    it("rewrites all lines at once and keeps appending after them", async () => {
      const lines = sessionLines("s-rewrite", 10);
      const { backend } = await openSessionAt(at("s-rewrite"));
      backend!.append(lines);
      const replaced = sessionLines("s-rewrite", 4, "after rewrite");
      assert.deepEqual(backend!.rewrite(replaced), { leafDisplaced: false }, "no other program's lines: the last line is still the session's own");
      const more = sessionLines("s-rewrite", 6).slice(5);
      backend!.append(more);
      await backend!.close();
      assert.deepEqual((await readLinesAt(at("s-rewrite")))!.lines, [...replaced, ...more]);
      const listed = (await listSessionsAt(store)).find((s) => s.title === "after rewrite");
      assert.equal(listed?.entryCount, 6);
      assert.equal(listed?.bytes, bytesOf([...replaced, ...more]));
    });

    it("keeps a backup of the session as it was, and takes back one it made, and only that", async () => {
      const lines = sessionLines("s-backup", 3);
      const { backend } = await openSessionAt(at("s-backup"));
      backend!.append(lines);
      const kept = backend!.backup();
      const dropped = backend!.backup();
      backend!.rewrite(sessionLines("s-backup", 1, "after"));
      backend!.discardBackup(dropped);
      assert.throws(() => backend!.discardBackup(dropped), /not a backup this writer made/);
      assert.throws(() => backend!.discardBackup(at("s-backup")), /not a backup this writer made/);
      await backend!.close();
      assert.deepEqual((await readLinesAt(kept))?.lines, lines);
      assert.equal(await readLinesAt(dropped), undefined);
      assert.equal((await readLinesAt(at("s-backup")))?.lines.length, 2, "the session itself is not touched");
    });

    it("lets one writer in: a second gets SessionLockedError, readers still read, close lets the next in", async () => {
      const { backend } = await openSessionAt(at("s-locked"));
      backend!.append(sessionLines("s-locked", 2));
      await backend!.flush();
      await assert.rejects(
        async () => openSessionAt(at("s-locked")),
        (error: Error) => {
          assert.ok(error instanceof SessionLockedError, `${error.name}: ${error.message}`);
          assert.match(error.message, new RegExp(`session is being written by process ${process.pid} on `));
          return true;
        },
      );
      const reader = await openSessionAt(at("s-locked"), { readOnly: true });
      assert.equal(reader.loaded!.fileEntries.length, 3);
      await backend!.close();
      await backend!.close(); // twice is fine
      assert.throws(() => backend!.append(["{}"]), /closed/);
      const next = await openSessionAt(at("s-locked"));
      assert.equal(next.loaded!.fileEntries.length, 3);
      await next.backend!.close();
    });

    it("reports a malformed stored line on the same line number as the file did", async () => {
      const lines = sessionLines("s-bad", 3);
      const file = join(dir, "bad.jsonl");
      writeFileSync(file, `${lines[0]}\n${lines[1]}\n{"type":"message",oops\n${lines[2]}\n${lines[3]}\n`);
      await copySession(file, at("s-bad"));
      const { loaded } = await openSessionAt(at("s-bad"), { readOnly: true });
      assert.deepEqual(
        loaded!.issues.map((i) => [i.kind, i.line]),
        [["malformed-json", 3]],
      );
      assert.equal(loaded!.fileEntries.length, 4);
    });

    it("copies every conformance session and the real v1 session there and back, byte for byte", async () => {
      const files = [...conformanceCases().map((c) => c.file), REAL_SESSION];
      for (const [i, file] of files.entries()) {
        const result = await copySession(file, at(`conf-${i}`));
        const back = join(dir, `back-${i}.jsonl`);
        await copySession(at(`conf-${i}`), back);
        assert.ok(readFileSync(back).equals(readFileSync(file)), `${file} survives the round trip`);
        assert.equal(result.bytes, readFileSync(file).length);
      }
    });

    it("keeps an archive of pruned tool output beside the session, written under its lease", async () => {
      const where = parseLocation(at("s-archive"));
      assert.deepEqual((await readArchiveAt(where)).lines, [], "no archive before anything is pruned");
      const { backend } = await openSessionAt(where);
      backend!.append(sessionLines("s-archive", 2));
      const archive = storeOf(where).archive(where, backend!);
      assert.equal(archive.location, archiveLocation(where));
      const records = [1, 2, 3].map((n) => JSON.stringify({ entryId: `e${n}`, content: [{ type: "text", text: `original ${n}: ü 🌳` }] }));
      archive.append(records.slice(0, 2));
      archive.append(records.slice(2));
      assert.deepEqual(archive.lines(), records);
      await backend!.flush();
      assert.deepEqual((await readArchiveAt(where)).lines, records, "a reader without the lease sees it");
      const before = archive.snapshot();
      assert.equal(before.lines, 3);
      archive.replace([records[1]]);
      assert.deepEqual(archive.lines(), [records[1]]);
      archive.restore(before);
      assert.deepEqual(archive.lines(), records);
      archive.replace([]);
      await backend!.close();
      assert.deepEqual((await readArchiveAt(where)).lines, [], "replaced by no lines: no archive");
    });

    it("reads a session into an index through its store, under the lease or read-only", async () => {
      const where = parseLocation(at("s-index"));
      const lines = sessionLines("s-index", 6);
      const writer = await openSessionAt(where);
      writer.backend!.append(lines);
      await writer.backend!.close();
      for (const readOnly of [false, true]) {
        const sink = new ListSink();
        const { loaded, backend } = await storeOf(where).open(where, readIntoIndex(sink), { readOnly });
        try {
          assert.equal(loaded!.index, sink);
          assert.equal(loaded!.header.id, "s-index");
          assert.equal(loaded!.unmigrated, undefined, "a current session goes into the index");
          assert.deepEqual(loaded!.issues, []);
          assert.deepEqual(sink.entries(), lines.slice(1).map((line) => JSON.parse(line)));
          assert.equal(backend === undefined, readOnly);
        } finally {
          sink.close();
          await backend?.close();
        }
      }
    });

    it("prune, rename and restore copy every line they do not change, byte for byte (docs/ARCHITECTURE.md, storage decisions)", async () => {
      const original = oddSessionLines("s-odd");
      const { backend } = await openSessionAt(at("s-odd"));
      backend!.append(original);
      await backend!.close();
      const stored = async () => (await readLinesAt(at("s-odd")))!.lines;

      const report = await pruneToolOutput(at("s-odd"), { config: PRUNE_ONE });
      assert.deepEqual(report.entries.map((e) => e.id), [PRUNED_ID]);
      const pruned = await stored();
      assert.deepEqual(pruned.filter((_, i) => i !== PRUNED_LINE), original.filter((_, i) => i !== PRUNED_LINE));
      assert.notEqual(pruned[PRUNED_LINE], original[PRUNED_LINE]);

      // two rewrites in one session: the second copies from the lines the first wrote
      const session = await SessionManager.openUrl(at("s-odd"));
      session.appendSessionInfo("odd name");
      restorePrunedOutputs(session);
      await session.close();
      const named = await stored();
      assert.equal(JSON.parse(named[0]).title, "odd name");
      assert.deepEqual(named.slice(1, -1), original.slice(1));
      assert.match(named.at(-1)!, /"type":"session_info"/);
    });

    it("refuses to copy over an existing session unless told to, and skips a torn last line", async () => {
      const lines = sessionLines("s-copy", 5);
      const file = join(dir, "copy.jsonl");
      writeFileSync(file, `${lines.join("\n")}\n{"type":"message","id":"torn`);
      const result = await copySession(file, at("s-copy"));
      assert.deepEqual(result.skippedTornTail, { line: 7, bytes: 28 });
      assert.equal(result.lines, 6);
      await assert.rejects(copySession(file, at("s-copy")), /a session already exists there/);
      writeFileSync(file, `${sessionLines("s-copy", 2).join("\n")}\n`);
      await copySession(file, at("s-copy"), { overwrite: true });
      assert.deepEqual((await readLinesAt(at("s-copy")))!.lines, sessionLines("s-copy", 2));
    });
  });
}
