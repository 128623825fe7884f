/**
 * The chat's tools: paths confined to the working directory (`..`, absolute paths elsewhere,
 * symlinks out, dangling symlinks), read with offsets and limits, write, exact-match edit,
 * and bash only when allowed, with exit codes, timeouts and aborts.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  createChatTools,
  isInside,
  READ_MAX_LINES,
  READ_WHOLE_MAX_BYTES,
  readLineWindow,
  replaceExactlyOnce,
  resolveInside,
  sliceForRead,
  tailOutput,
  ToolInputError,
} from "../../src/chat/tools.js";

let root: string;
let cwd: string;
let outside: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), "bonsai-"));
  cwd = join(root, "work");
  outside = join(root, "outside");
  mkdirSync(join(cwd, "src"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "do not read");
  writeFileSync(join(cwd, "src", "a.ts"), "export const a = 1;\nexport const b = 2;\n");
  symlinkSync(outside, join(cwd, "link-out"));
  symlinkSync(join(cwd, "src"), join(cwd, "link-in"));
  symlinkSync(join(outside, "missing.txt"), join(cwd, "dangling"));
});
after(() => rmSync(root, { recursive: true, force: true }));

const tool = (name: string, allowBash = false): AgentTool => {
  const found = createChatTools(cwd, { allowBash }).find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};
const run = async (name: string, args: Record<string, unknown>, signal?: AbortSignal) => {
  const result = await tool(name, true).execute("call_1", args as never, signal);
  return (result.content[0] as { text: string }).text;
};

test("isInside compares path text only", () => {
  assert.equal(isInside("/a/b", "/a/b"), true);
  assert.equal(isInside("/a/b", "/a/b/c/d"), true);
  assert.equal(isInside("/a/b", "/a/bc"), false);
  assert.equal(isInside("/a/b", "/a"), false);
  assert.equal(isInside("/a/b", "/a/b/..x"), true);
});

test("paths inside the working directory resolve; escapes are refused", () => {
  assert.equal(resolveInside(cwd, "src/a.ts"), join(cwd, "src", "a.ts"));
  assert.equal(resolveInside(cwd, join(cwd, "src/new.ts")), join(cwd, "src", "new.ts"));
  assert.equal(resolveInside(cwd, "src/../src/a.ts"), join(cwd, "src", "a.ts"));
  assert.equal(resolveInside(cwd, "link-in/a.ts"), join(cwd, "link-in", "a.ts"), "a symlink that stays inside is fine");
  assert.throws(() => resolveInside(cwd, "../outside/secret.txt"), /outside the working directory/);
  assert.throws(() => resolveInside(cwd, join(outside, "secret.txt")), /outside the working directory/);
  assert.throws(() => resolveInside(cwd, "link-out/secret.txt"), /through a symlink/);
  assert.throws(() => resolveInside(cwd, "link-out/new/file.txt"), /through a symlink/, "a new file under a symlink out");
  assert.throws(() => resolveInside(cwd, "dangling"), /symlink that points nowhere/);
  assert.throws(() => resolveInside(cwd, ""), ToolInputError);
  assert.throws(() => resolveInside(cwd, "a\0b"), /NUL/);
});

test("read returns the file, a slice by offset and limit, or a directory listing", async () => {
  assert.equal(await run("read", { path: "src/a.ts" }), "export const a = 1;\nexport const b = 2;\n");
  assert.equal(await run("read", { path: "src/a.ts", offset: 2, limit: 1 }), "export const b = 2;\n\n[lines 2-2 of 3; read on with offset=3]");
  assert.equal(await run("read", { path: "src" }), "a.ts");
  await assert.rejects(run("read", { path: "link-out/secret.txt" }), /through a symlink/);
  await assert.rejects(run("read", { path: "src/a.ts", offset: 0 }), /offset must be a positive integer/);
  writeFileSync(join(cwd, "bin.dat"), Buffer.from([1, 0, 2]));
  await assert.rejects(run("read", { path: "bin.dat" }), /binary file/);
});

test("long files come back in pieces that say how to read on", () => {
  const text = Array.from({ length: READ_MAX_LINES + 10 }, (_, i) => `line ${i + 1}`).join("\n");
  const first = sliceForRead(text);
  assert.match(first, /\n\n\[lines 1-2000 of 2010; read on with offset=2001\]$/);
  assert.equal(sliceForRead(text, 2001), Array.from({ length: 10 }, (_, i) => `line ${2001 + i}`).join("\n"));
  assert.throws(() => sliceForRead("a\nb", 5), /past the end \(2 lines\)/);
  const wide = Array.from({ length: 100 }, () => "x".repeat(1000)).join("\n");
  // 51 lines of 1,001 bytes fit in 50 KB, the 52nd does not
  assert.ok(sliceForRead(wide).endsWith("\n\n[lines 1-51 of 100; read on with offset=52]"), "the byte limit cuts too");
});

test("write creates directories and files inside, never outside", async () => {
  assert.equal(await run("write", { path: "docs/notes/n.md", content: "héllo" }), "Wrote 6 bytes to docs/notes/n.md");
  assert.equal(readFileSync(join(cwd, "docs/notes/n.md"), "utf8"), "héllo");
  await assert.rejects(run("write", { path: "link-out/evil.txt", content: "x" }), /through a symlink/);
  await assert.rejects(run("write", { path: "dangling", content: "x" }), /points nowhere/);
  assert.equal(existsSync(join(outside, "evil.txt")), false);
  assert.equal(existsSync(join(outside, "missing.txt")), false);
  await assert.rejects(run("write", { path: "x.txt" }), /content must be a string/);
});

test("edit replaces exactly one occurrence and explains every other case", async () => {
  writeFileSync(join(cwd, "e.txt"), "alpha beta\nbeta gamma\n");
  assert.equal(await run("edit", { path: "e.txt", oldText: "alpha", newText: "ALPHA" }), "Edited e.txt");
  assert.equal(readFileSync(join(cwd, "e.txt"), "utf8"), "ALPHA beta\nbeta gamma\n");
  await assert.rejects(run("edit", { path: "e.txt", oldText: "beta", newText: "B" }), /occurs 2 times in e\.txt/);
  await assert.rejects(run("edit", { path: "e.txt", oldText: "delta", newText: "D" }), /was not found in e\.txt/);
  await assert.rejects(run("edit", { path: "nope.txt", oldText: "a", newText: "b" }), /does not exist: use write/);
  assert.equal(readFileSync(join(cwd, "e.txt"), "utf8"), "ALPHA beta\nbeta gamma\n", "failed edits change nothing");
  assert.equal(replaceExactlyOnce("aXa", "X", "$&$'", "f"), "a$&$'a", "replacement text is taken literally");
  assert.throws(() => replaceExactlyOnce("abc", "", "x", "f"), /oldText is empty/);
});

test("bash exists only when allowed", () => {
  assert.deepEqual(createChatTools(cwd).map((t) => t.name), ["read", "write", "edit"]);
  assert.deepEqual(createChatTools(cwd, { allowBash: true }).map((t) => t.name), ["read", "write", "edit", "bash"]);
  for (const t of createChatTools(cwd, { allowBash: true })) {
    assert.equal((t.parameters as unknown as { type: string }).type, "object", t.name);
    assert.ok(t.description.length > 20, t.name);
  }
});

test("bash runs in the working directory; a non-zero exit, a timeout and an abort are errors", async () => {
  assert.equal((await run("bash", { command: "pwd && echo err >&2" })).trim(), `${cwd}\nerr`);
  await assert.rejects(run("bash", { command: "echo partial; exit 3" }), /partial\n\n\nexit code 3$/);
  const started = Date.now();
  await assert.rejects(run("bash", { command: "sleep 5", timeout: 1 }), /killed after 1 s \(timeout\)/);
  assert.ok(Date.now() - started < 4000);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  await assert.rejects(run("bash", { command: "sleep 5 & wait" }, controller.signal), /killed: the run was stopped/);
  assert.equal(await run("bash", { command: "true" }), "(no output)");
});

test("long output keeps its tail", () => {
  assert.equal(tailOutput("short", 10), "short");
  const cut = tailOutput(`${"a".repeat(50)}END`, 10);
  assert.equal(cut, "[output cut: showing the last 10 bytes]\naaaaaaaEND");
});

/** Issue 26, defect 10: read checks size and binary before reading, and never holds a huge file whole. */
test("read: a huge binary file is refused from its first bytes; a huge text file is read a window at a time", async () => {
  const huge = join(cwd, "huge.bin");
  writeFileSync(huge, Buffer.from([0, 1, 2]));
  truncateSync(huge, 16 * READ_WHOLE_MAX_BYTES); // 256 MiB, sparse: read whole, it took 500 MiB of buffers
  const buffersBefore = process.memoryUsage().arrayBuffers;
  await assert.rejects(run("read", { path: "huge.bin" }), /huge\.bin is a binary file \(268435456 bytes\)/);
  const grew = process.memoryUsage().arrayBuffers - buffersBefore;
  assert.ok(grew < 32 * 1024 * 1024, `refusing it took ${Math.round(grew / 1048576)} MiB of buffers`);

  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} ${"x".repeat(i % 50)}`).join("\n");
  const file = join(cwd, "lines.txt");
  writeFileSync(file, lines);
  const fh = await open(file, "r");
  try {
    for (const [offset, limit] of [[1, undefined], [1, 10], [2500, undefined], [2990, 100], [3000, 1]] as const) {
      assert.equal(await readLineWindow(fh, offset, limit), sliceForRead(lines, offset, limit), `offset ${offset}, limit ${limit}`);
    }
    await assert.rejects(readLineWindow(fh, 3001, undefined), /offset 3001 is past the end \(3000 lines\)/);
  } finally {
    await fh.close();
  }
});
