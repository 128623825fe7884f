/**
 * Rewrites copy every line they do not change byte for byte (docs/ARCHITECTURE.md, storage
 * decisions). They used to serialize every entry again, so a prune or a rename changed lines it
 * never touched (1234567890123456789 became 1234567890123456800, 1e400 null, 1.0 1, a key written
 * twice lost a value, escapes, key order and spacing changed), with no backup, and `bonsai prune
 * --restore` could not bring them back. The same for database rows: test/helpers/store-contract.ts.
 */
import assert from "node:assert/strict";
import { chmodSync, chownSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { BodyLoading } from "../../src/storage/load.js";
import type { ToolResultMessage } from "../../src/format/message-types.js";
import { pruneToolOutput, restoreToolOutput } from "../../src/ops/prune-report.js";
import { prunedArchivePath, pruneSession, readPrunedRecords, restorePrunedOutputs } from "../../src/ops/prune.js";
import { SessionManager } from "../../src/session/manager.js";
import { TreeIndex } from "../../src/session/tree.js";
import { loadLinesIndex } from "../../src/storage/lines.js";
import { runBonsai } from "../helpers/cli.js";
import { linesOf, ODD_PRUNED_LINE, oddSessionLines, PRUNE_ONE, PRUNED_ID, PRUNED_LINE } from "../helpers/odd-session.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);
let counter = 0;

function oddFile(lines = oddSessionLines()): string {
  const file = join(temp.dir, `odd-${++counter}.jsonl`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

const fileLines = (file: string) => linesOf(readFileSync(file, "utf8"));

/** Every line but those at `changed` is the original's, byte for byte; `extra` lines may follow. */
function assertUntouched(now: readonly string[], original: readonly string[], changed: readonly number[], extra = 0): void {
  assert.equal(now.length, original.length + extra, now.join("\n"));
  original.forEach((line, i) => {
    if (changed.includes(i)) assert.notEqual(now[i], line, `line ${i + 1} was to change`);
    else assert.equal(now[i], line, `line ${i + 1} changed`);
  });
}

describe("rewrites copy the lines they do not change", () => {
  it("bonsai prune changes only the pruned line, and --restore gives the file back byte for byte", async () => {
    const original = oddSessionLines();
    const file = oddFile(original);
    const pruned = await runBonsai(["prune", file, "--protect", "1", "--min-savings", "0", "--json"]);
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.deepEqual((JSON.parse(pruned.stdout) as { entries: { id: string }[] }).entries.map((e) => e.id), [PRUNED_ID]);
    const now = fileLines(file);
    assertUntouched(now, original, [PRUNED_LINE]);
    assert.match(now[PRUNED_LINE], /"prunedAt":\d+/);

    const restored = await runBonsai(["prune", file, "--restore"]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(readFileSync(file, "utf8"), `${original.join("\n")}\n`);
  });

  it("a file with CRLF endings keeps them: prune changes only the pruned line, and --restore gives it back byte for byte", async () => {
    const original = oddSessionLines();
    const file = join(temp.dir, `crlf-${++counter}.jsonl`);
    const crlf = `${original.join("\r\n")}\r\n`;
    writeFileSync(file, crlf);
    const pruned = await runBonsai(["prune", file, "--protect", "1", "--min-savings", "0"]);
    assert.equal(pruned.code, 0, pruned.stderr);
    const now = readFileSync(file, "utf8").split("\n");
    original.forEach((line, i) => {
      if (i !== PRUNED_LINE) assert.equal(now[i], `${line}\r`, `line ${i + 1} keeps its bytes and its CRLF ending`);
    });
    const restored = await runBonsai(["prune", file, "--restore"]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(readFileSync(file, "utf8"), crlf);
  });

  for (const bodies of ["checked", "trusted", "parsed", "eager"] as BodyLoading[]) {
    it(`bodies: "${bodies}": prune, rename and restore in one session, each rewrite copying from the file the one before wrote`, () => {
      const original = oddSessionLines();
      const file = oddFile(original);
      const session = SessionManager.open(file, { bodies });
      try {
        assert.deepEqual(session.getLoadIssues(), []);
        const result = pruneSession(session, { config: PRUNE_ONE, now: 1000 });
        assert.deepEqual(result.candidates.map((c) => c.entryId), [PRUNED_ID]);
        const afterPrune = fileLines(file);
        assertUntouched(afterPrune, original, [PRUNED_LINE]);

        // the pruned line is shorter: every later line has moved, and is still found
        session.appendSessionInfo("renamed");
        const afterRename = fileLines(file);
        assertUntouched(afterRename, afterPrune, [0], 1);
        assert.equal(afterRename[0], original[0].replace(/\}$/, ',"title":"renamed"}'), "the header gains its title, its other bytes as they were");
        assert.match(afterRename.at(-1)!, /^\{"type":"session_info",.*"name":"renamed"\}$/);

        assert.deepEqual(restorePrunedOutputs(session).restored, [PRUNED_ID]);
        const afterRestore = fileLines(file);
        assertUntouched(afterRestore, afterRename, [PRUNED_LINE]);
        assert.equal(afterRestore[PRUNED_LINE], original[PRUNED_LINE]);

        // a body never read (a branch pruning did not walk) is read from the file as it is now
        assert.equal((session.getEntry("side") as { message: { content: string } }).message.content, "side branch");
        assert.equal((session.getEntry("u2") as { message: { content: string } }).message.content, "dup é");
      } finally {
        void session.close();
      }
    });
  }

  it("naming the session rewrites the header line alone, again after a reopen; the same name again rewrites nothing", async () => {
    const original = oddSessionLines();
    const file = oddFile(original);
    const first = SessionManager.open(file);
    first.appendSessionInfo("first name");
    await first.close();
    const named = fileLines(file);
    assertUntouched(named, original, [0], 1);
    assert.equal(JSON.parse(named[0]).title, "first name");

    const second = SessionManager.open(file);
    second.appendSessionInfo("second name");
    const renamed = fileLines(file);
    assertUntouched(renamed, named, [0], 1);
    second.appendSessionInfo("second name");
    assert.deepEqual(fileLines(file).slice(0, -1), renamed, "only the new session_info line is added");
    await second.close();
  });

  it("naming the session edits the header's title alone: fields bonsai does not know keep their bytes", async () => {
    const original = oddSessionLines();
    const odd = '"big":12345678901234567890,"huge":1e400,"neg":-0,"esc":"caf\\u00e9"';
    original[0] = original[0].replace(/\}$/, `,${odd}}`);
    const file = oddFile(original);
    const session = SessionManager.open(file);
    session.appendSessionInfo("first name");
    assert.equal(fileLines(file)[0], original[0].replace(/\}$/, ',"title":"first name"}'), "the title is added, nothing else changes");
    session.appendSessionInfo('second "name"');
    assert.equal(fileLines(file)[0], original[0].replace(/\}$/, ',"title":"second \\"name\\""}'), "the title is replaced");
    session.appendSessionInfo("");
    assert.equal(fileLines(file)[0], original[0], "the title is removed");
    await session.close();
  });

  it("a change undone before the rewrite (a failed rewrite rolled back) leaves its line as it was", async () => {
    const original = oddSessionLines();
    const file = oddFile(original);
    const session = SessionManager.open(file);
    const entry = session.getEntry("tr1") as { message: ToolResultMessage };
    const before = entry.message;
    session.replaceMessage("tr1", { ...before, content: [{ type: "text", text: "changed" }] });
    session.replaceMessage("tr1", before);
    session.rewriteFile();
    assert.equal(readFileSync(file, "utf8"), `${original.join("\n")}\n`);
    await session.close();
  });

  it("pruneToolOutput and restoreToolOutput, what the CLI calls: the same", async () => {
    const original = oddSessionLines();
    const file = oddFile(original);
    const report = await pruneToolOutput(file, { config: PRUNE_ONE });
    assert.deepEqual(report.entries.map((e) => e.id), [PRUNED_ID]);
    assertUntouched(fileLines(file), original, [PRUNED_LINE]);
    await restoreToolOutput(file);
    assert.equal(readFileSync(file, "utf8"), `${original.join("\n")}\n`);
  });

  it("a pruned line JSON.stringify would not give back is archived whole, and --restore puts it back byte for byte", async () => {
    const original = oddSessionLines();
    original[PRUNED_LINE] = ODD_PRUNED_LINE;
    const file = oddFile(original);
    await pruneToolOutput(file, { config: PRUNE_ONE });
    assertUntouched(fileLines(file), original, [PRUNED_LINE]);
    const [record] = readPrunedRecords(prunedArchivePath(file));
    assert.equal(record.line, ODD_PRUNED_LINE);
    const report = await restoreToolOutput(file);
    assert.deepEqual(report.restored, [PRUNED_ID]);
    assert.equal(readFileSync(file, "utf8"), `${original.join("\n")}\n`);
  });

  it("a pruned line that JSON.stringify writes as it was is archived as its content only", async () => {
    const file = oddFile();
    await pruneToolOutput(file, { config: PRUNE_ONE });
    const [record] = readPrunedRecords(prunedArchivePath(file));
    assert.equal(record.entryId, PRUNED_ID);
    assert.equal("line" in record, false);
  });

  it("an archived line that is not the pruned entry's is not written: the content is restored instead", async () => {
    const original = oddSessionLines();
    original[PRUNED_LINE] = ODD_PRUNED_LINE;
    const file = oddFile(original);
    await pruneToolOutput(file, { config: PRUNE_ONE });
    const archive = prunedArchivePath(file);
    const [record] = readPrunedRecords(archive);
    for (const line of [ODD_PRUNED_LINE.replace('"id":"tr0"', '"id":"u1"'), ODD_PRUNED_LINE.replace('"isError":false,', '"isError":false,\n'), "not json"]) {
      writeFileSync(archive, `${JSON.stringify({ ...record, line })}\n`);
      await restoreToolOutput(file);
      const restored = fileLines(file)[PRUNED_LINE];
      assert.notEqual(restored, line);
      assert.equal((JSON.parse(restored) as { message: ToolResultMessage }).message.content[0].type, "text");
      assert.doesNotMatch(restored, /prunedAt/);
      await pruneToolOutput(file, { config: PRUNE_ONE }); // prune again for the next case
      const [again] = readPrunedRecords(archive).slice(-1);
      Object.assign(record, { prunedAt: again.prunedAt });
    }
  });

  it("database rows: each unchanged row is copied, also when a row another program stored holds a newline (read as two lines)", () => {
    const lines = oddSessionLines();
    const index = new TreeIndex();
    const loaded = loadLinesIndex(lines, "db#odd-1", index);
    assert.deepEqual(index.storedLines(loaded.header, false), lines);
    const split = new TreeIndex();
    loadLinesIndex([lines[0], `${lines[1]}\n${lines[2]}`, ...lines.slice(3)], "db#odd-1", split);
    assert.deepEqual(split.storedLines(loaded.header, false), lines);
  });

  it("a file another program rewrote since the open is not overwritten with lines from the wrong places", async () => {
    const original = oddSessionLines();
    const file = oddFile(original);
    const session = SessionManager.open(file);
    try {
      // pi takes no lock: it rewrote the file with a line more near the start
      const theirs = [original[0], '{"type":"custom","customType":"theirs","id":"x1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}', ...original.slice(1)];
      writeFileSync(file, `${theirs.join("\n")}\n`);
      assert.throws(() => session.rewriteFile(), /no longer holds it; the session was changed by another program since it was opened/);
      assert.deepEqual(fileLines(file), theirs);
    } finally {
      void session.close();
    }
  });
});

/** Issue 26, defect 2: only the archive record of the prune that made the entry restores it. */
describe("restore takes only the record of the entry's own prune", () => {
  for (const [what, change] of [
    ["another prune (prunedAt differs)", (r: Record<string, unknown>) => ({ ...r, prunedAt: 1 })],
    ["another session (the tool call differs)", (r: Record<string, unknown>) => ({ ...r, toolCallId: "call-from-elsewhere", content: [{ type: "text", text: "someone else's output" }] })],
  ] as const) {
    it(`a record of ${what} is not written into the session`, async () => {
      const original = oddSessionLines();
      const file = oddFile(original);
      await pruneToolOutput(file, { config: PRUNE_ONE });
      const archive = prunedArchivePath(file);
      const pruned = fileLines(file);
      writeFileSync(archive, `${readPrunedRecords(archive).map((r) => JSON.stringify(change(r as unknown as Record<string, unknown>))).join("\n")}\n`);
      const report = await restoreToolOutput(file);
      assert.deepEqual(report.restored, []);
      assert.deepEqual(report.notRestored, [{ entryId: PRUNED_ID, reason: "the archived original is of another prune or session; not restored" }]);
      assert.deepEqual(fileLines(file), pruned, "the session is unchanged");
    });
  }
});

/** Issue 26, defect 7: a rewrite keeps the session file's mode and owner; its archive gets them too. */
describe("rewrites keep who may read the session", () => {
  it("a 0600 session stays 0600 through prune and restore, and its archive is 0600", async () => {
    const file = oddFile();
    chmodSync(file, 0o600);
    await pruneToolOutput(file, { config: PRUNE_ONE });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(prunedArchivePath(file)).mode & 0o777, 0o600);
    await restoreToolOutput(file);
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it("run as root, a rewrite leaves a user's session theirs", { skip: process.getuid?.() !== 0 && "only root can give a file to another user" }, async () => {
    const file = oddFile();
    chownSync(file, 4321, 4321);
    await pruneToolOutput(file, { config: PRUNE_ONE });
    assert.deepEqual([statSync(file).uid, statSync(file).gid], [4321, 4321]);
    assert.deepEqual([statSync(prunedArchivePath(file)).uid, statSync(prunedArchivePath(file)).gid], [4321, 4321]);
  });
});

/** Issue 26, decided: a rewrite that leaves out unreadable lines says where they still are. */
describe("a rewrite that leaves out an unreadable line", () => {
  it("bonsai prune says so, naming the backup that keeps it", async () => {
    const lines = oddSessionLines();
    lines.splice(2, 0, "{this line is not JSON");
    const file = oddFile(lines);
    const run = await runBonsai(["prune", file, "--protect", "1", "--min-savings", "0"]);
    assert.equal(run.code, 0, run.stderr);
    const backup = /the file as it was is kept in (\S+)$/m.exec(run.stderr)?.[1];
    assert.ok(backup, run.stderr);
    assert.match(run.stderr, /1 unreadable line is left out of the rewritten file/);
    assert.ok(readFileSync(backup, "utf8").includes("{this line is not JSON"));
    assert.ok(!readFileSync(file, "utf8").includes("{this line is not JSON"));
  });
});
