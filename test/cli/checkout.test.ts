/**
 * `bonsai checkout` end to end: the CLI as a user runs it, on a session file written for the
 * test. The move persists, a summary hangs off the destination, --dry-run writes nothing, bad
 * ids fail in one line, and Ctrl-C during the summary leaves the file as it was.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { BRANCH_SUMMARY_PREAMBLE } from "../../src/prompts/branch.js";
import { SessionManager } from "../../src/session/manager.js";
import { interruptDuringSummary, runBonsai } from "../helpers/cli.js";
import { REAL_SESSION } from "../helpers/fixtures.js";

const T = "2026-01-01T00:00:00.000Z";
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const userLine = (id: string, parentId: string | null, text: string) => ({
  type: "message",
  id,
  parentId,
  timestamp: T,
  message: { role: "user", content: [{ type: "text", text }], timestamp: 1 },
});
const assistantLine = (id: string, parentId: string, text: string, tool?: { name: string; path: string }) => ({
  type: "message",
  id,
  parentId,
  timestamp: T,
  message: {
    role: "assistant",
    content: [
      { type: "text", text },
      ...(tool ? [{ type: "toolCall", id: `call-${id}`, name: tool.name, arguments: { path: tool.path } }] : []),
    ],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage,
    stopReason: "stop",
    timestamp: 1,
  },
});

/**
 *   aaaa0001 user - aaaa0002 assistant - bbbb0001 user - bbbb0002 assistant        (main)
 *                                     \- cccc0001 user - c0ffee02 assistant        (side; the leaf)
 */
const LINES = [
  { type: "session", version: 3, id: "s-1", timestamp: T, cwd: "/project" },
  userLine("aaaa0001", null, "Set up the parser project"),
  assistantLine("aaaa0002", "aaaa0001", "Looked at the layout", { name: "read", path: "src/layout.ts" }),
  userLine("bbbb0001", "aaaa0002", "Now add the tokenizer"),
  assistantLine("bbbb0002", "bbbb0001", "Added it", { name: "write", path: "src/tokenizer.ts" }),
  userLine("cccc0001", "aaaa0002", "Try a regex-based lexer instead"),
  assistantLine("c0ffee02", "cccc0001", "Wrote the regex lexer", { name: "edit", path: "src/lexer.ts" }),
];

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function sessionFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  dirs.push(dir);
  const file = join(dir, "session.jsonl");
  writeFileSync(file, LINES.map((l) => `${JSON.stringify(l)}\n`).join(""));
  return file;
}
const reopen = (file: string) => SessionManager.open(file, { readOnly: true });

