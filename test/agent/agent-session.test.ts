/**
 * AgentSession over the real pi-agent-core Agent and pi-ai's faux provider: persistence,
 * manual compaction (spec 12.10), threshold compaction and auto-continue, context usage,
 * prompts during compaction, abort, and the generic retry.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { afterEach, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall, Type } from "@mariozechner/pi-ai";
import { TRUNCATED_CONTINUE_PROMPT } from "../../src/agent/compaction-control.js";
import { CompactionError } from "../../src/agent/compaction-run.js";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { loadSessionFile } from "../../src/storage/load.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { bigText, createHarness, entryShape, type Harness, replies, reply, scriptedSummarizer } from "../helpers/agent-harness.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

const fileEntries = (h: Harness): SessionEntry[] => {
  const file = h.manager.getSessionFile();
  assert.ok(file);
  return loadSessionFile(file).fileEntries.slice(1) as SessionEntry[];
};
const textOf = (m: AgentMessage): string =>
  "content" in m && Array.isArray(m.content)
    ? m.content.map((b) => ("text" in b ? b.text : "")).join("")
    : "content" in m
      ? String(m.content)
      : "";

describe("persistence", () => {
  test("every message is appended as it ends, the prompt before the model answers", async () => {
    const echo = {
      name: "echo",
      label: "Echo",
      description: "echoes",
      parameters: Type.Object({ text: Type.String() }),
      execute: async (_id: string, params: { text: string }) => ({ content: [{ type: "text" as const, text: `echo: ${params.text}` }], details: {} }),
    };
    let onDiskWhenAsked: string[] = [];
    harness = await createHarness({
      persisted: true,
      session: { tools: [echo as never] },
      responses: [
        () => {
          onDiskWhenAsked = readFileSync(harness!.manager.getSessionFile()!, "utf8").trim().split("\n").map((l) => JSON.parse(l).type);
          return fauxAssistantMessage(fauxToolCall("echo", { text: "hi" }), { stopReason: "toolUse" });
        },
        reply("done"),
      ],
    });
    await harness.session.prompt("say hi");
    assert.deepEqual(onDiskWhenAsked, ["session", "message"]);
    const entries = fileEntries(harness);
    assert.deepEqual(
      entries.map((e) => (e.type === "message" ? e.message.role : e.type)),
      ["user", "assistant", "toolResult", "assistant"],
    );
    const result = entries[2];
    assert.ok(result.type === "message" && result.message.role === "toolResult");
    assert.equal(textOf(result.message), "echo: hi");
    // the agent's context is exactly what the file says
    assert.deepEqual(harness.session.messages, harness.manager.buildSessionContext().messages);
  });

  test("custom messages become custom_message entries", async () => {
    harness = await createHarness({ persisted: true, responses: [reply("first"), reply("after note")] });
    await harness.session.prompt("go");
    harness.session.followUp({ role: "custom", customType: "note", content: "a note", display: true, timestamp: Date.now() });
    await harness.session.prompt("and now");
    const custom = fileEntries(harness).find((e) => e.type === "custom_message");
    assert.ok(custom && custom.type === "custom_message");
    assert.equal(custom.customType, "note");
    assert.equal(custom.content, "a note");
  });

  test("a prompt while the model answers throws; steer and followUp are the way in", async () => {
    harness = await createHarness({ tokensPerSecond: 200, responses: [reply("slow ".repeat(40))] });
    const running = harness.session.prompt("start");
    await new Promise((r) => setTimeout(r, 30));
    await assert.rejects(harness.session.prompt("again"), /already answering/);
    await running;
    assert.deepEqual(entryShape(harness.manager), ["user", "assistant"]);
  });
});

describe("manual compaction (spec 12.10, keepRecentTokens 1)", () => {
  const settings = { compaction: { keepRecentTokens: 1 } };

  test("summarizes, keeps the session usable, stores exactly one entry, and emits no auto events", async () => {
    harness = await createHarness({ persisted: true, settings, responses: replies(3) });
    await harness.session.prompt("What is 2+2?");
    await harness.session.prompt("And 3+3?");
    const messageEnds = harness.events.filter((e) => e.type === "message_end").length;
    const result = await harness.session.compact();
    assert.match(result.summary, /^Summary 1 of \d+ chars/);
    assert.ok(result.tokensBefore > 0);
    assert.equal(harness.session.messages[0].role, "compactionSummary");

    await harness.session.prompt("And 4+4?");
    const last = harness.session.messages.at(-1);
    assert.equal(last?.role, "assistant");
    assert.equal(textOf(last as AgentMessage), "answer 2");

    const compactions = fileEntries(harness).filter((e) => e.type === "compaction");
    assert.equal(compactions.length, 1);
    assert.ok(compactions[0].type === "compaction");
    assert.equal(typeof compactions[0].firstKeptEntryId, "string");
    assert.ok(compactions[0].tokensBefore > 0);
    assert.deepEqual(harness.autoEvents(), []);
    assert.ok(harness.events.filter((e) => e.type === "message_end").length > messageEnds);
  });

  test("works in memory", async () => {
    harness = await createHarness({ settings, responses: replies(2) });
    await harness.session.prompt("one");
    await harness.session.prompt("two");
    const result = await harness.session.compact("focus on numbers");
    assert.equal(harness.manager.getSessionFile(), undefined);
    assert.equal(harness.manager.getLeafEntry()?.type, "compaction");
    assert.equal(result.firstKeptEntryId, (harness.manager.getLeafEntry() as { firstKeptEntryId: string }).firstKeptEntryId);
    const history = harness.summarizer.requests.find((r) => r.purpose === "history");
    assert.match(history?.prompt ?? "", /focus on numbers/);
  });

  test("typed errors: already compacted, nothing to compact", async () => {
    harness = await createHarness({ settings, responses: replies(2) });
    await assert.rejects(harness.session.compact(), (e: unknown) => e instanceof CompactionError && e.code === "nothing-to-compact");
    await harness.session.prompt("one");
    await harness.session.prompt("two");
    await harness.session.compact();
    await assert.rejects(
      harness.session.compact(),
      (e: unknown) => e instanceof CompactionError && e.code === "already-compacted" && e.message === "Already compacted",
    );
  });

  test("aborts the running answer first; the partial answer is kept in the file", async () => {
    harness = await createHarness({ settings, tokensPerSecond: 100, responses: [reply("one"), reply("long ".repeat(200))] });
    await harness.session.prompt("first");
    const running = harness.session.prompt("second");
    await new Promise((r) => setTimeout(r, 60));
    const result = await harness.session.compact();
    await running;
    assert.ok(result.summary.length > 0);
    const aborted = harness.manager.getEntries().find((e) => e.type === "message" && e.message.role === "assistant" && e.message.stopReason === "aborted");
    assert.ok(aborted, "the aborted answer was persisted");
    assert.equal(harness.manager.getLeafEntry()?.type, "compaction");
  });

  test("abortCompaction cancels a manual compaction", async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    harness = await createHarness({ settings, responses: replies(2), summarizer: scriptedSummarizer({ gate: () => held }) });
    await harness.session.prompt("one");
    await harness.session.prompt("two");
    const compaction = harness.session.compact();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(harness.session.isCompacting, true);
    harness.session.abortCompaction();
    await assert.rejects(compaction, (e: unknown) => e instanceof CompactionError && e.code === "cancelled" && e.message === "Compaction cancelled");
    release();
    assert.equal(harness.session.isCompacting, false);
    assert.equal(harness.manager.getEntries().some((e) => e.type === "compaction"), false);
  });
});

describe("threshold compaction", () => {
  // window 2000, reserve 500: a context over 1500 tokens compacts
  const ask = (h: Harness, i: number) => h.session.prompt(bigText(`question ${i}`, 400));

  test("compacts after the turn that crosses the threshold, once, without nudging a finished turn", async () => {
    harness = await createHarness({ responses: replies(6) });
    for (let i = 0; i < 3; i++) await ask(harness, i);
    assert.deepEqual(harness.autoEvents(), []);
    await ask(harness, 3);
    const auto = harness.autoEvents();
    assert.equal(auto.length, 2);
    assert.deepEqual(auto[0], { type: "auto_compaction_start", reason: "threshold" });
    const end = auto[1] as Extract<AgentSessionEvent, { type: "auto_compaction_end" }>;
    assert.equal(end.reason, "threshold");
    assert.equal(end.willRetry, false);
    assert.equal(end.aborted, false);
    assert.equal(end.result?.firstKeptEntryId, (harness.manager.getLeafEntry() as { firstKeptEntryId: string }).firstKeptEntryId);
    assert.equal(harness.session.messages[0].role, "compactionSummary");
    // the turn ended with a final answer: no synthetic prompt
    assert.equal(harness.faux.state.callCount, 4);
    assert.equal(harness.manager.getEntries().filter((e) => e.type === "message" && e.message.role === "user").length, 4);
  });

  test("a turn cut off at the token limit past backgroundPercent is compacted and continued with the synthetic prompt", async () => {
    harness = await createHarness({
      responses: [...replies(3), reply("partial", { stopReason: "length" }), reply("finished"), ...replies(2)],
    });
    for (let i = 0; i < 4; i++) await ask(harness, i);
    const synthetic = harness.manager
      .getEntries()
      .filter((e) => e.type === "message" && e.message.role === "user" && e.message.synthetic === true);
    assert.equal(synthetic.length, 1);
    assert.ok(synthetic[0].type === "message");
    assert.equal(textOf(synthetic[0].message), TRUNCATED_CONTINUE_PROMPT);
    assert.equal(textOf(harness.session.messages.at(-1) as AgentMessage), "finished");
    assert.equal(harness.faux.state.callCount, 5);
  });

  test("never loops: a nudged turn that fills the context again is not nudged again", async () => {
    harness = await createHarness({
      settings: { compaction: { keepRecentTokens: 1 } },
      responses: [...replies(3), reply("cut", { stopReason: "length" }), reply(bigText("cut again", 1700), { stopReason: "length" }), ...replies(3)],
    });
    for (let i = 0; i < 4; i++) await ask(harness, i);
    const starts = harness.autoEvents().filter((e) => e.type === "auto_compaction_start").length;
    assert.equal(starts, 2, "the nudged turn crossed the threshold again and compacted");
    const nudges = harness.manager.getEntries().filter((e) => e.type === "message" && e.message.role === "user" && e.message.synthetic);
    assert.equal(nudges.length, 1);
    assert.equal(harness.faux.state.callCount, 5);
  });

  test("autoContinue false: no synthetic prompt", async () => {
    harness = await createHarness({
      settings: { compaction: { autoContinue: false } },
      responses: [...replies(3), reply("partial", { stopReason: "length" }), ...replies(2)],
    });
    for (let i = 0; i < 4; i++) await ask(harness, i);
    assert.equal(harness.autoEvents().length, 2);
    assert.equal(harness.faux.state.callCount, 4);
  });

  test("an unknown context window (0) never compacts by threshold", async () => {
    harness = await createHarness({ contextWindow: 0, responses: replies(5) });
    for (let i = 0; i < 5; i++) await ask(harness, i);
    assert.deepEqual(harness.autoEvents(), []);
  });

  test("compaction.enabled false: never compacts", async () => {
    harness = await createHarness({ settings: { compaction: { enabled: false } }, responses: replies(5) });
    for (let i = 0; i < 5; i++) await ask(harness, i);
    assert.deepEqual(harness.autoEvents(), []);
  });

  test("getContextUsage: tokens and percent, then null after a compaction until a fresh answer", async () => {
    harness = await createHarness({ responses: replies(6) });
    await ask(harness, 0);
    const first = harness.session.getContextUsage();
    const lastAnswer = harness.session.messages.at(-1) as { usage: { totalTokens: number } };
    assert.deepEqual(first, { tokens: lastAnswer.usage.totalTokens, contextWindow: 2000, percent: (lastAnswer.usage.totalTokens / 2000) * 100 });
    for (let i = 1; i < 4; i++) await ask(harness, i);
    assert.equal(harness.manager.getLeafEntry()?.type, "compaction");
    assert.deepEqual(harness.session.getContextUsage(), { tokens: null, contextWindow: 2000, percent: null });
    await ask(harness, 4);
    const after = harness.session.getContextUsage();
    assert.ok(after && typeof after.tokens === "number" && after.tokens > 0 && after.tokens < 1500);
  });

  test("a prompt sent during a compaction waits for it and lands after the compaction entry", async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    harness = await createHarness({ responses: replies(6), summarizer: scriptedSummarizer({ gate: () => held }) });
    for (let i = 0; i < 3; i++) await ask(harness, i);
    const crossing = ask(harness, 3);
    while (!harness.session.isCompacting) await new Promise((r) => setTimeout(r, 2));
    let waitingDone = false;
    const waiting = harness.session.prompt("sent during compaction").then(() => {
      waitingDone = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(waitingDone, false);
    assert.equal(harness.faux.state.callCount, 4, "the waiting prompt has not reached the model");
    release();
    await Promise.all([crossing, waiting]);
    const shape = entryShape(harness.manager);
    const compactionAt = shape.indexOf("compaction");
    const promptAt = harness.manager
      .getEntries()
      .findIndex((e) => e.type === "message" && e.message.role === "user" && textOf(e.message) === "sent during compaction");
    assert.ok(compactionAt >= 0 && promptAt > compactionAt);
  });

  test("abortCompaction during an automatic compaction: end event aborted, nothing stored", async () => {
    harness = await createHarness({ responses: replies(6), summarizer: scriptedSummarizer({ gate: () => new Promise(() => {}) }) });
    for (let i = 0; i < 3; i++) await ask(harness, i);
    const crossing = ask(harness, 3);
    while (!harness.session.isCompacting) await new Promise((r) => setTimeout(r, 2));
    harness.session.abortCompaction();
    await crossing;
    const end = harness.autoEvents().at(-1);
    assert.deepEqual(end, { type: "auto_compaction_end", reason: "threshold", aborted: true, willRetry: false });
    assert.equal(harness.manager.getEntries().some((e) => e.type === "compaction"), false);
    assert.equal(harness.session.isCompacting, false);
  });
});

describe("generic retry", () => {
  test("a transient error is retried after a backoff and succeeds", async () => {
    harness = await createHarness({
      settings: { retry: { baseDelayMs: 5 } },
      responses: [reply("", { stopReason: "error", errorMessage: "503 Service Unavailable" }), reply("recovered")],
    });
    await harness.session.prompt("hello");
    assert.deepEqual(
      harness.events.filter((e) => e.type.startsWith("auto_retry")),
      [
        { type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 5, errorMessage: "503 Service Unavailable" },
        { type: "auto_retry_end", success: true, attempt: 1 },
      ],
    );
    assert.deepEqual(entryShape(harness.manager), ["user", "assistant", "assistant"]);
    assert.equal(harness.session.messages.length, 2, "the error answer left the context but stays in the file");
  });

  test("exhausted retries end with the final error; retry-after hints set the delay", async () => {
    const error = () => reply("", { stopReason: "error", errorMessage: "429 rate limit (retry-after-ms: 12)" });
    harness = await createHarness({ settings: { retry: { baseDelayMs: 1, maxRetries: 2 } }, responses: [error(), error(), error()] });
    await harness.session.prompt("hello");
    const retries = harness.events.filter((e) => e.type.startsWith("auto_retry"));
    assert.deepEqual(
      retries.map((e) => (e.type === "auto_retry_start" ? `start ${e.attempt} ${e.delayMs}` : JSON.stringify(e))),
      ["start 1 12", "start 2 12", JSON.stringify({ type: "auto_retry_end", success: false, attempt: 2, finalError: "429 rate limit (retry-after-ms: 12)" })],
    );
    assert.equal(harness.faux.state.callCount, 3);
  });

  test("abortRetry during the wait ends with Retry cancelled", async () => {
    harness = await createHarness({
      settings: { retry: { baseDelayMs: 10_000 } },
      responses: [reply("", { stopReason: "error", errorMessage: "overloaded" }), reply("never")],
    });
    const running = harness.session.prompt("hello");
    while (!harness.events.some((e) => e.type === "auto_retry_start")) await new Promise((r) => setTimeout(r, 2));
    const started = Date.now();
    harness.session.abortRetry();
    await running;
    assert.ok(Date.now() - started < 1000);
    assert.deepEqual(harness.events.filter((e) => e.type === "auto_retry_end"), [
      { type: "auto_retry_end", success: false, attempt: 1, finalError: "Retry cancelled" },
    ]);
    assert.equal(harness.faux.state.callCount, 1);
  });

  test("retry disabled: the error stands", async () => {
    harness = await createHarness({ settings: { retry: { enabled: false } }, responses: [reply("", { stopReason: "error", errorMessage: "503" })] });
    await harness.session.prompt("hello");
    assert.equal(harness.events.some((e) => e.type === "auto_retry_start"), false);
    assert.equal(harness.faux.state.callCount, 1);
  });

  test("abort() stops a streaming answer; an aborted answer never compacts", async () => {
    harness = await createHarness({ tokensPerSecond: 100, responses: [...replies(3), reply(bigText("long", 2000))] });
    for (let i = 0; i < 3; i++) await harness.session.prompt(bigText(`q${i}`, 400));
    const running = harness.session.prompt(bigText("q3", 400));
    await new Promise((r) => setTimeout(r, 50));
    await harness.session.abort();
    await running;
    const last = harness.manager.getLeafEntry();
    assert.ok(last?.type === "message" && last.message.role === "assistant" && last.message.stopReason === "aborted");
    assert.deepEqual(harness.autoEvents(), []);
  });
});
