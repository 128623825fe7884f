/**
 * Rewrites against other writers (src/storage/file-writer.ts): a session reached through a
 * symlink is locked at the file it names, a hard-linked file is not written, and lines another
 * program appended (pi takes no lock) survive a rewrite.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, chmodSync, linkSync, lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, mock } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { SessionLockedError } from "../../src/storage/lock.js";
import { ROOT } from "../helpers/cli.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";
import { cjsFs, fullDisk, whileMocked } from "../helpers/fs-mocks.js";

const temp = tempDir();
after(temp.cleanup);

/** A session file with `n` user messages, closed. */
function session(name: string, n = 3): string {
  const file = join(temp.dir, name);
  const s = SessionManager.open(file);
  for (let i = 0; i < n; i++) s.appendMessage(userMsg(`message ${i}`));
  void s.close();
  return file;
}

const ids = (file: string): string[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l).id as string);

describe("symlinks and hard links", () => {
  it("a writer through a symlink locks the real file: a second writer on the real path is refused", async () => {
    const real = session("real.jsonl");
    const link = join(temp.dir, "link.jsonl");
    symlinkSync(real, link);
    const viaLink = SessionManager.open(link);
    try {
      assert.throws(() => SessionManager.open(real), SessionLockedError);
    } finally {
      await viaLink.close();
    }
    const viaReal = SessionManager.open(real);
    try {
      assert.throws(() => SessionManager.open(link), SessionLockedError);
    } finally {
      await viaReal.close();
    }
  });

  it("a rewrite through a symlink replaces the file it points to and keeps the link", async () => {
    const real = session("target.jsonl");
    const link = join(temp.dir, "named.jsonl");
    symlinkSync(real, link);
    const s = SessionManager.open(link);
    s.appendSessionInfo("renamed"); // names the header: a rewrite
    s.appendMessage(userMsg("after the rewrite"));
    await s.close();
    assert.ok(lstatSync(link).isSymbolicLink(), "still a symlink");
    assert.equal(readlinkSync(link), real);
    const text = readFileSync(real, "utf8");
    assert.match(text, /after the rewrite/);
    assert.match(text.split("\n")[0], /renamed/);
  });

  it("a file with more than one hard link is not opened for writing, and reads still work", () => {
    const real = session("hard.jsonl");
    const other = join(temp.dir, "hard-other.jsonl");
    linkSync(real, other);
    assert.throws(() => SessionManager.open(other), /has 2 hard links, so bonsai does not write it/);
    const reader = SessionManager.open(other, { readOnly: true });
    assert.equal(reader.buildSessionContext().messages.length, 3);
    void reader.close();
  });

  it("a file this user may not write is not opened for writing (a rewrite would still replace it): nothing changes, and reads still work", () => {
    const file = session("read-only.jsonl");
    chmodSync(file, 0o444);
    const bytes = readFileSync(file);
    // root may write a 0444 file: the refusal the file system gives another user is played
    if (process.getuid?.() === 0) {
      const real = cjsFs.openSync;
      mock.method(cjsFs, "openSync", (path: string, flags: unknown, ...rest: unknown[]) => {
        if (path === file && flags !== "r") throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
        return (real as (...a: unknown[]) => number)(path, flags, ...rest);
      });
    }
    whileMocked(() =>
      assert.throws(() => SessionManager.open(file), (error: Error) => error.message === `${file}: is not writable by this user (mode 444), so bonsai does not change it; open it read-only or write a copy (bonsai copy)`),
    );
    assert.deepEqual(readFileSync(file), bytes);
    assert.deepEqual(readdirSync(temp.dir).filter((f) => f.startsWith("read-only.jsonl") || f.startsWith(".read-only")), ["read-only.jsonl"], "no lock or temp file");
    const reader = SessionManager.open(file, { readOnly: true });
    assert.equal(reader.buildSessionContext().messages.length, 3);
    void reader.close();
  });
});

