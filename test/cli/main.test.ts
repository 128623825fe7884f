/**
 * The inspection CLI end to end, as a user runs it: info, tree, context, label and migrate on
 * temp copies of the shared fixtures and of the bundled example, compared with the golden
 * answers; and bad input, which must fail in one line, exit 1, and leave the file as it was.
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { estimateTokens } from "../../src/compaction/tokens.js";
import { convertToLlm } from "../../src/messages/convert.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { loadSessionFile } from "../../src/storage/load.js";
import { SessionManager } from "../../src/session/manager.js";
import { sessionVersion } from "../../src/format/migrate.js";
import { CliError, errorCode, UsageError } from "../../src/cli/output.js";
import { type CliRun as Run, ROOT, runBonsai } from "../helpers/cli.js";
import { conformanceCases, REAL_SESSION } from "../helpers/fixtures.js";

const EXAMPLE = join(ROOT, "examples/coding-session.jsonl");

const bonsai = (...args: string[]) => runBonsai(args);

const tmp = mkdtempSync(join(tmpdir(), "bonsai-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let copies = 0;
function copyOf(source: string): string {
  const dir = join(tmp, `c${++copies}`);
  mkdirSync(dir);
  const target = join(dir, "session.jsonl");
  copyFileSync(source, target);
  return target;
}

/** A failure as the CLI promises it: exit 1, one stderr line `bonsai: …`, no stack, nothing on stdout. */
function assertOneLineError(run: Run, mentions: RegExp): void {
  assert.equal(run.code, 1, `exit code (stderr: ${run.stderr})`);
  const lines = run.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line on stderr, got: ${JSON.stringify(run.stderr)}`);
  assert.match(lines[0], /^bonsai: /);
  assert.match(lines[0], mentions);
  assert.doesNotMatch(run.stderr, /\n\s+at |Error:/, "no stack trace");
  assert.equal(run.stdout, "");
}

const cases = conformanceCases();
const conf = cases.find((c) => c.name === "case-1")!;

describe("bonsai info / tree / context on a conformance case", () => {
  const golden = conf.golden;
  const file = copyOf(conf.file);
  const before = readFileSync(file);
  const atLeaf = golden.contexts.find((c) => c.leafId === golden.leafId)!;
  const other = golden.contexts.find((c) => c.leafId !== golden.leafId && c.messages.length > 10)!;

  it("info --json reports counts, leaf, labels and the context estimate; human output says the same", async () => {
    const [json, human] = await Promise.all([bonsai("info", file, "--json"), bonsai("info", file)]);
    assert.equal(json.code, 0, json.stderr);
    const info = JSON.parse(json.stdout);
    assert.equal(info.version, 3);
    assert.equal(info.entries.total, golden.entryCount);
    assert.equal(info.leafId, golden.leafId);
    const labeled = golden.tree.filter((n) => n.label !== null);
    assert.deepEqual(
      info.labels.map((l: { id: string; label: string }) => [l.id, l.label]).sort(),
      labeled.map((n) => [n.id, n.label]).sort(),
    );
    const childless = golden.tree.filter((n) => n.children.length === 0).length;
    assert.equal(info.branches.leaves, childless);
    assert.equal(info.branches.forkPoints, golden.tree.filter((n) => n.children.length > 1).length);
    assert.equal(info.context.messages, atLeaf.messages.length);
    const tokens = (atLeaf.messages as AgentMessage[]).reduce((sum, m) => sum + estimateTokens(m), 0);
    assert.equal(info.context.estimatedTokens, tokens);
    assert.equal(info.sizeBytes, before.length);
    assert.equal(info.loadIssues, 0);
    const lines = readFileSync(file, "utf8").trim().split("\n").slice(1).map((l) => JSON.parse(l));
    assert.equal(info.compactions, lines.filter((e) => e.type === "compaction").length);
    assert.equal(info.branchSummaries, lines.filter((e) => e.type === "branch_summary").length);

    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`^leaf\\s+${golden.leafId}$`, "m"));
    assert.match(human.stdout, new RegExp(`~${tokens.toLocaleString("en-US")} tokens`));
    assert.match(human.stdout, /^format\s+v3$/m);
  });

  it("tree --json is the reference tree, depth first; the human tree marks leaf, labels and summaries", async () => {
    const [json, human] = await Promise.all([bonsai("tree", file, "--json"), bonsai("tree", file)]);
    assert.equal(json.code, 0, json.stderr);
    const tree = JSON.parse(json.stdout);
    assert.equal(tree.leafId, golden.leafId);
    assert.deepEqual(
      // role, timestamp and preview are bonsai's additions (docs/json.md); the rest is the reference tree
      tree.nodes.map(({ type: _type, role: _role, timestamp: _timestamp, preview: _preview, ...rest }: Record<string, unknown>) => rest),
      golden.tree,
    );

    assert.equal(human.code, 0, human.stderr);
    const lines = human.stdout.trimEnd().split("\n").filter((l) => !l.startsWith("legend: "));
    const types = new Map<string, string>(tree.nodes.map((n: { id: string; type: string }) => [n.id, n.type]));
    assert.equal(lines.length, tree.nodes.length, "one line per entry (no bonsai.checkout markers in this file)");
    const leafLines = lines.filter((l) => l.includes("← leaf"));
    assert.equal(leafLines.length, 1);
    assert.match(leafLines[0], new RegExp(`${golden.leafId} `));
    for (const node of golden.tree.filter((n) => n.label !== null)) {
      assert.ok(lines.some((l) => l.includes(`${node.id} `) && l.includes(`[${node.label}]`)), `label of ${node.id}`);
    }
    const count = (type: string) => [...types.values()].filter((t) => t === type).length;
    assert.equal(lines.filter((l) => / COMPACTION /.test(l)).length, count("compaction"));
    assert.equal(lines.filter((l) => / BRANCH SUMMARY /.test(l)).length, count("branch_summary"));
    // A chain of single children does not indent: only entries right under a fork get a connector.
    const forkChildren = golden.tree.filter((n) => n.children.length > 1).reduce((sum, n) => sum + n.children.length, 0);
    const roots = golden.tree.filter((n) => n.parentId === null).length;
    assert.equal(lines.filter((l) => /[├└]─ /.test(l)).length, forkChildren + (roots > 1 ? roots : 0));
  });

  it("context --json is the reference context at the leaf and at --leaf; --llm converts it", async () => {
    const [atDefault, atOther, llm, human] = await Promise.all([
      bonsai("context", file, "--json"),
      bonsai("context", file, "--json", "--leaf", other.leafId, "--last", "2"),
      bonsai("context", file, "--json", "--llm", "--leaf", other.leafId.slice(0, 6)),
      bonsai("context", file, "--leaf", other.leafId),
    ]);
    for (const run of [atDefault, atOther, llm, human]) assert.equal(run.code, 0, run.stderr);
    const a = JSON.parse(atDefault.stdout);
    assert.equal(a.leafId, golden.leafId);
    assert.deepEqual(a.messages, atLeaf.messages);
    assert.equal(a.thinkingLevel, atLeaf.thinkingLevel);
    assert.deepEqual(a.model, atLeaf.model);
    const b = JSON.parse(atOther.stdout);
    assert.equal(b.leafId, other.leafId);
    assert.deepEqual(b.messages, other.messages.slice(-2), "--last keeps the newest messages");
    assert.equal(b.messageCount, other.messages.length);
    const allTokens = (other.messages as AgentMessage[]).reduce((sum, m) => sum + estimateTokens(m), 0);
    assert.equal(b.estimatedTokens, allTokens, "the estimate covers the whole context");
    const c = JSON.parse(llm.stdout);
    assert.equal(c.llm, true);
    assert.equal(c.leafId, other.leafId, "a unique id prefix selects the entry");
    assert.deepEqual(c.messages, JSON.parse(JSON.stringify(convertToLlm(other.messages as AgentMessage[]))));
    assert.ok(c.messages.every((m: { role: string }) => ["user", "assistant", "toolResult"].includes(m.role)));
    const headers = human.stdout.split("\n").filter((l) => /^── #\d+ /.test(l));
    assert.equal(headers.length, other.messages.length);
    assert.match(human.stdout, new RegExp(`^context at leaf ${other.leafId}: ${other.messages.length} messages`, "m"));
  });

  it("never writes: the file is byte-identical and no lock file is left", () => {
    assert.deepEqual(readFileSync(file), before);
    assert.deepEqual(readdirSync(resolve(file, "..")), ["session.jsonl"]);
  });
});

describe("bonsai tree hides bonsai.checkout markers", () => {
  it("shows the moved leaf, not the marker; --all and --json include it", async () => {
    const dir = join(tmp, "checkout");
    const session = SessionManager.create("/work/project", dir);
    const first = session.appendMessage({ role: "user", content: "first question", timestamp: 1 });
    session.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: "an answer" }],
      provider: "p",
      model: "m",
      stopReason: "stop",
      timestamp: 2,
    });
    session.checkout(first);
    session.close();
    const file = session.getSessionFile()!;
    const [human, all, json] = await Promise.all([bonsai("tree", file), bonsai("tree", file, "--all"), bonsai("tree", file, "--json")]);
    const lines = human.stdout.trimEnd().split("\n").filter((l) => !l.startsWith("legend: "));
    assert.equal(lines.length, 2);
    assert.match(lines[0], new RegExp(`^${first} user first question ← leaf$`));
    assert.doesNotMatch(human.stdout, /bonsai\.checkout/);
    assert.equal(all.stdout.trimEnd().split("\n").filter((l) => !l.startsWith("legend: ")).length, 3);
    assert.match(all.stdout, /custom bonsai\.checkout/);
    const tree = JSON.parse(json.stdout);
    assert.equal(tree.leafId, first);
    assert.equal(tree.nodes.length, 3);
  });
});

describe("bonsai label", () => {
  it("sets, keeps, and clears a label, each checked by reopening; the lock is released", async () => {
    const file = copyOf(conf.file);
    const target = conf.golden.tree.find((n) => n.label === null && n.children.length > 0)!.id;
    const set = await bonsai("label", file, target, "checkpoint-a");
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, new RegExp(`labeled ${target} \\[checkpoint-a\\]`));
    assert.equal(SessionManager.open(file, { readOnly: true }).getLabel(target), "checkpoint-a");
    const sizeAfterSet = readFileSync(file).length;

    const again = await bonsai("label", file, target, "checkpoint-a", "--json");
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { id: target, label: "checkpoint-a", previous: "checkpoint-a", changed: false, labelEntryId: null });
    assert.equal(readFileSync(file).length, sizeAfterSet, "an unchanged label writes nothing");

    const clear = await bonsai("label", file, target.slice(0, 6), "--json");
    assert.equal(clear.code, 0, clear.stderr);
    const cleared = JSON.parse(clear.stdout);
    assert.equal(cleared.changed, true);
    assert.equal(cleared.previous, "checkpoint-a");
    assert.equal(cleared.label, null);
    const reopened = SessionManager.open(file, { readOnly: true });
    assert.equal(reopened.getLabel(target), undefined);
    assert.equal(reopened.getEntry(cleared.labelEntryId)?.type, "label");
    assert.deepEqual(readdirSync(resolve(file, "..")), ["session.jsonl"], "no lock file left");
  });

  it("refuses a v1 file (its ids are not stable) without touching it", async () => {
    const file = copyOf(REAL_SESSION);
    const run = await bonsai("label", file, "abcd1234", "x");
    assertOneLineError(run, /format v1 .*run `bonsai migrate .*session\.jsonl` first$/);
    assert.deepEqual(readFileSync(file), readFileSync(REAL_SESSION));
    assert.deepEqual(readdirSync(resolve(file, "..")), ["session.jsonl"]);
  });
});

describe("bonsai migrate", () => {
  it("upgrades a v1 file atomically with a backup of the original bytes; a second run changes nothing", async () => {
    const file = copyOf(REAL_SESSION);
    const original = readFileSync(REAL_SESSION);
    const infoBefore = JSON.parse((await bonsai("info", file, "--json")).stdout);
    assert.equal(infoBefore.version, 1, "info reports the version on disk");

    const first = await bonsai("migrate", file, "--json");
    assert.equal(first.code, 0, first.stderr);
    const result = JSON.parse(first.stdout);
    assert.equal(result.fromVersion, 1);
    assert.equal(result.toVersion, 3);
    assert.equal(result.migrated, true);
    assert.equal(result.entries, infoBefore.entries.total);
    assert.ok(existsSync(result.backupPath), "backup exists");
    assert.deepEqual(readFileSync(result.backupPath), original, "backup holds the original bytes");
    assert.equal(sessionVersion(loadSessionFile(file).fileEntries), 3);
    const migrated = readFileSync(file);

    const [second, infoAfter] = await Promise.all([bonsai("migrate", file), bonsai("info", file, "--json")]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /already at version 3; nothing changed/);
    assert.deepEqual(readFileSync(file), migrated, "the second run leaves the bytes identical");
    const after = JSON.parse(infoAfter.stdout);
    assert.equal(after.version, 3);
    assert.equal(after.context.estimatedTokens, infoBefore.context.estimatedTokens, "same conversation after migration");
    assert.equal(readdirSync(resolve(file, "..")).filter((f) => f.includes(".bak-")).length, 1, "one backup, from the one real migration");
  });
});

describe("bad input fails in one line and never modifies the file", () => {
  it("missing file, directory, binary file, garbage header, unknown ids, usage errors", async () => {
    const binary = join(tmp, "random.jsonl");
    const bytes = Buffer.alloc(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) % 256;
    writeFileSync(binary, bytes);
    const garbage = join(tmp, "garbage.jsonl");
    writeFileSync(garbage, "hello, this is not a session\n{\"type\":\"message\"}\n");
    const directory = join(tmp, "a-directory");
    mkdirSync(directory);
    const good = copyOf(conf.file);
    const goodBytes = readFileSync(good);
    const missing = join(tmp, "missing.jsonl");

    const runs = await Promise.all([
      bonsai("info", missing),
      bonsai("tree", directory),
      bonsai("context", binary),
      bonsai("info", garbage, "--json"),
      bonsai("migrate", binary),
      bonsai("label", missing, "abcd1234", "x"),
      bonsai("label", garbage, "abcd1234", "x"),
      bonsai("context", good, "--leaf", "zzzzzzzz"),
      bonsai("label", good, "zzzzzzzz", "x"),
      bonsai("info"),
      bonsai("frobnicate", good),
    ]);
    const [noFile, dir, bin, bad, migrateBin, labelMissing, labelGarbage, unknownLeaf, unknownLabel, noArg, unknownCmd] = runs;
    assertOneLineError(noFile, /missing\.jsonl: no such file/);
    assertOneLineError(dir, /a-directory: is a directory/);
    assertOneLineError(bin, /random\.jsonl:1: not a session file/);
    // with --json the failure is also JSON on stdout (docs/json.md); stderr keeps its one line
    assertOneLineError({ ...bad, stdout: "" }, /garbage\.jsonl:1: not a session file: the first line is not JSON/);
    assert.equal(JSON.parse(bad.stdout).code, "BAD_HEADER");
    assertOneLineError(migrateBin, /random\.jsonl:1: not a session file/);
    assertOneLineError(labelMissing, /missing\.jsonl: no such file/);
    assertOneLineError(labelGarbage, /garbage\.jsonl:1:/);
    assertOneLineError(unknownLeaf, /no entry with id "zzzzzzzz"/);
    assertOneLineError(unknownLabel, /no entry with id "zzzzzzzz"/);
    // usage errors: exit 2, one line
    for (const run of [noArg, unknownCmd]) {
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /^bonsai: .+\n$/);
    }
    assert.deepEqual(readFileSync(binary), bytes);
    assert.equal(readFileSync(garbage, "utf8"), "hello, this is not a session\n{\"type\":\"message\"}\n");
    assert.deepEqual(readFileSync(good), goodBytes);
    assert.equal(existsSync(missing), false, "label on a missing file does not create it");
    assert.deepEqual(readdirSync(directory), []);
    assert.deepEqual(
      readdirSync(tmp).filter((f) => f.endsWith(".lock")),
      [],
      "no lock file left behind",
    );
  });

  it("garbage lines in the middle are skipped with one warning each; the rest still works", async () => {
    const file = copyOf(conf.file);
    const lines = readFileSync(file, "utf8").split("\n");
    lines.splice(5, 0, "this line is not JSON");
    lines.splice(12, 0, '{"type":"message","id":42}');
    writeFileSync(file, lines.join("\n"));
    const before = readFileSync(file);
    const [info, context] = await Promise.all([bonsai("info", file, "--json"), bonsai("context", file, "--json")]);
    for (const run of [info, context]) {
      assert.equal(run.code, 0, run.stderr);
      const warnings = run.stderr.trimEnd().split("\n");
      assert.equal(warnings.length, 2, run.stderr);
      assert.match(warnings[0], /^warning: .*session\.jsonl:6: malformed JSON/);
      assert.match(warnings[1], /^warning: .*session\.jsonl:13: invalid entry/);
    }
    assert.equal(JSON.parse(info.stdout).loadIssues, 2);
    assert.equal(JSON.parse(info.stdout).entries.total, conf.golden.entryCount);
    assert.deepEqual(JSON.parse(context.stdout).messages, conf.golden.contexts.find((c) => c.leafId === conf.golden.leafId)!.messages);
    assert.deepEqual(readFileSync(file), before);
  });

  it("info validates every message body, even where a plain open leaves bodies for later", async () => {
    const file = copyOf(conf.file);
    const lines = readFileSync(file, "utf8").split("\n");
    const first = JSON.parse(lines[1]);
    // a message line in the usual shape, well-formed JSON, content of the wrong type, hanging off the first entry
    lines.splice(3, 0, JSON.stringify({ type: "message", id: "wrongfields", parentId: first.id, timestamp: first.timestamp, message: { role: "user", content: 5 } }));
    writeFileSync(file, lines.join("\n"));
    const info = await bonsai("info", file, "--json");
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stderr, /^warning: .*session\.jsonl:4: invalid entry/);
    assert.equal(JSON.parse(info.stdout).loadIssues, 1);
  });
});

describe("the bundled example", () => {
  it("is a realistic session: a few hundred entries, tool calls, branches, a summary, labels, model and thinking changes", async () => {
    const run = await bonsai("info", EXAMPLE, "--json");
    assert.equal(run.code, 0, run.stderr);
    const info = JSON.parse(run.stdout);
    assert.ok(info.entries.total >= 250, `${info.entries.total} entries`);
    assert.ok(info.branches.forkPoints >= 3);
    assert.ok(info.branchSummaries >= 1);
    assert.ok(info.labels.length >= 3);
    assert.ok(info.entries.byType.model_change >= 2 && info.entries.byType.thinking_level_change >= 2);
    // more than the 20,000 tokens a compaction keeps by default, so `bonsai compact` has work to do
    assert.ok(info.context.estimatedTokens > 20_000, "enough context for compaction to matter");
    assert.equal(info.compactions, 1, "and one compaction already, for the page to show a boundary");
    assert.equal(info.loadIssues, 0);
    const session = SessionManager.open(EXAMPLE, { readOnly: true });
    const tools = new Set<string>();
    for (const entry of session.getEntries()) {
      if (entry.type === "message" && entry.message.role === "assistant") {
        for (const block of entry.message.content) if (block.type === "toolCall") tools.add(block.name);
      }
    }
    assert.deepEqual([...tools].sort(), ["bash", "edit", "read", "write"]);
  });

  it("is what examples/generate-example.ts writes today (same conversation, ids aside)", async () => {
    const { generateExample } = await import("../../examples/generate-example.js");
    const fresh = join(tmp, "fresh-example.jsonl");
    await generateExample(fresh);
    const conversation = (path: string) =>
      SessionManager.open(path, { readOnly: true })
        .buildSessionContext()
        .messages.map((m) => (m.role === "branchSummary" ? { ...m, fromId: "" } : m));
    assert.deepEqual(conversation(fresh), conversation(EXAMPLE));
    assert.equal(
      SessionManager.open(fresh, { readOnly: true }).getEntries().length,
      SessionManager.open(EXAMPLE, { readOnly: true }).getEntries().length,
    );
  });
});

describe("version and usage errors", () => {
  it("-v, -V and --version print the package's version", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["-v", "-V", "--version"]) {
      const run = await runBonsai([flag]);
      assert.deepEqual([run.code, run.stdout], [0, `${version}\n`], flag);
    }
  });

  it("a usage error thrown by a command is code USAGE for --json callers, other one-line errors INVALID_INPUT", () => {
    assert.equal(errorCode(new UsageError("x")), "USAGE");
    assert.equal(errorCode(new CliError("x")), "INVALID_INPUT");
  });

  it("the top-level help ends with examples, each using only options its command has", async () => {
    const help = await runBonsai(["--help"]);
    assert.equal(help.code, 0);
    const examples = help.stdout.split("\nExamples:\n")[1]?.split("\n").filter((l) => l.startsWith("  bonsai ")) ?? [];
    assert.ok(examples.length >= 4, help.stdout);
    for (const example of examples) {
      const [, command, ...rest] = example.trim().split(/\s+/);
      const own = await runBonsai([command, "--help"]);
      assert.equal(own.code, 0, example);
      for (const flag of rest.filter((word) => word.startsWith("--"))) assert.match(own.stdout, new RegExp(`${flag}\\b`), `${example}: ${flag}`);
    }
  });
});
