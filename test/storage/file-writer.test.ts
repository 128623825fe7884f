/**
 * Storage rules of DESIGN.md section 4 and the loader of spec 12.6, adapted to bonsai's stricter
 * loader: clear errors for files that cannot be used, reported skips for bad lines, and nothing
 * valid lost after crashes (torn tails, truncation), bad bytes, locks and broken parent links.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it, mock } from "node:test";
import { estimateTokens } from "../../src/compaction/tokens.js";
import { type LoadIssue, loadSessionFile, loadSessionText, SessionFileError } from "../../src/storage/load.js";
import { SessionLockedError } from "../../src/storage/lock.js";
import { SessionManager } from "../../src/session/manager.js";
import { toJsonl, writeFileAtomic } from "../../src/storage/file-writer.js";
import { flattenTree } from "../../src/session/tree.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { assistantEntry, assistantMsg, entry, tempDir, userEntry, userMsg } from "../helpers/session-builders.js";
import { cjsFs, fullDisk, whileMocked } from "../helpers/fs-mocks.js";

const { readFileSync, writeFileSync, statSync, existsSync, readdirSync, mkdirSync, appendFileSync } = fs;
const { dir: DIR, cleanup } = tempDir();
after(cleanup);

let counter = 0;
/** A fresh path in its own directory, so directory listings only show this test's files. */
function freshFile(name = "s.jsonl"): string {
  const dir = join(DIR, `t${++counter}`);
  mkdirSync(dir);
  return join(dir, name);
}

const HEADER = { type: "session", version: 3, id: "sess", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" };
const basic = (): SessionEntry[] => [
  userEntry("e1", null, "one", 1),
  assistantEntry("e2", "e1", "two", 2),
  userEntry("e3", "e2", "three", 3),
];

function writeSession(file: string, entries: unknown[], header: unknown = HEADER): string {
  writeFileSync(file, toJsonl([header, ...entries]));
  return file;
}

const kinds = (issues: readonly LoadIssue[]) => issues.map((i) => [i.kind, i.line]);
const entryIds = (s: SessionManager) => s.getEntries().map((e) => e.id);

function expectFileError(fn: () => unknown, code: string, line?: number): SessionFileError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof SessionFileError, `expected SessionFileError, got ${caught}`);
  assert.equal(caught.code, code);
  assert.equal(caught.line, line);
  assert.equal(caught.message.includes("\n"), false, "one-line message");
  return caught;
}

describe("loadSessionFile: files that cannot be used", () => {
  it("NOT_FOUND for a missing file, NOT_A_FILE for a directory", () => {
    const missing = join(DIR, "missing.jsonl");
    const e = expectFileError(() => loadSessionFile(missing), "NOT_FOUND");
    assert.match(e.message, /missing\.jsonl/);
    expectFileError(() => loadSessionFile(DIR), "NOT_A_FILE");
  });

  it("EMPTY for an empty or blank file", () => {
    const file = freshFile();
    writeFileSync(file, "");
    expectFileError(() => loadSessionFile(file), "EMPTY");
    writeFileSync(file, "\n  \n\n");
    expectFileError(() => loadSessionFile(file), "EMPTY");
  });

  it("BAD_HEADER with the line number and reason", () => {
    const file = freshFile();
    writeFileSync(file, "this is not json\n");
    assert.match(expectFileError(() => loadSessionFile(file), "BAD_HEADER", 1).message, /:1: .*not JSON/);
    writeFileSync(file, `\n\n${JSON.stringify({ type: "message", id: "x" })}\n`);
    assert.match(expectFileError(() => loadSessionFile(file), "BAD_HEADER", 3).message, /not a session header/);
    writeFileSync(file, `${JSON.stringify({ type: "session", cwd: "/" })}\n`);
    assert.match(expectFileError(() => loadSessionFile(file), "BAD_HEADER", 1).message, /`id`/);
    writeFileSync(file, `${JSON.stringify({ ...HEADER, version: "3" })}\n`);
    assert.match(expectFileError(() => loadSessionFile(file), "BAD_HEADER", 1).message, /version/);
  });

  it("a valid file gives the header and its entries; a malformed middle line is skipped and reported", () => {
    const file = writeSession(freshFile(), basic().slice(0, 2));
    assert.equal(loadSessionFile(file).fileEntries.length, 3);
    const lines = readFileSync(file, "utf8").split("\n");
    writeFileSync(file, [lines[0], lines[1], "{not json", lines[2], ""].join("\n"));
    const loaded = loadSessionFile(file);
    assert.deepEqual(loaded.fileEntries.map((e) => e.id), ["sess", "e1", "e2"]);
    assert.deepEqual(kinds(loaded.issues), [["malformed-json", 3]]);
    assert.equal(loaded.issues[0].skipped, true);
  });

  it("reads CRLF line endings", () => {
    const text = toJsonl([HEADER, ...basic()]).replaceAll("\n", "\r\n");
    const loaded = loadSessionText(text);
    assert.equal(loaded.fileEntries.length, 4);
    assert.deepEqual(loaded.issues, []);
  });
});