describe("a rewrite while another program appends", () => {
  it("keeps the lines the reference appended by path after bonsai read the file", async () => {
    const file = session("shared.jsonl", 2);
    const ours = SessionManager.open(file);
    const reference = (await import("@mariozechner/pi-coding-agent")) as unknown as {
      SessionManager: { open(path: string): { appendMessage(m: unknown): string } };
    };
    const theirs = reference.SessionManager.open(file);
    // pi writes its entries once the first assistant message exists
    const added = [theirs.appendMessage(userMsg("from pi")), theirs.appendMessage(assistantMsg("pi's answer"))];
    ours.appendMessage(userMsg("from bonsai"));
    ours.appendSessionInfo("rewritten"); // a rewrite of the whole file
    await ours.close();
    const after = ids(file);
    for (const id of added) assert.equal(after.filter((x) => x === id).length, 1, `pi's entry ${id} is kept once`);
    assert.match(readFileSync(file, "utf8").split("\n")[0], /rewritten/);
  });

  it("a line another program appended before bonsai's last is carried after it, and bonsai's leaf is written again after it: readers resume where they did", async () => {
    const file = session("leaf-kept.jsonl", 2);
    const ours = SessionManager.open(file);
    ours.appendMessage(userMsg("from bonsai, first"));
    const other = (id: string) => `{"type":"custom","customType":"other","id":"${id}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n`;
    appendFileSync(file, other("other-1"));
    ours.appendMessage(assistantMsg("from bonsai, last"));
    const leaf = ours.getLeafId();
    ours.rewriteFile(); // the whole file, as a prune does
    const reopened = SessionManager.open(file, { readOnly: true });
    assert.equal(reopened.getLeafId(), leaf, "bonsai's last entry is still the leaf");
    assert.ok(reopened.getEntry("other-1"), "the other program's line is kept");
    void reopened.close();
    const reference = (await import("@mariozechner/pi-coding-agent")) as unknown as {
      SessionManager: { open(path: string): { buildSessionContext(): { messages: { content: unknown }[] } } };
    };
    assert.deepEqual(reference.SessionManager.open(file).buildSessionContext().messages.at(-1)?.content, [{ type: "text", text: "from bonsai, last" }], "pi resumes there too");

    // a line appended after bonsai's last stays the last: the file's leaf was the other program's
    appendFileSync(file, other("other-2"));
    ours.rewriteFile();
    await ours.close();
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    assert.equal(JSON.parse(lines.at(-1) as string).id, "other-2");
    assert.equal(lines.filter((l) => l.includes('"customType":"bonsai.checkout"')).length, 1, "no leaf written again for it");
  });

  it("writes the leaf again only when readers would resume elsewhere: not for blank lines, nor after a line appended to the new file; but past a torn line", async () => {
    const other = (id: string) => `{"type":"custom","customType":"other","id":"${id}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n`;
    const checkouts = (file: string) => readFileSync(file, "utf8").split("\n").filter((l) => l.includes('"bonsai.checkout"')).length;
    const leafOf = (file: string) => {
      const reader = SessionManager.open(file, { readOnly: true, onWarning: () => undefined });
      const leaf = reader.getLeafId();
      void reader.close();
      return leaf;
    };
    /** bonsai appends A, another program `between`, bonsai B, another program `after`; then a rewrite (with `duringRename` just after its rename) */
    const rewritten = async (name: string, between: string, after: string, duringRename?: (file: string) => void) => {
      const file = session(name, 1);
      const ours = SessionManager.open(file, { onWarning: () => undefined });
      ours.appendMessage(userMsg("A"));
      appendFileSync(file, between);
      const b = ours.appendMessage(userMsg("B"));
      appendFileSync(file, after);
      if (duringRename) {
        const rename = cjsFs.renameSync;
        mock.method(cjsFs, "renameSync", (from: string, to: string) => {
          rename(from, to);
          duringRename(to);
        });
      }
      whileMocked(() => ours.rewriteFile());
      await ours.close();
      return { file, b };
    };

    const blank = await rewritten("blank-lines.jsonl", "\n", "\r\n");
    assert.equal(checkouts(blank.file), 0, "blank lines are no entries: the leaf was not displaced");
    assert.equal(leafOf(blank.file), blank.b);

    const torn = await rewritten("torn-after.jsonl", other("other-1"), '{"type":"custom","id":"torn-wri');
    assert.equal(leafOf(torn.file), torn.b, "readers skip the torn line: bonsai's B was the leaf, and is");

    const late = await rewritten("appended-after-rename.jsonl", other("other-1"), "", (file) => appendFileSync(file, other("newest")));
    assert.equal(checkouts(late.file), 0);
    assert.equal(leafOf(late.file), "newest", "a line appended to the new file since is the newest: it stays the leaf");
  });

  it("a full disk just after the rename loses the late lines, not the rewrite: it is kept, with its backup, and says so", async () => {
    const file = session("late-and-full.jsonl", 1);
    appendFileSync(file, '{"type":"message","id":"unreadable","parentId":null,"not JSON\n'); // a rewrite leaves it out: a backup first
    const warnings: string[] = [];
    const ours = SessionManager.open(file, { onWarning: (w) => warnings.push(w) });
    ours.appendMessage(userMsg("second"));
    const { renameSync: rename, writeSync: write } = cjsFs;
    let full = false;
    mock.method(cjsFs, "renameSync", (from: string, to: string) => {
      const theirs = cjsFs.openSync(to, "a"); // another program opened the old file just before the rename
      rename(from, to);
      write(theirs, '{"type":"custom","customType":"other","id":"late","parentId":null,"timestamp":"t"}\n'); // and writes just after it
      cjsFs.closeSync(theirs);
      full = true;
    });
    mock.method(cjsFs, "writeSync", (fd: number, ...rest: unknown[]) => {
      if (full) throw fullDisk();
      return (write as (...a: unknown[]) => number)(fd, ...rest);
    });
    whileMocked(() => ours.rewriteFile());
    await ours.close();
    const backups = readdirSync(temp.dir).filter((f) => f.startsWith("late-and-full.jsonl.bak-"));
    assert.equal(backups.length, 1, "the backup is kept");
    assert.match(readFileSync(join(temp.dir, backups[0]), "utf8"), /"unreadable"/);
    assert.ok(!readFileSync(file, "utf8").includes('"unreadable"'), "the session was rewritten");
    assert.ok(warnings.some((w) => w === `${file}: rewritten, but lines another program appended just after could not be carried into it: ENOSPC: no space left on device, write`), warnings.join("\n"));
  });

  it("carries another program's lines over byte for byte: a nested id like one of ours, a carriage return, bytes that are not UTF-8, a blank line", async () => {
    const file = session("odd-others.jsonl", 2);
    const ours = SessionManager.open(file);
    const first = ours.getEntries()[0].id;
    const mine = ours.appendMessage(userMsg("from bonsai"));
    const odd = [
      Buffer.from(`{"type":"ext","ref":{"id":"${first}"},"id":"ext-1","parentId":null,"timestamp":"t"}\n`),
      Buffer.from(`{"type":"ext","ref":{"id":"${mine}"},"id":"ext-2","parentId":null,"timestamp":"t"}\r\n`),
      Buffer.concat([Buffer.from('{"type":"ext","id":"ext-3","parentId":null,"timestamp":"t","bytes":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]),
      Buffer.from("\n"),
    ];
    for (const line of odd) appendFileSync(file, line);
    ours.appendSessionInfo("renamed"); // a rewrite of the whole file
    await ours.close();
    const bytes = readFileSync(file);
    const expected = Buffer.concat(odd);
    assert.ok(bytes.includes(expected), `the other program's lines are in the file as they were written: ${JSON.stringify(bytes.toString("latin1").slice(-400))}`);
    assert.equal(bytes.indexOf(expected), bytes.lastIndexOf(expected), "once");
    const lineIds = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l).id);
    assert.equal(lineIds.filter((id) => id === mine).length, 1, "our own line once");
  });

  it("a line another program was still writing when bonsai opened the file is carried whole once finished; a torn write stays dropped", async () => {
    for (const finished of [true, false]) {
      const file = session(`being-written-${finished}.jsonl`, 2);
      const line = `{"type":"custom","customType":"other","id":"late-1","parentId":null,"timestamp":"t","data":{"text":"${"x".repeat(200)}"}}\n`;
      appendFileSync(file, line.slice(0, 60)); // what bonsai sees at open: the start of the line
      const ours = SessionManager.open(file);
      if (finished) appendFileSync(file, line.slice(60)); // the other program finishes its write
      ours.appendMessage(userMsg("from bonsai"));
      ours.appendSessionInfo("renamed"); // a rewrite of the whole file
      await ours.close();
      const text = readFileSync(file, "utf8");
      if (finished) assert.equal(text.split(line).length - 1, 1, `the finished line is in the file whole, once: ${JSON.stringify(text.slice(-600))}`);
      else assert.ok(!text.includes(line.slice(0, 60)), "a torn write is not carried into the new file (the backup keeps it)");
      for (const l of text.split("\n").filter((x) => x.trim())) JSON.parse(l);
    }
  });

  it("loses no line of a process that appends without a lock during several rewrites", async () => {
    const file = session("busy.jsonl", 1);
    const ours = SessionManager.open(file);
    const count = 300;
    // another program: appends entries by path, as pi does, one line per write
    const script = `const fs = require("node:fs");
for (let i = 0; i < ${count}; i++) {
  fs.appendFileSync(${JSON.stringify(file)}, JSON.stringify({ type: "custom", customType: "other", id: "other-" + i, parentId: null, timestamp: new Date().toISOString(), data: { i } }) + "\\n");
  const until = Date.now() + 1; while (Date.now() < until) {}
}`;
    const child = spawn(process.execPath, ["-e", script], { cwd: ROOT, stdio: "inherit" });
    const done = new Promise((resolve) => child.on("exit", resolve));
    for (let round = 0; round < 20; round++) {
      ours.appendSessionInfo(`round ${round}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    await done;
    ours.appendSessionInfo("last");
    await ours.close();
    const others = ids(file).filter((id) => id.startsWith("other-"));
    assert.equal(new Set(others).size, count, "every line of the other program is there");
    assert.equal(others.length, count, "and none twice");
  });
});