describe("bonsai checkout", () => {
  it("moves the leaf to an entry given by a unique prefix, and the move survives a reload", async () => {
    const file = sessionFile();
    const run = await runBonsai(["checkout", file, "bbbb0002"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^leaf: bbbb0002 \(was c0ffee02\)/);
    assert.equal(reopen(file).getLeafId(), "bbbb0002");

    const prefix = await runBonsai(["checkout", file, "c0ff", "--json"]);
    assert.equal(prefix.code, 0, prefix.stderr);
    const result = JSON.parse(prefix.stdout);
    assert.equal(result.targetId, "c0ffee02");
    assert.equal(result.oldLeafId, "bbbb0002");
    assert.equal(result.newLeafId, "c0ffee02");
    assert.equal(result.editorText, null);
    assert.equal(result.summary, null);
    assert.equal(reopen(file).getLeafId(), "c0ffee02");
  });

  it("re-opens a user message: prints its text, the leaf goes to its parent", async () => {
    const file = sessionFile();
    const run = await runBonsai(["checkout", file, "bbbb0001"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^leaf: aaaa0002 \(was c0ffee02\)/);
    assert.ok(run.stdout.includes("Now add the tokenizer"));
    assert.equal(reopen(file).getLeafId(), "aaaa0002");
  });

  it("--summarize leaves a summary of the abandoned branch at the destination (extractive by default)", async () => {
    const file = sessionFile();
    const run = await runBonsai(["checkout", file, "bbbb0001", "--summarize", "--instructions", "the lexer", "--json"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /extractive summarizer/);
    const result = JSON.parse(run.stdout);
    assert.equal(result.editorText, "Now add the tokenizer");
    assert.equal(result.summary.parentId, "aaaa0002");
    assert.equal(result.summary.summarizer, "extractive");
    assert.equal(result.newLeafId, result.summary.id);
    assert.ok(result.summary.text.startsWith(`${BRANCH_SUMMARY_PREAMBLE}\n\n`));
    assert.ok(result.summary.text.endsWith("<modified-files>\nsrc/lexer.ts\n</modified-files>"));
    assert.deepEqual(result.summary.readFiles, []);
    assert.deepEqual(result.summary.modifiedFiles, ["src/lexer.ts"]);

    const session = reopen(file);
    assert.equal(session.getLeafId(), result.summary.id);
    const stored = session.getLeafEntry();
    assert.equal(stored?.type, "branch_summary");
    assert.equal(stored?.type === "branch_summary" && stored.summary, result.summary.text);

    const tree = await runBonsai(["tree", file]);
    assert.match(tree.stdout, new RegExp(`${result.summary.id} BRANCH SUMMARY .*← leaf`));
  });

  it("--dry-run shows the common ancestor, the entries, tokens and files, and writes nothing", async () => {
    const file = sessionFile();
    const before = readFileSync(file);
    const run = await runBonsai(["checkout", file, "bbbb0001", "--dry-run", "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const preview = JSON.parse(run.stdout);
    assert.equal(preview.commonAncestorId, "aaaa0002");
    assert.equal(preview.newLeafId, "aaaa0002");
    assert.equal(preview.editorText, "Now add the tokenizer");
    assert.deepEqual(
      preview.entries.map((e: { id: string; summarized: boolean }) => [e.id, e.summarized]),
      [
        ["cccc0001", true],
        ["c0ffee02", true],
      ],
    );
    assert.equal(preview.messageCount, 2);
    assert.ok(preview.totalTokens > 0);
    assert.equal(preview.budget, 128_000 - 16_384);
    assert.deepEqual(preview.modifiedFiles, ["src/lexer.ts"]);

    const human = await runBonsai(["checkout", file, "bbbb0001", "--dry-run"]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /common ancestor: aaaa0002/);
    assert.match(human.stdout, /2 messages, \d+ tokens would be summarized/);
    assert.match(human.stdout, /modified files: src\/lexer\.ts/);

    // a window smaller than the reserve: half the window, never an unlimited budget
    const small = await runBonsai(["checkout", file, "bbbb0001", "--dry-run", "--json", "--context-window", "3000"]);
    assert.equal(small.code, 0, small.stderr);
    assert.equal(JSON.parse(small.stdout).budget, 1500);
    assert.deepEqual(readFileSync(file), before);
  });

  it("fails in one line on an ambiguous or unknown id, and on a missing file, writing nothing", async () => {
    const file = sessionFile();
    const before = readFileSync(file);
    const ambiguous = await runBonsai(["checkout", file, "aaaa"]);
    assert.equal(ambiguous.code, 1);
    assert.match(ambiguous.stderr, /^bonsai: entry id "aaaa" is ambiguous .*\n$/);
    const unknown = await runBonsai(["checkout", file, "ffff0000"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^bonsai: no entry with id "ffff0000".*\n$/);
    const missing = await runBonsai(["checkout", join(file, "..", "nope.jsonl"), "aaaa0001"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr.split("\n").length, 2);
    assert.deepEqual(readFileSync(file), before);
  });

  it("refuses a v1 file (its ids are made up on each read) without touching it or leaving a lock", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
    dirs.push(dir);
    const file = join(dir, "session.jsonl");
    copyFileSync(REAL_SESSION, file);
    const run = await runBonsai(["checkout", file, "abcd1234"]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^bonsai: .*format v1 has no stable entry ids; run `bonsai migrate .*session\.jsonl` first\n$/);
    assert.deepEqual(readFileSync(file), readFileSync(REAL_SESSION));
    assert.deepEqual(readdirSync(dir), ["session.jsonl"]);
  });

  it("says so and changes nothing when the target already is the leaf", async () => {
    const file = sessionFile();
    const before = readFileSync(file);
    const run = await runBonsai(["checkout", file, "c0ffee02", "--summarize"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /already is the leaf; nothing changed/);
    assert.deepEqual(readFileSync(file), before);
  });

  it("Ctrl-C during the summary cancels it: exit 130, the file byte for byte unchanged", async () => {
    const file = sessionFile();
    const before = readFileSync(file);
    const { run, requests } = await interruptDuringSummary((url) => ["checkout", file, "bbbb0001", "--summarize", "--remote", url]);
    assert.equal(requests, 1);
    assert.equal(run.code, 130, run.stderr);
    assert.match(run.stderr, /checkout cancelled: no summary written/);
    assert.equal(run.stdout, "");
    assert.deepEqual(readFileSync(file), before);
    assert.equal(reopen(file).getLeafId(), "c0ffee02");
  });
});
