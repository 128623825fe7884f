/**
 * Several processes on one store at once, in every store: writers of different sessions of one
 * database all succeed, two writers of the same session never both get in, and a writer killed
 * with SIGKILL in the middle of appending leaves a session that opens cleanly and can be taken over.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, afterEach, before, describe, it } from "node:test";
import { SessionLockedError } from "../../src/storage/lock.js";
import { openSessionAt, readLinesAt } from "../../src/storage/open.js";
import { testDatabase } from "../helpers/postgres.js";
import { sessionLine, sessionLines } from "../helpers/store-contract.js";
import { scriptArgs } from "../helpers/bonsai-bin.js";

const WRITER = resolve(import.meta.dirname, "../helpers/store-writer.ts");

interface Writer {
  child: ChildProcess;
  lines: string[];
  /** resolves with the first output line that starts with `prefix` */
  waitFor(prefix: string): Promise<string>;
  exit: Promise<number | null>;
  send(command: string): void;
  /** what it wrote on stderr so far (a failure's reason) */
  stderr(): string;
}

/** Every writer started; a failed test must not leave one waiting for its "close" forever. */
const running = new Set<ChildProcess>();

function startWriter(location: string, count: number, mode = ""): Writer {
  const child = spawn(process.execPath, [...scriptArgs(WRITER), location, String(count), mode], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.add(child);
  child.on("exit", () => running.delete(child));
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (line: string) => void }[] = [];
  let buffered = "";
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdout!.on("data", (chunk) => {
    buffered += chunk;
    let nl = buffered.indexOf("\n");
    while (nl !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.splice(0)) {
        if (line.startsWith(w.prefix)) w.resolve(line);
        else waiters.push(w);
      }
      nl = buffered.indexOf("\n");
    }
  });
  const exit = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  return {
    child,
    lines,
    exit,
    send: (command) => child.stdin!.write(`${command}\n`),
    stderr: () => stderr,
    waitFor(prefix) {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolveLine, reject) => {
        waiters.push({ prefix, resolve: resolveLine });
        exit.then((code) => reject(new Error(`writer exited (${code}) before "${prefix}"; output: ${lines.join(" | ")}; stderr: ${stderr}`)));
      });
    },
  };
}

/** Opens a writer, retrying while the previous holder's lock is still being released. */
async function openWhenFree(location: string) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await openSessionAt(location);
    } catch (error) {
      if (!(error instanceof SessionLockedError) || attempt > 50) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const dirs: string[] = [];
afterEach(() => {
  for (const child of running) child.kill("SIGKILL");
});
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function multiProcessSuite(name: string, setup: () => Promise<{ at: (id: string) => string; done: () => Promise<void> }>): void {
  describe(`${name}: several processes`, () => {
    let at: (id: string) => string;
    let done: () => Promise<void>;
    before(async () => {
      ({ at, done } = await setup());
    });
    after(async () => done());

    it("appends from four processes to four sessions of one store at once, every line in place", async () => {
      const ids = ["w1", "w2", "w3", "w4"];
      const writers = ids.map((id) => startWriter(at(id), 300));
      await Promise.all(writers.map((w) => w.waitFor("ready")));
      for (const w of writers) w.send("go");
      const exits = await Promise.all(writers.map((w) => w.exit));
      assert.deepEqual(exits, [0, 0, 0, 0], writers.map((w) => w.stderr().trim()).filter(Boolean).join("\n---\n"));
      for (const id of ids) assert.deepEqual((await readLinesAt(at(id)))!.lines, sessionLines(id, 300));
    });

    it("lets exactly one of two processes write the same session", async () => {
      const writers = [startWriter(at("same"), 20, "hold"), startWriter(at("same"), 20, "hold")];
      await Promise.all(writers.map((w) => w.waitFor("ready")));
      for (const w of writers) w.send("go");
      const outcomes = await Promise.all(writers.map((w) => Promise.race([w.waitFor("appended 20"), w.waitFor("locked")])));
      const winner = outcomes.findIndex((o) => o.startsWith("appended"));
      const loser = 1 - winner;
      assert.notEqual(winner, -1, `one writer got in: ${outcomes.join(" / ")}`);
      assert.match(outcomes[loser], new RegExp(`^locked .*session is being written by process ${writers[winner].child.pid} on `));
      assert.equal(await writers[loser].exit, 3);
      writers[winner].send("close");
      assert.equal(await writers[winner].exit, 0);
      assert.deepEqual((await readLinesAt(at("same")))!.lines, sessionLines("same", 20));
    });

    it("keeps a consistent session when its writer is killed with SIGKILL mid-append", async () => {
      const writer = startWriter(at("killed"), 0, "forever");
      await writer.waitFor("ready");
      writer.send("go");
      await writer.waitFor("appended 300");
      writer.child.kill("SIGKILL");
      await writer.exit;

      const id = "killed";
      const { loaded, backend } = await openWhenFree(at("killed"));
      const entries = loaded!.fileEntries.length - 1;
      assert.ok(entries >= 300, `at least what was flushed survives (${entries})`);
      // every entry that is there is whole and in order; at most a torn last line is reported
      assert.ok(loaded!.issues.every((i) => i.kind === "torn-tail"), JSON.stringify(loaded!.issues));
      const lines = (await readLinesAt(at("killed")))!.lines;
      assert.deepEqual(lines, Array.from({ length: lines.length }, (_, i) => sessionLine(id, i)));
      // the next writer takes over and continues where the dead one stopped
      backend!.append([sessionLine(id, lines.length)]);
      await backend!.close();
      const after = await openSessionAt(at("killed"), { readOnly: true });
      assert.equal(after.loaded!.fileEntries.length, lines.length + 1);
      // a torn line (a file's only possible damage) stays reported where it was, never merged
      const torn = loaded!.issues.map((i) => ["malformed-json", i.line]);
      assert.deepEqual(after.loaded!.issues.map((i) => [i.kind, i.line]), torn);
    });
  });
}

multiProcessSuite("file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  dirs.push(dir);
  return { at: (id) => join(dir, `${id}.jsonl`), done: async () => {} };
});

multiProcessSuite("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  dirs.push(dir);
  return { at: (id) => `sqlite:${join(dir, "s.sqlite")}#${id}`, done: async () => {} };
});

multiProcessSuite("postgres", async () => {
  const db = await testDatabase();
  return { at: (id) => `${db.url}#${id}`, done: db.stop };
});