describe("bad lines are reported and skipped, the rest kept", () => {
  it("garbage lines in the middle", () => {
    const [e1, e2, e3] = basic().map((e) => JSON.stringify(e));
    const text = [JSON.stringify(HEADER), e1, "garbage!!", e2, "", "[1,2", "}{", e3, ""].join("\n");
    const loaded = loadSessionText(text);
    assert.deepEqual(loaded.fileEntries.slice(1).map((e) => e.id), ["e1", "e2", "e3"]);
    assert.deepEqual(kinds(loaded.issues), [
      ["malformed-json", 3],
      ["malformed-json", 6],
      ["malformed-json", 7],
    ]);
  });

  it("a duplicated header", () => {
    const [e1, e2] = basic();
    const loaded = loadSessionText(toJsonl([HEADER, e1, { ...HEADER, id: "other" }, e2]));
    assert.equal(loaded.header.id, "sess");
    assert.deepEqual(loaded.fileEntries.slice(1).map((e) => e.id), ["e1", "e2"]);
    assert.deepEqual(kinds(loaded.issues), [["duplicate-header", 3]]);
  });

  it("wrong field types", () => {
    const bad = [
      { ...userEntry("b1", "e1", "x"), parentId: 7 },
      { type: "message", parentId: "e1", timestamp: "t", message: userMsg("no id") },
      { ...userEntry("b3", "e1", "x"), timestamp: 12 },
      entry("message", "b4", "e1", { message: { role: "user", content: 5 } }),
      entry("message", "b5", "e1", { message: { role: "assistant", content: "text, not blocks" } }),
      entry("thinking_level_change", "b6", "e1", { thinkingLevel: 3 }),
      entry("label", "b7", "e1", { label: "no target" }),
      entry("compaction", "b8", "e1", { summary: "s", tokensBefore: 1 }),
      entry("custom_message", "b9", "e1", { customType: "c", content: "x", display: "yes" }),
      entry("model_change", "b10", "e1", { provider: "openai" }),
      entry("message", "b12", "e1", { message: { role: "pythonExecution", output: "no code" } }),
      entry("message", "b13", "e1", { message: { role: "fileMention", files: "a.ts" } }),
      entry("message", "b14", "e1", { message: { role: "fileMention", files: [{ content: "no path" }] } }),
      { type: 42, id: "b11", parentId: "e1", timestamp: "t" },
      "just a string",
      null,
    ];
    const [e1, e2] = basic();
    const loaded = loadSessionText(toJsonl([HEADER, e1, ...bad, e2]));
    assert.deepEqual(loaded.fileEntries.slice(1).map((e) => e.id), ["e1", "e2"]);
    assert.deepEqual(
      loaded.issues.map((i) => i.kind),
      bad.map(() => "invalid-entry"),
    );
    assert.deepEqual(
      loaded.issues.map((i) => i.line),
      bad.map((_, i) => i + 3),
    );
    assert.match(loaded.issues[0].message, /parentId/);
    assert.match(loaded.issues[5].message, /thinkingLevel/);
  });

  it("an assistant block with a missing field is kept and never breaks context or estimates", () => {
    const odd = entry("message", "odd", "e1", {
      message: { ...assistantMsg("x"), content: [{ type: "text" }, { type: "thinking" }, { type: "toolCall", id: "c" }] },
    });
    const file = writeSession(freshFile(), [basic()[0], odd]);
    const s = SessionManager.open(file, { readOnly: true });
    const messages = s.buildSessionContext().messages;
    assert.equal(messages.length, 2);
    // only the empty arguments of the tool call count: "{}" is 2 characters
    assert.deepEqual(messages.map(estimateTokens), [1, 1]);
  });

  it("unknown entry types are kept, reported, and stay out of the context", () => {
    const [e1, e2] = basic();
    const future = entry("future_thing", "f1", "e1", { payload: [1, 2] }, 1);
    const file = writeSession(freshFile(), [e1, future, { ...e2, parentId: "f1" }]);
    const s = SessionManager.open(file, { readOnly: true });
    assert.deepEqual(entryIds(s), ["e1", "f1", "e2"]);
    assert.deepEqual(s.getLoadIssues().map((i) => [i.kind, i.line, i.skipped]), [["unknown-type", 3, false]]);
    assert.deepEqual(s.buildSessionContext().messages.map((m) => m.role), ["user", "assistant"]);
    assert.deepEqual(s.getEntry("f1"), future);
  });

  it("an unknown entry type is reported once, at its first line, however many lines have it", () => {
    const [e1, e2] = basic();
    const futures = [1, 2, 3].map((n) => entry("future_thing", `f${n}`, n === 1 ? "e1" : `f${n - 1}`, {}, n));
    const file = writeSession(freshFile(), [e1, ...futures, { ...e2, parentId: "f3" }]);
    const s = SessionManager.open(file, { readOnly: true });
    assert.deepEqual(s.getLoadIssues().map((i) => [i.kind, i.line, i.message]), [["unknown-type", 3, 'unknown entry type "future_thing" (3 lines, the first here); kept, ignored in context']]);
    assert.deepEqual(entryIds(s), ["e1", "f1", "f2", "f3", "e2"]);
  });

  it("duplicate ids: the later line is skipped and reported", () => {
    const [e1, e2] = basic();
    const loaded = loadSessionText(toJsonl([HEADER, e1, e2, { ...e2, message: userMsg("impostor") }]));
    assert.equal(loaded.fileEntries.length, 3);
    assert.deepEqual((loaded.fileEntries[2] as SessionEntry).id, "e2");
    assert.equal(((loaded.fileEntries[2] as { message: { role: string } }).message).role, "assistant");
    assert.deepEqual(kinds(loaded.issues), [["duplicate-id", 4]]);
  });

  it("non-UTF-8 bytes: inside a string the entry is kept and reported; elsewhere the line is skipped", () => {
    const [e1, e2, e3] = basic().map((e) => Buffer.from(`${JSON.stringify(e)}\n`));
    const inString = Buffer.from(`${JSON.stringify(userEntry("x1", "e1", "@@@@"))}\n`);
    const at = inString.indexOf("@@@@");
    inString[at] = 0xff;
    inString[at + 1] = 0xfe;
    const raw = Buffer.concat([Buffer.from([0xc3, 0x28, 0xff, 0x0a])]);
    const data = Buffer.concat([Buffer.from(`${JSON.stringify(HEADER)}\n`), e1, inString, raw, e2, e3]);
    const loaded = loadSessionText(data);
    assert.deepEqual(loaded.fileEntries.slice(1).map((e) => e.id), ["e1", "x1", "e2", "e3"]);
    assert.deepEqual(loaded.issues.map((i) => [i.kind, i.line, i.skipped]), [
      ["invalid-utf8", 3, false],
      ["malformed-json", 4, true],
    ]);
    // genuine U+FFFD characters are not mistaken for bad bytes
    const genuine = loadSessionText(toJsonl([HEADER, userEntry("g", null, "\uFFFD ok")]));
    assert.deepEqual(genuine.issues, []);
  });
});

