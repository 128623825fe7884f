/**
 * The chat's file tools against an adversary inside the working directory: a symlink swapped in
 * a loop (final component and an intermediate directory) while read and write run, a hard link
 * to an outside file, a named pipe (FIFO), and a read that must not block the event loop and must
 * stop when the run is stopped. What is checked must be what is used: the outside files are never
 * read or changed.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Worker } from "node:worker_threads";
import { createChatTools } from "../../src/chat/tools.js";

let root: string;
let cwd: string;
let outside: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), "bonsai-confine-"));
  cwd = join(root, "work");
  outside = join(root, "outside");
  mkdirSync(cwd);
  mkdirSync(outside);
});
after(() => rmSync(root, { recursive: true, force: true }));

const run = async (name: string, args: Record<string, unknown>, signal?: AbortSignal) => {
  const found = createChatTools(cwd).find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  const result = await found.execute("call_1", args as never, signal);
  return (result.content[0] as { text: string }).text;
};

/**
 * A worker thread (a second thread, so the swaps really interleave with the tool's own steps)
 * that runs `body` in a loop until stopped; returns how many rounds it made.
 */
function swapper(body: string, data: Record<string, unknown>): { stop: () => Promise<number> } {
  const shared = new Int32Array(new SharedArrayBuffer(8));
  const code = `
    const { workerData } = require("node:worker_threads");
    const fs = require("node:fs");
    const { flag, data } = workerData;
    while (Atomics.load(flag, 0) === 0) {
      try { ${body} } catch {}
      Atomics.add(flag, 1, 1);
    }`;
  const worker = new Worker(code, { eval: true, workerData: { flag: shared, data } });
  return {
    stop: async () => {
      Atomics.store(shared, 0, 1);
      await new Promise((resolve) => worker.once("exit", resolve));
      return Atomics.load(shared, 1);
    },
  };
}

/**
 * Runs `op` for `ms` and at least MIN_RUNS times (a busy machine makes each run slower: the race
 * needs enough tries, not a fixed time), stopping at `max` runs or after MAX_RACE_MS whatever the
 * count; counts the outcomes.
 */
async function hammer(op: (i: number) => Promise<string>, ms: number, max: number, leaked: (out: string) => boolean) {
  const started = Date.now();
  let runs = 0;
  let ok = 0;
  let leaks = 0;
  const goOn = () => runs < max && Date.now() - started < MAX_RACE_MS && (Date.now() - started < ms || runs < MIN_RUNS);
  while (goOn()) {
    runs++;
    try {
      const out = await op(runs);
      ok++;
      if (leaked(out)) leaks++;
    } catch {
      // refused (the symlink pointed out at the check, or the file changed while opened): fine
    }
  }
  return { runs, ok, leaks };
}

const RACE_MS = 1500;
const RACE_MAX = 20000;
const MIN_RUNS = 150;
const MAX_RACE_MS = 30_000;

test("a symlink swapped between an inside and an outside file: read never returns the outside file", async (t) => {
  mkdirSync(join(cwd, "race"));
  writeFileSync(join(cwd, "race", "inside.txt"), "inside");
  writeFileSync(join(outside, "race-secret.txt"), "SECRET");
  symlinkSync(join(cwd, "race", "inside.txt"), join(cwd, "race", "swap"));
  const s = swapper(
    `const t = data.link + ".tmp"; fs.rmSync(t, { force: true });
     fs.symlinkSync(data.targets[Atomics.load(flag, 1) % 2], t); fs.renameSync(t, data.link);`,
    { link: join(cwd, "race", "swap"), targets: [join(cwd, "race", "inside.txt"), join(outside, "race-secret.txt")] },
  );
  const result = await hammer(() => run("read", { path: "race/swap" }), RACE_MS, RACE_MAX, (out) => out.includes("SECRET"));
  const swaps = await s.stop();
  t.diagnostic(`${swaps} swaps; ${result.runs} reads, ${result.ok} answered, the rest refused`);
  assert.ok(swaps > 100, `the swapper ran (${swaps} swaps)`);
  assert.ok(result.runs > 100, `the tool ran (${result.runs} reads)`);
  assert.equal(result.leaks, 0, `${result.leaks} of ${result.runs} reads returned the outside file`);
});

