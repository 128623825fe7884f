/**
 * Spec 12.8 (queued messages delivered after an automatic compaction) and PI's five additions:
 * overflow recovery once per turn, stale usage after a compaction, thresholds for failed
 * requests.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import { bigText, createHarness, entryShape, type Harness, replies, reply } from "../helpers/agent-harness.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

const starts = (h: Harness) => h.events.filter((e) => e.type === "auto_compaction_start");
const ends = (h: Harness) =>
  h.events.filter((e): e is Extract<AgentSessionEvent, { type: "auto_compaction_end" }> => e.type === "auto_compaction_end");
const compactionEntries = (h: Harness) => h.manager.getEntries().filter((e) => e.type === "compaction");

describe("queued messages after an automatic compaction (spec 12.8)", () => {
  test("a follow-up queued during the compaction is delivered by exactly one continue()", async () => {
    harness = await createHarness({ settings: { compaction: { autoContinue: false } }, responses: [reply("big answer"), reply("saw the note")] });
    const seedId = harness.manager.appendMessage({ role: "user", content: "seeded", timestamp: Date.now() });
    const h = harness;
    h.session.on("session_before_compact", ({ branchEntries }) => {
      assert.equal(branchEntries[0].id, seedId);
      h.session.followUp({ role: "custom", customType: "reminder", content: "queued note", display: true, timestamp: Date.now() });
      // keep only the answer, so the context really shrinks
      return { compaction: { summary: "canned summary", firstKeptEntryId: branchEntries.at(-1)!.id, tokensBefore: 1910 } };
    });
    let continues = 0;
    const original = h.session.agent.continue.bind(h.session.agent);
    h.session.agent.continue = () => {
      continues++;
      return original();
    };
    await h.session.prompt(bigText("huge", 1600));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(continues, 1);
    assert.equal(h.faux.state.callCount, 2);
    assert.deepEqual(ends(h).map((e) => [e.reason, e.result?.summary, e.willRetry]), [["threshold", "canned summary", false]]);
    assert.deepEqual(entryShape(h.manager), ["user", "user", "assistant", "compaction", "custom_message", "assistant"]);
  });
});

describe("PI additions", () => {
  test("a second overflow in the same turn does not compact again and reports the failure", async () => {
    const overflow = () => reply("", { stopReason: "error", errorMessage: "prompt is too long: 2100 tokens > 2000 maximum" });
    harness = await createHarness({ settings: { compaction: { keepRecentTokens: 1 } }, responses: [...replies(2), overflow(), overflow(), reply("ok")] });
    await harness.session.prompt("one");
    await harness.session.prompt("two");
    await harness.session.prompt("three");
    assert.equal(compactionEntries(harness).length, 1);
    assert.deepEqual(
      ends(harness).map((e) => [e.reason, e.willRetry, e.errorMessage?.split(":")[0] ?? "ok"]),
      [
        ["overflow", true, "ok"],
        ["overflow", false, "Context overflow recovery failed"],
      ],
    );
    assert.equal(harness.events.some((e) => e.type === "auto_retry_start"), false, "overflows are not retried");
    // a new user turn gets its own recovery
    await harness.session.prompt("four");
    assert.equal(harness.faux.state.callCount, 5);
  });

  test("a stale pre-compaction assistant is ignored by the check before a prompt", async () => {
    harness = await createHarness({ settings: { compaction: { keepRecentTokens: 450 } }, responses: replies(6) });
    for (let i = 0; i < 3; i++) await harness.session.prompt(bigText(`q${i}`, 520));
    assert.equal(starts(harness).length, 1);
    const kept = harness.session.messages.filter((m) => m.role === "assistant");
    assert.equal(kept.length, 1, "the crossing answer was kept");
    await harness.session.prompt("small follow-up");
    assert.equal(starts(harness).length, 1);
    assert.equal(compactionEntries(harness).length, 1);
  });

  test("a failed request compacts by threshold from the last good usage plus what came after", async () => {
    harness = await createHarness({
      settings: { retry: { enabled: false } },
      responses: [...replies(3), reply("", { stopReason: "error", errorMessage: "400 invalid tool schema" }), ...replies(2)],
    });
    for (let i = 0; i < 3; i++) await harness.session.prompt(bigText(`q${i}`, 400));
    assert.equal(starts(harness).length, 0);
    await harness.session.prompt(bigText("q3", 400));
    assert.deepEqual(
      starts(harness).map((e) => (e as { reason: string }).reason),
      ["threshold"],
    );
    assert.equal(compactionEntries(harness).length, 1);
  });

  test("a failed request with no usage before it does not compact", async () => {
    harness = await createHarness({
      settings: { retry: { enabled: false } },
      responses: [reply("", { stopReason: "error", errorMessage: "400 invalid tool schema" })],
    });
    await harness.session.prompt(bigText("first", 1900));
    assert.deepEqual(harness.autoEvents(), []);
  });

  test("a failed request whose only usage was kept from before the compaction does not compact", async () => {
    harness = await createHarness({
      settings: { retry: { enabled: false }, compaction: { keepRecentTokens: 450 } },
      responses: [...replies(2), reply("", { stopReason: "error", errorMessage: "400 invalid tool schema" })],
    });
    await harness.session.prompt(bigText("q0", 700));
    await harness.session.prompt(bigText("q1", 700));
    await harness.session.compact();
    assert.equal(harness.session.messages.filter((m) => m.role === "assistant").length, 1);
    await harness.session.prompt(bigText("q2", 300));
    assert.deepEqual(harness.autoEvents(), []);
    assert.equal(compactionEntries(harness).length, 1);
  });
});
