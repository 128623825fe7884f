/**
 * Issue 24: oh-my-pi 18 opens every session file with a title slot, a line of exactly 256 bytes
 * before the header, which omp overwrites in place to rename the session. bonsai refused every
 * such file ("the first line is not a session header"). It must open them in every command, copy
 * the slot byte for byte at offset 0 through every rewrite, copy and store, and pick up a title
 * omp wrote in place after bonsai opened the file.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { TITLE_SLOT_BYTES } from "../../src/format/title-slot.js";
import { pruneSession, restorePrunedOutputs } from "../../src/ops/prune.js";
import { SessionManager } from "../../src/session/manager.js";
import { copySession } from "../../src/storage/copy.js";
import { runBonsai } from "../helpers/cli.js";
import { linesOf, oddSessionLines, PRUNE_ONE, PRUNED_ID } from "../helpers/odd-session.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);
let counter = 0;

/** A title slot as omp 18.2.3 writes one (session-title-slot.ts): JSON padded with spaces to 256 bytes with its newline. */
function ompSlot(title: string, updatedAt = "2026-11-30T09:00:00.000Z"): string {
  const bare = JSON.stringify({ type: "title", v: 1, title, source: "user", updatedAt, pad: "" });
  const line = JSON.stringify({ type: "title", v: 1, title, source: "user", updatedAt, pad: " ".repeat(TITLE_SLOT_BYTES - 1 - Buffer.byteLength(bare)) });
  assert.equal(Buffer.byteLength(line) + 1, TITLE_SLOT_BYTES);
  return line;
}

function ompFile(title = "Fix the flaky login test"): { file: string; lines: string[] } {
  const lines = [ompSlot(title), ...oddSessionLines()];
  const file = join(temp.dir, `omp-${++counter}.jsonl`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return { file, lines };
}

/** omp renaming the session: 256 bytes written at offset 0, nothing else touched. */
function retitleInPlace(file: string, title: string): string {
  const slot = ompSlot(title, "2026-11-30T10:00:00.000Z");
  const fd = openSync(file, "r+");
  writeSync(fd, Buffer.from(`${slot}\n`), 0, TITLE_SLOT_BYTES, 0);
  closeSync(fd);
  return slot;
}

const fileLines = (file: string) => linesOf(readFileSync(file, "utf8"));

describe("oh-my-pi's title slot", () => {
  it("a file that opens with one reads as the same session without it, with no issue", () => {
    const { file, lines } = ompFile();
    const plain = join(temp.dir, `plain-${++counter}.jsonl`);
    writeFileSync(plain, `${lines.slice(1).join("\n")}\n`);
    const withSlot = SessionManager.open(file, { readOnly: true });
    const without = SessionManager.open(plain, { readOnly: true });
    try {
      assert.deepEqual(withSlot.getLoadIssues(), []);
      assert.equal(withSlot.getHeader().id, "odd-1");
      assert.deepEqual(withSlot.buildSessionContext(), without.buildSessionContext());
      assert.equal(withSlot.getLeafId(), without.getLeafId());
    } finally {
      void withSlot.close();
      void without.close();
    }
  });

  it("prune and restore keep it byte for byte at offset 0, with a title omp wrote in place meanwhile; a rename by bonsai writes its name there, in the same 256 bytes", () => {
    const { file, lines } = ompFile();
    const session = SessionManager.open(file);
    try {
      pruneSession(session, { config: PRUNE_ONE, now: 1000 });
      assert.equal(fileLines(file)[0], lines[0]);
      const newSlot = retitleInPlace(file, "Login test fixed");
      assert.deepEqual(restorePrunedOutputs(session).restored, [PRUNED_ID]);
      assert.equal(fileLines(file)[0], newSlot, "the slot as omp left it, not as bonsai read it");
      // omp takes the title from the slot over the header's: bonsai's rename must reach the slot
      session.appendSessionInfo("renamed by bonsai");
      const renamed = fileLines(file)[0];
      assert.equal(Buffer.byteLength(renamed) + 1, TITLE_SLOT_BYTES);
      assert.equal(readFileSync(file).subarray(0, TITLE_SLOT_BYTES).toString(), `${renamed}\n`);
      assert.deepEqual({ ...JSON.parse(renamed), updatedAt: "", pad: "" }, { type: "title", v: 1, title: "renamed by bonsai", source: "user", updatedAt: "", pad: "" });
      assert.equal(JSON.parse(fileLines(file)[1]).type, "session");
      const long = "Überprüfung ✓ ".repeat(40);
      session.appendSessionInfo(long);
      const cut = fileLines(file)[0];
      assert.equal(Buffer.byteLength(cut) + 1, TITLE_SLOT_BYTES, "a long title is cut to whole characters to fit");
      assert.ok(long.trim().startsWith(JSON.parse(cut).title) && JSON.parse(cut).title.length > 50, JSON.parse(cut).title);
    } finally {
      void session.close();
    }
  });

  it("a copy to SQLite and back to a file is the same file, byte for byte", async () => {
    const { file } = ompFile("Übersetzung prüfen ✓");
    const db = join(temp.dir, `slot-${++counter}.db`);
    await copySession(file, `sqlite:${db}`);
    const back = join(temp.dir, `back-${counter}`);
    const copied = await copySession(`sqlite:${db}#odd-1`, back);
    assert.equal(readFileSync(copied.to, "utf8"), readFileSync(file, "utf8"));
  });

  it("every command opens such a file; ls shows omp's title; the slot survives compact, label and checkout", async () => {
    const { file, lines } = ompFile("Ship the release notes");
    for (const args of [["info", file], ["tree", file], ["context", file], ["export", file, "--md"]]) {
      const run = await runBonsai(args);
      assert.equal(run.code, 0, `${args[0]}: ${run.stderr}`);
    }
    const ls = await runBonsai(["ls", file, "--json"]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /"title": ?"Ship the release notes"/);
    for (const args of [["label", file, "a1", "here"], ["compact", file, "--keep-recent", "1"], ["checkout", file, "u1"]]) {
      const run = await runBonsai(args);
      assert.equal(run.code, 0, `${args[0]}: ${run.stderr}`);
      assert.equal(fileLines(file)[0], lines[0], `${args[0]} changed the title slot`);
    }
  });
});