describe("crash recovery", () => {
  it("a torn tail is reported, and the next append starts on a new line so nothing valid is lost", () => {
    const file = writeSession(freshFile(), basic());
    appendFileSync(file, '{"type":"message","id":"torn","parentId":"e3","timestamp":"2026-01-01T00:00:0');
    const warnings: string[] = [];
    const s = SessionManager.open(file, { onWarning: (w) => warnings.push(w) });
    assert.deepEqual(s.getLoadIssues().map((i) => [i.kind, i.line, i.skipped]), [["torn-tail", 5, true]]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /:5: .*incomplete/);
    assert.equal(s.getLeafId(), "e3");
    const added = s.appendMessage(assistantMsg("after the crash"));
    s.close();
    const r = SessionManager.open(file, { readOnly: true });
    assert.deepEqual(entryIds(r), ["e1", "e2", "e3", added]);
    assert.equal(r.getLeafId(), added);
    assert.equal(r.getEntry(added)?.parentId, "e3");
    // the torn bytes stay in the file as their own (reported) line
    assert.deepEqual(kinds(r.getLoadIssues()), [["malformed-json", 5]]);
  });

  it("a last line that is valid but unterminated is kept, and the next append does not merge with it", () => {
    const file = freshFile();
    writeFileSync(file, toJsonl([HEADER, ...basic()]).trimEnd());
    const s = SessionManager.open(file);
    assert.deepEqual(s.getLoadIssues(), []);
    const added = s.appendMessage(assistantMsg("x"));
    s.close();
    assert.deepEqual(entryIds(SessionManager.open(file, { readOnly: true })), ["e1", "e2", "e3", added]);
  });

  it("a file truncated at any byte keeps every complete line (or fails on the header, untouched)", () => {
    const full = Buffer.from(toJsonl([HEADER, ...basic(), entry("label", "e4", "e3", { targetId: "e1", label: "L" }, 4)]));
    const headerEnd = full.indexOf(0x0a);
    for (let cut = 1; cut < full.length; cut++) {
      const data = full.subarray(0, cut);
      if (cut < headerEnd) {
        assert.throws(() => loadSessionText(data), { name: "SessionFileError" }, `cut ${cut}`);
        continue;
      }
      const loaded = loadSessionText(data);
      const completeLines = data.subarray(0, data.lastIndexOf(0x0a) + 1).toString().split("\n").filter(Boolean);
      // the last, unterminated part is kept only if it happens to be complete JSON
      assert.ok(loaded.fileEntries.length >= completeLines.length, `cut ${cut}`);
      assert.ok(loaded.fileEntries.length <= completeLines.length + 1, `cut ${cut}`);
      assert.deepEqual(loaded.fileEntries.slice(0, completeLines.length), completeLines.map((l) => JSON.parse(l)), `cut ${cut}`);
      assert.equal(loaded.endsWithNewline, data[data.length - 1] === 0x0a, `cut ${cut}`);
    }
    // and on disk, a sample of cuts followed by an append: the append is never lost
    for (let cut = headerEnd; cut < full.length; cut += 53) {
      const file = freshFile();
      writeFileSync(file, full.subarray(0, cut));
      const s = SessionManager.open(file);
      const before = entryIds(s);
      const added = s.appendMessage(userMsg("resumed"));
      s.close();
      assert.deepEqual(entryIds(SessionManager.open(file, { readOnly: true })), [...before, added], `cut ${cut}`);
    }
  });

  it("an unreadable header fails the open with line and reason, and the file is left exactly as it was", () => {
    const file = freshFile();
    const bytes = Buffer.from(`{"type":"sess\n${toJsonl(basic())}`);
    writeFileSync(file, bytes);
    const past = new Date("2025-06-01T00:00:00Z");
    fs.utimesSync(file, past, past);
    const mtime = statSync(file).mtimeMs;
    for (const options of [{}, { readOnly: true }]) {
      const e = expectFileError(() => SessionManager.open(file, options), "BAD_HEADER", 1);
      assert.match(e.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:1: `));
    }
    assert.deepEqual(readFileSync(file), bytes);
    assert.equal(statSync(file).mtimeMs, mtime);
    assert.deepEqual(readdirSync(resolve(file, "..")), ["s.jsonl"], "no lock, temp or backup file left");
  });

  it("an empty file is taken over as a new session", () => {
    const file = freshFile();
    writeFileSync(file, "");
    const s = SessionManager.open(file);
    const id = s.appendMessage(userMsg("first"));
    s.close();
    const r = SessionManager.open(file, { readOnly: true });
    assert.deepEqual(entryIds(r), [id]);
  });
});

describe("one writer per file", () => {
  it("lock-taking temp files of processes that are gone are removed by the next writer; a live one's are left (issue 26, defect 13)", () => {
    const file = writeSession(freshFile(), basic());
    const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid!;
    const stale = `${file}.lock.${dead}-0badc0de.tmp`;
    const live = `${file}.lock.${process.pid}-0123abcd.tmp`;
    const unrelated = `${file}.lock.notes.tmp`;
    for (const path of [stale, live, unrelated]) fs.writeFileSync(path, "{}");
    SessionManager.open(file).close();
    assert.equal(fs.existsSync(stale), false, "the dead process's temp file is removed");
    assert.equal(fs.existsSync(live), true, "a running process may still be taking its lock");
    assert.equal(fs.existsSync(unrelated), true);
  });

  it("a second writer in the same process gets SessionLockedError; a reader does not", () => {
    const file = writeSession(freshFile(), basic());
    const first = SessionManager.open(file);
    let caught: unknown;
    try {
      SessionManager.open(file);
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof SessionLockedError);
    assert.match(caught.message, new RegExp(`process ${process.pid}`));
    assert.match(caught.message, /close it first/);
    assert.equal(SessionManager.open(file, { readOnly: true }).getEntries().length, 3);
    first.close();
    SessionManager.open(file).close();
  });

  it("a second process gets the error while the first holds the lock, and succeeds after", () => {
    const file = writeSession(freshFile(), basic());
    const manager = resolve(import.meta.dirname, "../../src/session/manager.ts");
    const script = `
      const { SessionManager } = await import(process.argv[1]);
      try { SessionManager.open(process.argv[2]).close(); console.log("opened"); }
      catch (e) { console.log(e.name + ": " + e.message); }`;
    const run = () =>
      spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, manager, file], {
        encoding: "utf8",
        cwd: resolve(import.meta.dirname, "../.."),
      }).stdout.trim();
    const holder = SessionManager.open(file);
    const refused = run();
    assert.match(refused, /^SessionLockedError: .*being written by process \d+/);
    assert.match(refused, new RegExp(`process ${process.pid} `));
    holder.close();
    assert.equal(run(), "opened");
  });

  it("a stale lock left by a dead process is taken over; a lock from another host is not", () => {
    const file = writeSession(freshFile(), basic());
    const dead = spawnSync(process.execPath, ["-e", "process.pid"]).pid;
    assert.ok(dead);
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: dead, host: hostname(), since: "2020-01-01T00:00:00Z" }));
    const s = SessionManager.open(file);
    assert.equal(JSON.parse(readFileSync(`${file}.lock`, "utf8")).pid, process.pid);
    s.close();
    assert.equal(existsSync(`${file}.lock`), false);
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: dead, host: "elsewhere.example", since: "2020-01-01T00:00:00Z" }));
    assert.throws(() => SessionManager.open(file), SessionLockedError);
  });
});

describe("stale lock takeover race", () => {
  it("a live lock that replaced the stale one while it was being inspected is not removed", () => {
    const file = writeSession(freshFile(), basic());
    const lockPath = `${file}.lock`;
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
    writeFileSync(lockPath, JSON.stringify({ pid: dead, host: hostname(), since: "2020-01-01T00:00:00Z" }));
    // Another process takes the stale lock over right after we read it: its lock is live.
    const live = JSON.stringify({ pid: process.ppid, host: hostname(), since: new Date().toISOString() });
    const realRead = cjsFs.readFileSync;
    let swapped = false;
    mock.method(cjsFs, "readFileSync", (...args: unknown[]) => {
      const result = Reflect.apply(realRead, cjsFs, args);
      if (!swapped && args[0] === lockPath) {
        swapped = true;
        cjsFs.unlinkSync(lockPath);
        cjsFs.writeFileSync(lockPath, live);
      }
      return result;
    });
    syncBuiltinESMExports();
    let caught: unknown;
    try {
      SessionManager.open(file).close();
    } catch (error) {
      caught = error;
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
    assert.equal(swapped, true);
    assert.ok(caught instanceof SessionLockedError, `expected SessionLockedError, got ${caught}`);
    assert.equal(readFileSync(lockPath, "utf8"), live, "the other process keeps its lock");
  });
});

describe("broken parent links", () => {
  it("a self-parent: walks terminate and warn", () => {
    const file = writeSession(freshFile(), [userEntry("e1", null, "one", 1), assistantEntry("loop", "loop", "self", 2)]);
    const warnings: string[] = [];
    const s = SessionManager.open(file, { readOnly: true, onWarning: (w) => warnings.push(w) });
    assert.deepEqual(s.getBranch("loop").map((e) => e.id), ["loop"]);
    assert.equal(s.buildSessionContext("loop").messages.length, 1);
    assert.ok(warnings.some((w) => /cycle/.test(w)));
    assert.deepEqual(flattenTree(s.getTree()).map(({ node }) => node.entry.id), ["e1", "loop"]);
  });

  it("a two-entry cycle: getBranch, buildSessionContext and getTree terminate and warn", () => {
    const file = writeSession(freshFile(), [
      userEntry("e1", null, "one", 1),
      userEntry("a", "b", "A", 2),
      assistantEntry("b", "a", "B", 3),
      userEntry("c", "b", "C", 4),
    ]);
    const warnings: string[] = [];
    const s = SessionManager.open(file, { readOnly: true, onWarning: (w) => warnings.push(w) });
    assert.deepEqual(s.getBranch("c").map((e) => e.id), ["a", "b", "c"]);
    assert.equal(warnings.filter((w) => /cycle/.test(w)).length, 1);
    assert.equal(s.buildSessionContext("c").messages.length, 3);
    const seen = flattenTree(s.getTree()).map(({ node }) => node.entry.id);
    // every entry appears exactly once, the cycle broken where it was found
    assert.deepEqual([...seen].sort(), ["a", "b", "c", "e1"]);
    // each place the cycle is found at is said once, however often it is read
    const cycles = () => warnings.filter((w) => /cycle/.test(w));
    const said = cycles();
    assert.equal(new Set(said).size, said.length);
    s.getBranch("c");
    s.buildSessionContext("c");
    s.getTree();
    assert.deepEqual(cycles(), said);
  });

  it("a missing parent: the entry is a root of the tree and its path stops there, with a warning", () => {
    const file = writeSession(freshFile(), [userEntry("e1", null, "one", 1), userEntry("o", "gone", "orphan", 2), assistantEntry("p", "o", "reply", 3)]);
    const warnings: string[] = [];
    const s = SessionManager.open(file, { readOnly: true, onWarning: (w) => warnings.push(w) });
    assert.deepEqual(s.getBranch().map((e) => e.id), ["o", "p"]);
    assert.match(warnings.join("\n"), /missing parent gone/);
    assert.deepEqual(s.getTree().map((n) => n.entry.id), ["e1", "o"]);
    assert.deepEqual(s.buildSessionContext().messages.map((m) => m.role), ["user", "assistant"]);
  });
});

describe("appends and rewrites", () => {
  it("each append adds exactly one line in one write, and every line parses", () => {
    const original = cjsFs.writeSync;
    const file = freshFile();
    const s = SessionManager.open(file);
    let writes = 0;
    mock.method(cjsFs, "writeSync", (...args: unknown[]) => {
      writes++;
      return Reflect.apply(original, cjsFs, args) as number;
    });
    syncBuiltinESMExports();
    try {
      const steps: (() => string)[] = [
        () => s.appendMessage(userMsg("one")),
        () => s.appendThinkingLevelChange("high"),
        () => s.appendMessage(assistantMsg("two")),
        () => s.appendCustomMessageEntry("note", [{ type: "text", text: "x" }], false),
        () => s.appendLabelChange(s.getEntries()[0].id, "first"),
      ];
      let lines = 0;
      for (const step of steps) {
        const before = writes;
        const id = step();
        assert.equal(writes - before, 1, "one write per append");
        const text = readFileSync(file, "utf8");
        assert.equal(text.endsWith("\n"), true);
        const all = text.trimEnd().split("\n");
        // the first append also writes the header, in the same write
        assert.equal(all.length, lines === 0 ? 2 : lines + 1);
        lines = all.length;
        assert.equal(JSON.parse(all.at(-1)!).id, id);
        for (const line of all) JSON.parse(line);
      }
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
      s.close();
    }
  });

  it("a message with 1 MB and with 3 MB of text (multi-byte) round-trips", () => {
    const file = freshFile();
    const s = SessionManager.open(file);
    const big = "x".repeat(1024 * 1024);
    const wide = "é✓".repeat(600_000); // 3 MB of UTF-8: characters straddle the reader's chunk edges
    const a = s.appendMessage(userMsg(big));
    const b = s.appendMessage(assistantMsg(wide));
    const c = s.appendMessage(userMsg("small"));
    s.close();
    const r = SessionManager.open(file, { readOnly: true });
    assert.deepEqual(r.getLoadIssues(), []);
    assert.deepEqual(entryIds(r), [a, b, c]);
    assert.equal((r.getEntry(a) as { message: { content: string } }).message.content, big);
    const wideBack = r.getEntry(b) as { message: { content: { text: string }[] } };
    assert.equal(wideBack.message.content[0].text, wide);
  });

  it("a rewrite (rename) is atomic: no temp files left, appends continue in the new file", () => {
    const file = freshFile();
    const s = SessionManager.open(file);
    s.appendMessage(userMsg("one"));
    s.appendSessionInfo("named");
    const after = s.appendMessage(assistantMsg("two"));
    s.close();
    assert.deepEqual(readdirSync(resolve(file, "..")), ["s.jsonl"]);
    const r = SessionManager.open(file, { readOnly: true });
    assert.equal(r.getLeafId(), after);
    assert.equal(r.getEntries().length, 3);
    assert.equal(r.getHeader().title, "named");
  });

  it("a rewrite of a file that had skipped lines keeps the original as a backup", () => {
    const file = writeSession(freshFile(), basic());
    appendFileSync(file, "garbage\n");
    const original = readFileSync(file);
    const s = SessionManager.open(file);
    s.appendSessionInfo("renamed");
    s.close();
    const backups = readdirSync(resolve(file, "..")).filter((f) => f.includes(".bak-"));
    assert.equal(backups.length, 1);
    // the backup holds the file as it was before the rewrite: the original and the appended entry
    const backup = readFileSync(join(resolve(file, ".."), backups[0]));
    assert.deepEqual(backup.subarray(0, original.length), original);
    assert.deepEqual(SessionManager.open(file, { readOnly: true }).getLoadIssues(), []);
  });

  it("a rewrite of a file with non-UTF-8 bytes keeps the original bytes in a backup", () => {
    const file = freshFile();
    const line = Buffer.from(`${JSON.stringify(userEntry("x1", null, "@@"))}\n`);
    line[line.indexOf("@@")] = 0xff;
    const original = Buffer.concat([Buffer.from(`${JSON.stringify(HEADER)}\n`), line]);
    writeFileSync(file, original);
    const s = SessionManager.open(file);
    s.appendSessionInfo("renamed");
    s.close();
    const backups = readdirSync(resolve(file, "..")).filter((f) => f.includes(".bak-"));
    assert.equal(backups.length, 1);
    assert.deepEqual(readFileSync(join(resolve(file, ".."), backups[0])).subarray(0, original.length), original);
  });

  it("writeFileAtomic syncs the temp file before the rename and the directory after it", () => {
    const real = { openSync: cjsFs.openSync, fsyncSync: cjsFs.fsyncSync, renameSync: cjsFs.renameSync };
    const file = freshFile("synced.txt");
    const dir = resolve(file, "..");
    const fdPaths = new Map<number, string>();
    const events: string[] = [];
    mock.method(cjsFs, "openSync", (...args: unknown[]) => {
      const fd = Reflect.apply(real.openSync, cjsFs, args) as number;
      fdPaths.set(fd, String(args[0]));
      return fd;
    });
    mock.method(cjsFs, "fsyncSync", (fd: number) => {
      const path = fdPaths.get(fd) ?? "?";
      events.push(path === dir ? "fsync dir" : path.endsWith(".tmp") ? "fsync tmp" : `fsync ${path}`);
      return real.fsyncSync(fd);
    });
    mock.method(cjsFs, "renameSync", (...args: unknown[]) => {
      events.push("rename");
      return Reflect.apply(real.renameSync, cjsFs, args);
    });
    syncBuiltinESMExports();
    try {
      writeFileAtomic(file, "content");
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
    assert.deepEqual(events, ["fsync tmp", "rename", "fsync dir"]);
    assert.equal(readFileSync(file, "utf8"), "content");
  });

  it("fsyncEachAppend syncs after every append; flush() syncs on demand", () => {
    const realFsync = cjsFs.fsyncSync;
    let syncs = 0;
    const dir = resolve(freshFile(), "..");
    const durable = SessionManager.create("/w", dir, { fsyncEachAppend: true });
    const lazy = SessionManager.create("/w", join(dir, "lazy"));
    mock.method(cjsFs, "fsyncSync", (fd: number) => {
      syncs++;
      return realFsync(fd);
    });
    syncBuiltinESMExports();
    try {
      durable.appendMessage(userMsg("1"));
      durable.appendMessage(assistantMsg("2"));
      assert.equal(syncs, 2);
      lazy.appendMessage(userMsg("1"));
      lazy.appendMessage(assistantMsg("2"));
      assert.equal(syncs, 2);
      lazy.flush();
      assert.equal(syncs, 3);
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
      durable.close();
      lazy.close();
    }
  });

  it("writeFileAtomic replaces content and leaves no temp file, even when the rename fails", () => {
    const file = freshFile("atomic.txt");
    writeFileAtomic(file, "first");
    writeFileAtomic(file, Buffer.from("second"));
    assert.equal(readFileSync(file, "utf8"), "second");
    const blocked = join(resolve(file, ".."), "blocked");
    mkdirSync(join(blocked, "inside"), { recursive: true });
    assert.throws(() => writeFileAtomic(blocked, "x"));
    assert.deepEqual(readdirSync(resolve(file, "..")).sort(), ["atomic.txt", "blocked"]);
  });
});


/** Issue 26, defect 1: an append that fails part way (a full disk) must not make the next one unreadable. */
describe("an append that fails part way", () => {
  /** A session of two messages, whose next append the disk cuts in half; `meanwhile` runs in between. */
  function tornAppend(meanwhile: (path: string) => void = () => undefined) {
    const real = cjsFs.writeSync;
    const path = freshFile();
    const session = SessionManager.open(path);
    session.appendMessage(userMsg("first"));
    session.appendMessage(assistantMsg("reply"));
    const before = fs.readFileSync(path);
    let calls = 0;
    // the disk fills in the middle of the next line: half of it is written, then ENOSPC
    mock.method(cjsFs, "writeSync", (fd: number, buffer: Buffer, offset: number, length: number) => {
      if (++calls > 1) throw fullDisk();
      const n = real(fd, buffer, offset, Math.floor(length / 2));
      meanwhile(path);
      return n;
    });
    whileMocked(() => assert.throws(() => session.appendMessage(userMsg("lost to the full disk")), /ENOSPC/));
    return { path, session, before };
  }

  it("is taken back: the file is as it was, and the next append is read, with its parent", async () => {
    const { path, session, before } = tornAppend();
    assert.deepEqual(fs.readFileSync(path), before, "no torn bytes are left");
    const after = session.appendMessage(userMsg("written once there is room"));
    await session.close();
    const reopened = SessionManager.open(path, { readOnly: true });
    try {
      assert.deepEqual(reopened.buildSessionContext().messages.map((m) => (m as { content: unknown }).content).slice(-2), [[{ type: "text", text: "reply" }], "written once there is room"]);
      assert.equal(reopened.getLeafId(), after);
      assert.deepEqual(reopened.getLoadIssues(), []);
    } finally {
      void reopened.close();
    }
  });

  it("when another program appended after it, leaves its torn bytes on a line of their own and the other's line whole", async () => {
    const other = '{"type":"custom","customType":"other","id":"other-1","parentId":null,"timestamp":"t"}\n';
    const { path, session } = tornAppend((file) => {
      const fd = fs.openSync(file, "a");
      fs.writeFileSync(fd, other); // not through the mocked writeSync's count: writeFileSync on a descriptor
      fs.closeSync(fd);
    });
    assert.ok(fs.readFileSync(path, "utf8").endsWith(other), "the other program's line is not cut");
    const after = session.appendMessage(userMsg("written once there is room"));
    await session.close();
    const reopened = SessionManager.open(path, { readOnly: true });
    try {
      assert.equal(reopened.getLeafId(), after);
      assert.equal(reopened.getEntry(after)?.parentId, reopened.getEntries().find((e) => e.type === "message" && e.message.role === "assistant")?.id);
      // glued to the torn bytes, the other line is skipped with them (its bytes stay in the file)
      assert.deepEqual(reopened.getLoadIssues().map((i) => i.kind), ["malformed-json"]);
    } finally {
      void reopened.close();
    }
  });
});

describe("an append that fails part way, with another program appending", () => {
  it("is not taken back when another program's line landed after its first byte (its newline matches ours)", async () => {
    const path = freshFile();
    const first = SessionManager.open(path);
    first.appendMessage(userMsg("first"));
    await first.close();
    fs.appendFileSync(path, '{"type":"custom","id":"unterminated"'); // bonsai's next append starts with a newline
    const session = SessionManager.open(path, { onWarning: () => undefined });
    const other = '{"type":"custom","customType":"other","id":"other-1","parentId":null,"timestamp":"t"}\n';
    const real = cjsFs.writeSync;
    let calls = 0;
    mock.method(cjsFs, "writeSync", (fd: number, buffer: Buffer, offset: number) => {
      if (++calls > 1) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      const n = real(fd, buffer, offset, 1); // the newline, then the disk is full
      const theirs = fs.openSync(path, "a");
      fs.writeFileSync(theirs, other); // another program's whole line lands after it
      fs.closeSync(theirs);
      return n;
    });
    whileMocked(() => assert.throws(() => session.appendMessage(userMsg("lost to the full disk")), /ENOSPC/));
    await session.close();
    assert.ok(fs.readFileSync(path, "utf8").endsWith(`"unterminated"\n${other}`), "the other program's line is whole, with its newline");
  });
});

/** From an audit with a full disk: nothing bonsai leaves behind may stop the session from being used once there is room. */
describe("a full disk at the start of a session", () => {
  it("a lock that cannot be written says the disk is full and leaves no lock behind", async () => {
    const path = freshFile();
    const real = cjsFs.writeFileSync;
    mock.method(cjsFs, "writeFileSync", (file: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      if (String(file).includes(".lock")) throw fullDisk();
      return (real as (...a: unknown[]) => void)(file, ...rest);
    });
    whileMocked(() => assert.throws(() => SessionManager.open(path), /the disk is full/));
    assert.deepEqual(fs.readdirSync(resolve(path, "..")).filter((f) => f.includes(".lock")), [], "no lock file left");
    const session = SessionManager.open(path); // not refused as if another writer held it
    session.appendMessage(userMsg("there is room now"));
    await session.close();
  });

  it("a first append torn by the disk leaves an empty file, so the session opens once there is room", async () => {
    const path = freshFile();
    const session = SessionManager.open(path);
    const real = cjsFs.writeSync;
    let calls = 0;
    mock.method(cjsFs, "writeSync", (fd: number, buffer: Buffer, offset: number, length: number) => {
      if (++calls === 1) return real(fd, buffer, offset, Math.floor(length / 3));
      throw fullDisk();
    });
    whileMocked(() => assert.throws(() => session.appendMessage(userMsg("lost to the full disk")), (error: Error) => error.message === `${path}: ENOSPC: no space left on device, write`));
    assert.equal(fs.statSync(path).size, 0, "the torn header is taken back");
    const kept = session.appendMessage(userMsg("written once there is room"));
    await session.close();
    const reopened = SessionManager.open(path, { readOnly: true });
    try {
      assert.equal(reopened.getLeafId(), kept);
      assert.deepEqual(reopened.getLoadIssues(), []);
    } finally {
      void reopened.close();
    }
  });
});