test("a symlink swapped between an inside and an outside file: write never changes the outside file", async (t) => {
  mkdirSync(join(cwd, "racew"));
  writeFileSync(join(cwd, "racew", "inside.txt"), "inside");
  writeFileSync(join(outside, "victim.txt"), "original");
  symlinkSync(join(cwd, "racew", "inside.txt"), join(cwd, "racew", "swap"));
  const s = swapper(
    `const t = data.link + ".tmp"; fs.rmSync(t, { force: true });
     fs.symlinkSync(data.targets[Atomics.load(flag, 1) % 2], t); fs.renameSync(t, data.link);`,
    { link: join(cwd, "racew", "swap"), targets: [join(cwd, "racew", "inside.txt"), join(outside, "victim.txt")] },
  );
  const result = await hammer(() => run("write", { path: "racew/swap", content: "PWNED" }), RACE_MS, RACE_MAX, () => false);
  const swaps = await s.stop();
  t.diagnostic(`${swaps} swaps; ${result.runs} writes, ${result.ok} done, the rest refused`);
  assert.ok(swaps > 100, `the swapper ran (${swaps} swaps)`);
  assert.ok(result.runs > 100, `the tool ran (${result.runs} writes)`);
  assert.equal(readFileSync(join(outside, "victim.txt"), "utf8"), "original", "the outside file was written through the swapped symlink");
});

test("an intermediate directory swapped for a symlink out: read, write and new files stay inside", async (t) => {
  const base = join(cwd, "race2");
  mkdirSync(join(base, "d"), { recursive: true });
  writeFileSync(join(base, "d", "f.txt"), "inside");
  mkdirSync(join(outside, "d"));
  writeFileSync(join(outside, "d", "f.txt"), "SECRET");
  // d is the real directory for a moment, then a symlink to the outside directory, and back.
  const s = swapper(
    `fs.renameSync(data.d, data.aside); fs.symlinkSync(data.out, data.d);
     fs.unlinkSync(data.d); fs.renameSync(data.aside, data.d);`,
    { d: join(base, "d"), aside: join(base, "d-aside"), out: join(outside, "d") },
  );
  const reads = await hammer(() => run("read", { path: "race2/d/f.txt" }), RACE_MS, RACE_MAX, (out) => out.includes("SECRET"));
  const writes = await hammer(() => run("write", { path: "race2/d/f.txt", content: "PWNED" }), RACE_MS, RACE_MAX, () => false);
  const creates = await hammer((i) => run("write", { path: `race2/d/new/n${i}.txt`, content: "PWNED" }), RACE_MS, RACE_MAX, () => false);
  const swaps = await s.stop();
  t.diagnostic(`${swaps} swaps; answered/ran: reads ${reads.ok}/${reads.runs}, writes ${writes.ok}/${writes.runs}, new files ${creates.ok}/${creates.runs}`);
  assert.ok(swaps > 100, `the swapper ran (${swaps} swaps)`);
  assert.ok(reads.runs > 100 && writes.runs > 100 && creates.runs > 100, "the tools ran");
  assert.equal(reads.leaks, 0, `${reads.leaks} of ${reads.runs} reads returned the outside file`);
  assert.equal(readFileSync(join(outside, "d", "f.txt"), "utf8"), "SECRET", "the outside file was written through the swapped directory");
  assert.deepEqual(readdirSync(join(outside, "d")), ["f.txt"], "files or directories were created outside");
});

test("a hard link to an outside file is neither read nor written", async () => {
  writeFileSync(join(outside, "hl.txt"), "SECRET hard");
  linkSync(join(outside, "hl.txt"), join(cwd, "hard.txt"));
  await assert.rejects(run("read", { path: "hard.txt" }), /hard.txt has 2 hard links: its content may be a file outside the working directory/);
  await assert.rejects(run("write", { path: "hard.txt", content: "PWNED" }), /hard.txt has 2 hard links: .*not written/);
  await assert.rejects(run("edit", { path: "hard.txt", oldText: "SECRET", newText: "PWNED" }), /hard.txt has 2 hard links: .*not written/);
  assert.equal(readFileSync(join(outside, "hl.txt"), "utf8"), "SECRET hard");
});

/**
 * A process that opens `fifo` for writing (or reading) after `delay` s, ending the block of a reader
 * (writer) stuck on it. It leads its own process group, so `stop` ends the shell and its `sleep`
 * together and resolves only once the shell is gone: a shell left running would later open `$1`
 * again, creating a plain file in a folder being removed (the ENOTEMPTY race this once had).
 */
function unblocker(fifo: string, as: "writer" | "reader", delay: number): { stop: () => Promise<void> } {
  const script = as === "writer" ? `sleep ${delay}; exec 3>"$1"; sleep 0.1` : `sleep ${delay}; exec 3<"$1"; sleep 0.1`;
  const child: ChildProcess = spawn("bash", ["-c", script, "bash", fifo], { stdio: "ignore", detached: true });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return {
    stop: async () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group has already ended
      }
      await exited;
    },
  };
}

