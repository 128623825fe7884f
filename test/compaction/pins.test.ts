/**
 * Issue 28, item 1: pins. Every compaction after an entry is pinned carries its text verbatim
 * in one pinned section, which no summarizer sees and no update duplicates or drops; unpinning
 * stops it; the pin entries stay out of the model's context; the coverage check does not append
 * a pinned text a second time.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { compactSession } from "../../src/ops/compact.js";
import { pinEntry } from "../../src/ops/pin.js";
import { SessionManager } from "../../src/session/manager.js";
import { COVERAGE_HEADING } from "../../src/summarizer/coverage.js";
import { guardSummary, PINNED_HEADING } from "../../src/summarizer/summary-guard.js";
import { ROOT, runBonsai } from "../helpers/cli.js";
import { fakeSummarizer } from "../helpers/fake-summarizer.js";
import { a, messageOf, u } from "../helpers/paths.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-pins-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const PINNED = "0bd6170e"; // the rate-limiting request of the bundled example
const count = (text: string, part: string) => text.split(part).length - 1;
const latestSummary = (file: string) => {
  const messages = SessionManager.open(file, { readOnly: true }).buildSessionContext().messages;
  const first = messages[0];
  assert.equal(first.role, "compactionSummary");
  return { summary: (first as { summary: string }).summary, messages };
};

describe("pins", () => {
  it("every later compaction carries a pinned entry verbatim, once, unseen by the summarizer; unpinning stops it", async () => {
    const file = join(dir, "s.jsonl");
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), file);
    const text = (SessionManager.open(file, { readOnly: true }).getEntry(PINNED) as { message: { content: { text: string }[] } }).message.content[0].text;
    assert.equal((await pinEntry(file, PINNED)).changed, true);
    assert.equal((await pinEntry(file, PINNED)).changed, false, "pinning twice writes nothing");

    const summarizer = fakeSummarizer((r) => (r.purpose === "history" ? "## Goal\nKeep going." : "short"));
    await compactSession(file, { summarizer });
    let { summary, messages } = latestSummary(file);
    assert.equal(count(summary, PINNED_HEADING), 1);
    assert.ok(summary.includes(`_(entry ${PINNED})_\n> ${text.split("\n")[0]}`), summary);
    assert.ok(!messages.some((m) => m.role === "custom"), "the pin entries stay out of the context");
    const from = summary.indexOf(COVERAGE_HEADING);
    const coverage = from < 0 ? "" : summary.slice(from, summary.indexOf("\n## ", from + 1));
    assert.ok(!coverage.includes(text.slice(0, 60)), "the coverage check does not append the pinned text again");

    // an update two compactions later: one section, the same text; the summarizer never saw it
    const session = SessionManager.open(file);
    for (let i = 0; i < 6; i++) {
      session.appendMessage(messageOf(u(`Next step ${i}: ${"more work ".repeat(600)}`)));
      session.appendMessage(messageOf(a(`Done with step ${i}. ${"details ".repeat(600)}`)));
    }
    await session.close();
    await compactSession(file, { summarizer, keepRecentTokens: 2000 });
    ({ summary } = latestSummary(file));
    assert.equal(count(summary, PINNED_HEADING), 1);
    assert.ok(summary.includes(`_(entry ${PINNED})_`));
    for (const request of summarizer.requests) assert.ok(!request.prompt.includes(PINNED_HEADING), "no summarizer sees the pinned section");

    assert.equal((await pinEntry(file, PINNED, { unpin: true })).changed, true);
    const more = SessionManager.open(file);
    more.appendMessage(messageOf(u(`One more: ${"x ".repeat(3000)}`)));
    more.appendMessage(messageOf(a(`Fine. ${"y ".repeat(3000)}`)));
    await more.close();
    await compactSession(file, { summarizer, keepRecentTokens: 1000 });
    ({ summary } = latestSummary(file));
    assert.equal(count(summary, PINNED_HEADING), 0, "unpinned: no longer carried");
  });

  it("the coverage check counts a pinned text as present", () => {
    const conversation = "[User]: Always use tabs for indentation.\n\n[User]: Now add the uptime field.";
    const estimate = (t: string) => Math.ceil(t.length / 4);
    const guard = (pinned?: string[]) =>
      guardSummary({ summary: "## Goal\nUptime.", conversation, modifiedFiles: [], ...(pinned ? { pinned } : {}) }, { verbatimRequests: false }, estimate).coverage?.added ?? [];
    assert.ok(guard().some((item) => item.text.includes("Always use tabs")), "appended when nothing carries it");
    assert.ok(!guard(["Always use tabs for indentation."]).some((item) => item.text.includes("Always use tabs")), "not when a pin carries it");
  });

  it("bonsai pin refuses what has no text and what is not on the branch", async () => {
    const file = join(dir, "cli.jsonl");
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), file);
    const modelChange = SessionManager.open(file, { readOnly: true }).getBranch().find((e) => e.type === "model_change");
    assert.ok(modelChange);
    const refused = await runBonsai(["pin", file, modelChange.id]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is a model_change entry with no text to carry; pin a message/);
    const run = await runBonsai(["pin", file, PINNED, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { id: PINNED, pinned: true, changed: true, pinEntryId: JSON.parse(run.stdout).pinEntryId, pinnedIds: [PINNED] });
  });
});

describe("compaction.pinFirstRequest", () => {
  it("counts the first user message as pinned, unless it was unpinned", async () => {
    const { pinnedBefore } = await import("../../src/format/pins.js");
    const session = SessionManager.inMemory("/p");
    const first = session.appendMessage(messageOf(u("Build the importer; never drop a row silently.")));
    session.appendMessage(messageOf(a("Started.")));
    const path = () => session.getBranch();
    assert.deepEqual(pinnedBefore(path(), path().length), [], "off by default");
    assert.deepEqual(pinnedBefore(path(), path().length, true), [{ entryId: first, text: "Build the importer; never drop a row silently." }]);
    session.appendCustomEntry("bonsai.pin", { targetId: first, pinned: false });
    assert.deepEqual(pinnedBefore(path(), path().length, true), [], "an unpin wins over the setting");
  });
});

describe("pins and a reset boundary", () => {
  it("a pin before where the context starts (an oh-my-pi /clear) is not carried", async () => {
    const { pinnedBefore } = await import("../../src/format/pins.js");
    const session = SessionManager.inMemory("/p");
    const old = session.appendMessage(messageOf(u("Before the clear: use the old schema.")));
    session.appendCustomEntry("bonsai.pin", { targetId: old, pinned: true });
    const start = session.getBranch().length;
    session.appendMessage(messageOf(u("After the clear: a new task.")));
    const path = session.getBranch();
    assert.equal(pinnedBefore(path, path.length).length, 1);
    assert.deepEqual(pinnedBefore(path, path.length, false, start), []);
  });
});

describe("pinChange: what /pin and /unpin (chat, pi) and bonsai pin mean", () => {
  it("picks the latest user message, or for unpin the latest pinned entry, and says when nothing changes", async () => {
    const { pinChange, pinNotice } = await import("../../src/format/pins.js");
    const session = SessionManager.inMemory("/p");
    const path = () => session.getBranch();
    assert.deepEqual(pinChange(path(), undefined, false), { ok: false, message: "Nothing to pin yet: send a message first." });
    const first = session.appendMessage(messageOf(u("Keep the public API stable.")));
    const answer = session.appendMessage(messageOf(a("Understood.")));
    const second = session.appendMessage(messageOf(u("And write the changelog.")));
    assert.deepEqual(pinChange(path(), undefined, false), { ok: true, targetId: second, pinned: true, changed: true });
    assert.deepEqual(pinChange(path(), undefined, true), { ok: false, message: "Nothing is pinned on this branch." });
    session.appendCustomEntry("bonsai.pin", { targetId: first, pinned: true });
    assert.deepEqual(pinChange(path(), undefined, true), { ok: true, targetId: first, pinned: false, changed: true });
    assert.deepEqual(pinChange(path(), first.slice(0, 6), false), { ok: true, targetId: first, pinned: true, changed: false }, "a prefix names it");
    assert.deepEqual(pinChange(path(), answer, true), { ok: true, targetId: answer, pinned: false, changed: false });
    assert.deepEqual(pinChange(path(), "zzzz", false), { ok: false, message: "zzzz is not on the current branch" });
    assert.equal(pinNotice(first, true, false), `Already pinned: ${first}. Every later compaction carries it verbatim.`);
    assert.equal(pinNotice(first, false, true), `Unpinned ${first}.`);
  });
});
