/**
 * Compaction inside a turn, through the real pi-agent-core loop with a scripted model: a turn of
 * 40 tool calls crosses the threshold several times and goes on compacted, without a synthetic
 * prompt; the guards (no growth, breaker) and the fallback chain to the extractive summary.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { bigText, createHarness, type Harness, replies, scriptedSummarizer } from "../helpers/agent-harness.js";
import { autoEnds, autoStarts, lookupTool, toolCallingModel } from "../helpers/agent-tools.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

const WINDOW = 6000;

function producedMessages(h: Harness): AgentMessage[] {
  const produced: AgentMessage[] = [];
  h.session.subscribe((event) => {
    if (event.type === "message_end") produced.push(event.message as AgentMessage);
  });
  return produced;
}

const requestTokens = (messages: AgentMessage[]) =>
  messages.flatMap((m) => (m.role === "assistant" && m.stopReason !== "error" ? [(m.usage?.input ?? 0) + (m.usage?.cacheRead ?? 0)] : []));

describe("mid-turn compaction", () => {
  test("a turn of 40 tool calls crosses the threshold and goes on compacted, with no synthetic prompt", async () => {
    const step = toolCallingModel(40, "all forty looked up");
    harness = await createHarness({
      contextWindow: WINDOW,
      settings: { compaction: { reserveTokens: 1000, keepRecentTokens: 800, backgroundPercent: 0 } },
      responses: Array.from({ length: 60 }, () => step),
      session: { tools: [lookupTool(300) as never] },
    });
    const h = harness;
    const produced = producedMessages(h);
    const hookPayloads: { reason: string; midTurn?: boolean }[] = [];
    h.session.on("session_before_compact", (event) => {
      hookPayloads.push({ reason: event.reason, midTurn: event.midTurn });
    });

    await h.session.prompt("look up forty keys");

    const starts = autoStarts(h.events);
    assert.ok(starts.length >= 2, `compacted ${starts.length} times inside the turn`);
    assert.ok(starts.every((s) => s.reason === "threshold" && s.midTurn === true), "assertion");
    assert.ok(autoEnds(h.events).every((e) => e.midTurn === true && !e.errorMessage && e.method === "model"), "assertion");
    assert.ok(hookPayloads.length === starts.length && hookPayloads.every((p) => p.reason === "threshold" && p.midTurn === true), "assertion");
    // one prompt, one turn: 40 tool calls and the final answer, no synthetic continue
    assert.equal(h.faux.state.callCount, 41);
    const entries = h.manager.getEntries();
    assert.equal(entries.filter((e) => e.type === "message" && e.message.role === "user").length, 1);
    assert.equal(entries.filter((e) => e.type === "message" && e.message.role === "toolResult").length, 40);
    assert.equal((h.session.messages.at(-1) as { content: { text: string }[] }).content[0].text, "all forty looked up");
    // never a request over the window, and every cut at a safe point
    const sizes = requestTokens(produced);
    assert.equal(sizes.length, 41);
    assert.ok(Math.max(...sizes) <= WINDOW, `largest request ${Math.max(...sizes)} tokens`);
    for (const compaction of entries.filter((e) => e.type === "compaction")) {
      const kept = h.manager.getEntry((compaction as { firstKeptEntryId: string }).firstKeptEntryId);
      assert.ok(kept?.type === "message" && kept.message.role !== "toolResult", "a cut never separates a tool call from its result");
    }
    // the model always saw its latest tool result right after the call that asked for it
    assert.ok(h.session.messages.some((m) => m.role === "compactionSummary"), "assertion");
  });

  test("midTurn false: the turn runs on uncompacted and compacts after it ends", async () => {
    const step = toolCallingModel(17);
    harness = await createHarness({
      contextWindow: WINDOW,
      settings: { compaction: { reserveTokens: 1000, keepRecentTokens: 800, backgroundPercent: 0, midTurn: false } },
      responses: Array.from({ length: 25 }, () => step),
      session: { tools: [lookupTool(300) as never] },
    });
    await harness.session.prompt("look up seventeen keys");
    const starts = autoStarts(harness.events);
    assert.equal(starts.length, 1, "one compaction, after the turn");
    assert.equal(starts[0].midTurn, undefined);
    assert.equal(harness.faux.state.callCount, 18);
  });
});

describe("the fallback chain and the guards", () => {
  const crossing = async (h: Harness, turns: number) => {
    for (let i = 0; i < turns; i++) await h.session.prompt(bigText(`question ${i} with some detail`, 400));
  };

  test("a summarizer that fails every time: the extractive summary rescues the overflow", async () => {
    const failing = scriptedSummarizer({ fail: () => new Error("500 the summarizer is down") });
    harness = await createHarness({
      contextWindow: 4000,
      settings: { compaction: { reserveTokens: 500, keepRecentTokens: 300, backgroundPercent: 0 }, retry: { maxRetries: 0 } },
      summarizer: failing,
      responses: [
        ...replies(2),
        fauxAssistantMessage("", { stopReason: "error", errorMessage: "prompt is too long: 5210 tokens > 4000 maximum" }),
        ...replies(3, (i) => `recovered ${i}`),
      ],
    });
    await crossing(harness, 3);
    const ends = autoEnds(harness.events);
    assert.equal(ends.length, 1);
    assert.equal(ends[0].reason, "overflow");
    assert.equal(ends[0].method, "extractive");
    assert.equal(ends[0].willRetry, true);
    assert.equal((ends[0].result?.details as { method?: string } | undefined)?.method, "extractive");
    const entry = harness.manager.getEntries().find((e) => e.type === "compaction");
    assert.equal((entry as { details: { method: string } }).details.method, "extractive");
    assert.match((entry as { summary: string }).summary, /extractive summary/);
    assert.equal((harness.session.messages.at(-1) as { content: { text: string }[] }).content[0].text, "recovered 0");
  });

  test("a summary larger than what it replaces is discarded and the next method runs", async () => {
    const growing = scriptedSummarizer();
    const original = growing.summarize;
    growing.summarize = async (request) => (request.purpose === "history" ? { text: "padding ".repeat(4000) } : original(request));
    harness = await createHarness({ summarizer: growing, settings: { compaction: { backgroundPercent: 0 } }, responses: replies(6) });
    await crossing(harness, 4);
    const warnings = harness.events.filter((e) => e.type === "warning").map((e) => (e as { message: string }).message);
    assert.ok(warnings.some((w) => /scripted \(model\) is larger than the messages it replaces; discarded/.test(w)), "assertion");
    const end = autoEnds(harness.events)[0];
    assert.equal(end.method, "extractive");
    assert.doesNotMatch(end.result?.summary ?? "", /padding padding/);
  });

  test("three failed automatic compactions pause them until a manual compaction succeeds", async () => {
    let failing = true;
    const summarizer = scriptedSummarizer({ fail: () => (failing ? new Error("401 invalid api key") : undefined) });
    harness = await createHarness({
      summarizer,
      settings: { compaction: { backgroundPercent: 0, methods: ["model"] } },
      responses: replies(12),
    });
    const h = harness;
    await crossing(h, 5);
    const requestsAtPause = summarizer.requests.length;
    await crossing(h, 2);
    const ends = autoEnds(h.events);
    const attempts = ends.filter((e) => /Summarization failed: 401/.test(e.errorMessage ?? ""));
    assert.equal(attempts.length, 3, "three attempts, then none while paused");
    // an overflow while paused is reported, not attempted
    assert.ok(ends.slice(3).every((e) => /paused after 3 failed compactions/.test(e.errorMessage ?? "")), "paused overflow reports");
    assert.equal(summarizer.requests.length, requestsAtPause, "the summarizer is not called while paused");
    const paused = h.events.filter((e): e is Extract<AgentSessionEvent, { type: "auto_compaction_paused" }> => e.type === "auto_compaction_paused");
    assert.equal(paused.length, 1);
    assert.equal(paused[0].failures, 3);
    assert.match(paused[0].message, /paused after 3 failed compactions in a row/);
    assert.equal(h.session.isAutoCompactionPaused, true);

    failing = false;
    await h.session.compact();
    assert.equal(h.session.isAutoCompactionPaused, false);
    const before = autoEnds(h.events).length;
    await crossing(h, 4);
    const after = autoEnds(h.events).slice(before);
    assert.ok(after.length >= 1 && after.every((e) => !e.errorMessage), "automatic compaction is back");
  });
});
