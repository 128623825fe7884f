/**
 * `bonsai compact` and `bonsai prune` end to end, as a user runs them: on a copy of the real
 * v1 fixture and on generated sessions. The file bonsai compacts opens in the reference
 * SessionManager with the same, shorter context; --dry-run and Ctrl-C leave files byte for byte
 * as they were; pruning archives and restores.
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { planCompaction } from "../../src/compaction/prepare.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../../src/compaction/settings.js";
import { convertToLlm } from "../../src/messages/convert.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { SessionManager } from "../../src/session/manager.js";
import type { SessionContext } from "../../src/format/entry-types.js";
import { interruptDuringSummary, runBonsai } from "../helpers/cli.js";
import { REAL_SESSION } from "../helpers/fixtures.js";
import { a, messageOf, text, tr, u } from "../helpers/paths.js";
import { tempDir } from "../helpers/session-builders.js";

interface ReferenceManager {
  buildSessionContext(): SessionContext;
}
let reference: { SessionManager: { open(path: string): ReferenceManager } };
const { dir, cleanup } = tempDir();
before(async () => {
  reference = (await import("@mariozechner/pi-coding-agent")) as unknown as typeof reference;
});
after(cleanup);

let copies = 0;
function realCopy(): string {
  const folder = join(dir, `real-${++copies}`);
  mkdirSync(folder);
  const file = join(folder, "session.jsonl");
  copyFileSync(REAL_SESSION, file);
  return file;
}
const filesIn = (file: string) => readdirSync(resolve(file, "..")).sort();

describe("bonsai compact", () => {
  it("--dry-run --json shows the preparation and writes nothing, not even the v1 to v3 upgrade", async () => {
    const file = realCopy();
    const run = await runBonsai(["compact", file, "--dry-run", "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const plan = JSON.parse(run.stdout);
    const expected = planCompaction(SessionManager.open(REAL_SESSION, { readOnly: true }).getBranch(), DEFAULT_COMPACTION_SETTINGS);
    assert.ok(expected.ok);
    const p = expected.preparation;
    assert.equal(plan.compacted, false);
    assert.equal(plan.reason, null);
    assert.equal(plan.firstKeptEntryIndex, p.firstKeptEntryIndex);
    assert.equal(plan.isSplitTurn, p.isSplitTurn);
    assert.equal(plan.messagesToSummarize, p.messagesToSummarize.length);
    assert.equal(plan.turnPrefixMessages, p.turnPrefixMessages.length);
    assert.equal(plan.keptMessages, p.recentMessages.length);
    assert.equal(plan.tokensBefore, p.tokensBefore);
    assert.ok(plan.estimatedKeptTokens < plan.estimatedTokensBefore);
    assert.ok(plan.modifiedFiles.length > 0);
    assert.deepEqual(readFileSync(file), readFileSync(REAL_SESSION));
    assert.deepEqual(filesIn(file), ["session.jsonl"]);
  });

  it("compacts the real fixture with the extractive summarizer; the reference opens it with the same, shorter context", async () => {
    const file = realCopy();
    const before = SessionManager.open(REAL_SESSION, { readOnly: true }).buildSessionContext().messages;
    const run = await runBonsai(["compact", file, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /extractive summarizer/);
    assert.match(run.stderr, /upgraded from format v1 to v3/);
    const report = JSON.parse(run.stdout);
    assert.equal(report.compacted, true);
    assert.equal(report.summarizer, "extractive");
    assert.ok(report.estimatedTokensAfter < report.estimatedTokensBefore / 3, `${report.estimatedTokensAfter} vs ${report.estimatedTokensBefore}`);

    const ours = SessionManager.open(file, { readOnly: true });
    const leaf = ours.getLeafEntry();
    assert.equal(leaf?.type, "compaction");
    assert.equal(leaf?.id, report.compactionId);
    const oursContext = ours.buildSessionContext();
    const theirs = reference.SessionManager.open(file).buildSessionContext();
    // The short summary is oh-my-pi's field: pi does not put it on the summary message (and no
    // reader sends it to the model). Everything else is the same, message for message.
    const [summaryMessage, ...kept] = oursContext.messages;
    const { shortSummary, ...piSummaryMessage } = summaryMessage as { shortSummary?: string };
    assert.equal(shortSummary, report.shortSummary);
    assert.deepEqual(theirs.messages, [piSummaryMessage, ...kept]);
    assert.deepEqual(convertToLlm(theirs.messages), convertToLlm(oursContext.messages));
    assert.equal(theirs.thinkingLevel, oursContext.thinkingLevel);
    assert.deepEqual(theirs.model, oursContext.model);
    assert.equal(theirs.messages[0].role, "compactionSummary");
    assert.equal((theirs.messages[0] as { summary: string }).summary, report.summary);
    assert.ok(theirs.messages.length < before.length, `${theirs.messages.length} < ${before.length}`);
    assert.deepEqual(theirs.messages.slice(1), before.slice(-(theirs.messages.length - 1)), "then the kept messages, unchanged");

    const backups = filesIn(file).filter((f) => f.includes(".bak-"));
    assert.equal(backups.length, 1);
    assert.deepEqual(readFileSync(join(resolve(file, ".."), backups[0])), readFileSync(REAL_SESSION));

    const again = await runBonsai(["compact", file]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /Already compacted/);
  });

  it("Ctrl-C while the summarizer works: cancelled, exit 130, the file byte for byte unchanged", async () => {
    const file = realCopy();
    const { run, requests } = await interruptDuringSummary((url) => ["compact", file, "--remote", url]);
    assert.ok(requests >= 1);
    assert.equal(run.code, 130, run.stderr);
    assert.match(run.stderr, /compaction cancelled: .* is unchanged/);
    assert.equal(run.stdout, "");
    assert.deepEqual(readFileSync(file), readFileSync(REAL_SESSION));
    assert.deepEqual(filesIn(file), ["session.jsonl"], "no backup, no lock left behind");
  });

  it("a session too small to compact says so and exits 0", async () => {
    const file = join(dir, "small.jsonl");
    const session = SessionManager.open(file);
    session.appendMessage(messageOf(u("hello")));
    session.appendMessage(messageOf(a("hi")));
    session.close();
    const bytes = readFileSync(file);
    const run = await runBonsai(["compact", file, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.compacted, false);
    assert.equal(report.reason, "nothing-to-compact");
    assert.deepEqual(readFileSync(file), bytes);
    const human = await runBonsai(["compact", file]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Nothing to compact yet: the whole conversation \(\d+ tokens\) fits in the 20,000 tokens kept verbatim/);
    assert.doesNotMatch(human.stdout + human.stderr, /fail/i);
  });

  it("bad input fails in one line", async () => {
    const missing = await runBonsai(["compact", join(dir, "nope.jsonl")]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^bonsai: .*nope\.jsonl.*no such file\n$/);
    const badKeep = await runBonsai(["compact", REAL_SESSION, "--keep-recent", "lots"]);
    assert.equal(badKeep.code, 2);
    assert.equal(badKeep.stderr.trim().split("\n").length, 1);
  });
});

describe("bonsai prune", () => {
  function toolHeavySession(): string {
    const file = join(dir, `tools-${++copies}.jsonl`);
    const session = SessionManager.open(file);
    session.appendMessage(messageOf(u("go")));
    for (let i = 0; i < 8; i++) {
      session.appendMessage(messageOf(a("", { calls: [{ name: i === 0 ? "read" : "bash" }] })));
      session.appendMessage(messageOf(tr(`${i} ${text(40_000)}`, i === 0 ? "read" : "bash")));
    }
    session.close();
    return file;
  }

  it("--dry-run lists what would go and writes nothing; prune archives; --restore brings the file back", async () => {
    const file = toolHeavySession();
    const original = readFileSync(file);

    const dry = await runBonsai(["prune", file, "--dry-run", "--json"]);
    assert.equal(dry.code, 0, dry.stderr);
    const plan = JSON.parse(dry.stdout);
    assert.equal(plan.dryRun, true);
    assert.equal(plan.prunedCount, 3, "8 results of 10k: 4 protected, the read result never pruned");
    assert.ok(plan.entries.every((e: { toolName: string }) => e.toolName === "bash"));
    assert.deepEqual(readFileSync(file), original);
    assert.ok(!existsSync(`${file}.pruned.jsonl`));

    const run = await runBonsai(["prune", file, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.prunedCount, 3);
    assert.equal(report.archive, `${file}.pruned.jsonl`);
    assert.equal(report.contextTokensBefore - report.contextTokensAfter, report.tokensSaved);
    const pruned = SessionManager.open(file, { readOnly: true }).buildSessionContext().messages as AgentMessage[];
    assert.equal(pruned.filter((m) => m.role === "toolResult" && m.prunedAt !== undefined).length, 3);

    const human = await runBonsai(["prune", file]);
    assert.match(human.stdout, /nothing to prune/);

    const prunedBytes = readFileSync(file);
    const dryRestore = await runBonsai(["prune", file, "--dry-run", "--restore"]);
    assert.equal(dryRestore.code, 2);
    assert.equal(dryRestore.stderr, "bonsai: prune: --dry-run does not go with --restore, which writes the originals back at once\n");
    assert.deepEqual(readFileSync(file), prunedBytes, "a dry run asked for writes nothing");

    const one = await runBonsai(["prune", file, "--restore", "--entry", report.entries[0].id, "--json"]);
    assert.deepEqual(JSON.parse(one.stdout).restored, [report.entries[0].id]);
    const rest = await runBonsai(["prune", file, "--restore"]);
    assert.equal(rest.code, 0, rest.stderr);
    assert.match(rest.stdout, /restored 2 tool results/);
    assert.deepEqual(readFileSync(file), original);
  });
});