test("a named pipe (FIFO) is refused at once by read, write and edit", async (t) => {
  const fifo = join(cwd, "pipe");
  execFileSync("mkfifo", [fifo]);
  const helpers: { stop: () => Promise<void> }[] = [];
  t.after(() => Promise.all(helpers.map((h) => h.stop())));
  for (const [tool, args, as] of [
    ["read", { path: "pipe" }, "writer"],
    ["edit", { path: "pipe", oldText: "a", newText: "b" }, "writer"],
    ["write", { path: "pipe", content: "x" }, "reader"],
  ] as const) {
    // Should the tool block on the pipe, the helper unblocks it after 1.5 s and the timing fails.
    helpers.push(unblocker(fifo, as, 1.5));
    const started = Date.now();
    await assert.rejects(run(tool, args), /pipe is not a regular file \(a named pipe \(FIFO\)\)/, tool);
    assert.ok(Date.now() - started < 1000, `${tool} blocked on the pipe for ${Date.now() - started} ms`);
  }
});

test("read does not block the event loop, and stops when the run is stopped", async () => {
  const line = `${"x".repeat(99)}\n`;
  writeFileSync(join(cwd, "big.txt"), line.repeat(200_000)); // 20 MB
  let ticks = 0;
  let done = false;
  const spin = () => {
    ticks++;
    if (!done) setImmediate(spin);
  };
  setImmediate(spin);
  const out = await run("read", { path: "big.txt", limit: 1 });
  done = true;
  assert.equal(out, `${"x".repeat(99)}\n\n[lines 1-1 of 200001; read on with offset=2]`);
  assert.ok(ticks > 2, `the event loop turned ${ticks} times during a 20 MB read`);

  const stopped = new AbortController();
  stopped.abort();
  await assert.rejects(run("read", { path: "big.txt" }, stopped.signal), /stopped/);
  const midway = new AbortController();
  setImmediate(() => midway.abort());
  await assert.rejects(run("read", { path: "big.txt" }, midway.signal), /stopped/);
  assert.equal(existsSync(join(cwd, "big.txt")), true);
});

test("normal use is unchanged: symlinks that stay inside, modes kept, files overwritten in place, directories listed", async () => {
  mkdirSync(join(cwd, "normal", "src"), { recursive: true });
  writeFileSync(join(cwd, "normal", "src", "run.sh"), "echo one\n");
  chmodSync(join(cwd, "normal", "src", "run.sh"), 0o750);
  symlinkSync(join(cwd, "normal", "src"), join(cwd, "normal", "link-dir"));
  symlinkSync("src/run.sh", join(cwd, "normal", "link-file"));
  const inode = statSync(join(cwd, "normal", "src", "run.sh")).ino;
  assert.equal(await run("read", { path: "normal/link-dir/run.sh" }), "echo one\n");
  assert.equal(await run("read", { path: "normal/link-file" }), "echo one\n");
  assert.equal(await run("write", { path: "normal/link-file", content: "echo two\n" }), "Wrote 9 bytes to normal/link-file");
  assert.equal(await run("edit", { path: "normal/link-dir/run.sh", oldText: "two", newText: "three" }), "Edited normal/link-dir/run.sh");
  const after = statSync(join(cwd, "normal", "src", "run.sh"));
  assert.equal(readFileSync(join(cwd, "normal", "src", "run.sh"), "utf8"), "echo three\n");
  assert.equal(after.mode & 0o777, 0o750, "the mode is kept");
  assert.equal(after.ino, inode, "written in place, not replaced");
  assert.equal(lstatSync(join(cwd, "normal", "link-file")).isSymbolicLink(), true, "the symlink stays a symlink");
  assert.equal(await run("write", { path: "normal/link-dir/deep/er/new.txt", content: "" }), "Wrote 0 bytes to normal/link-dir/deep/er/new.txt");
  assert.equal(readFileSync(join(cwd, "normal", "src", "deep", "er", "new.txt"), "utf8"), "");
  assert.equal(await run("write", { path: "normal/src/run.sh", content: "x" }), "Wrote 1 bytes to normal/src/run.sh");
  assert.equal(readFileSync(join(cwd, "normal", "src", "run.sh"), "utf8"), "x", "a longer file is cut to the new content");
  assert.equal(await run("read", { path: "normal/link-dir" }), "deep/\nrun.sh");
  assert.equal(await run("read", { path: "normal" }), "link-dir\nlink-file\nsrc/");
  mkdirSync(join(cwd, "normal", "empty"));
  assert.equal(await run("read", { path: "normal/empty" }), "(empty directory)");
  await assert.rejects(run("read", { path: "normal/missing.txt" }), /normal\/missing.txt does not exist/);
  await assert.rejects(run("write", { path: "normal/src", content: "x" }), /normal\/src is a directory/);
  await assert.rejects(run("write", { path: "normal/src/run.sh/below", content: "x" }), /not a directory/);
});
