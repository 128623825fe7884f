/**
 * Background summaries, free savings and truncated answers through the real agent loop: a summary
 * made ahead is used at once at the threshold (same cut, or updated with the delta only), dropped
 * when the branch changes; superseded reads leave the context before any summary and can be
 * restored; an answer cut at the output limit is continued at most three times in a row.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { type FauxResponseStep, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { TRUNCATED_CONTINUE_PROMPT } from "../../src/agent/compaction-control.js";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import { restorePrunedOutputs } from "../../src/ops/prune.js";
import type { SummarizeRequest } from "../../src/summarizer/types.js";
import { bigText, createHarness, type Harness, reply, scriptedSummarizer } from "../helpers/agent-harness.js";
import { autoEnds, autoStarts, fileTools, lookupTool, toolCallingModel } from "../helpers/agent-tools.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

const statuses = (events: AgentSessionEvent[]) =>
  events.flatMap((e) => (e.type === "background_summary" ? [e.status] : []));

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), `timed out waiting for ${what}`);
}

/** A summarizer that takes `delayMs` per history summary, abortable. */
function slowSummarizer(delayMs: number) {
  return scriptedSummarizer({
    gate: () => new Promise((resolve) => setTimeout(resolve, delayMs)),
  });
}

describe("background summaries", () => {
  async function setup(resultTokens: [number, number], summaryDelayMs: number) {
    let turn = 0;
    const first = toolCallingModel(13, "first turn done");
    const second = toolCallingModel(8, "second turn done");
    const step: FauxResponseStep = (context, options, state, model) => {
      const last = context.messages.at(-1);
      if (last?.role === "user" && JSON.stringify(last.content).includes("second")) turn = 2;
      return ((turn === 2 ? second : first) as Exclude<FauxResponseStep, { role: string }>)(context, options, state, model);
    };
    let size = resultTokens[0];
    const lookup = lookupTool(300);
    const tool = { ...lookup, execute: (id: string, params: { key: string }) => lookupTool(size).execute(id, params) };
    harness = await createHarness({
      contextWindow: 6000,
      settings: { compaction: { reserveTokens: 1000, keepRecentTokens: 800 } },
      summarizer: slowSummarizer(summaryDelayMs),
      responses: Array.from({ length: 40 }, () => step),
      session: { tools: [tool as never] },
    });
    const h = harness;
    await h.session.prompt("first: look up thirteen keys");
    assert.deepEqual(autoStarts(h.events), [], "the first turn stays under the threshold");
    assert.deepEqual(statuses(h.events), ["started"]);
    await until(() => statuses(h.events).includes("ready"), "the background summary");
    size = resultTokens[1];
    return h;
  }

  test("a ready summary is used at once when the threshold is crossed: same cut, new entries kept verbatim", async () => {
    const h = await setup([300, 300], 400);
    const requestsBefore = h.summarizer.requests.filter((r) => r.purpose === "history").length;
    let startedAt = 0;
    let took = -1;
    h.session.subscribe((e) => {
      if (e.type === "auto_compaction_start") startedAt = performance.now();
      if (e.type === "auto_compaction_end" && took < 0) took = performance.now() - startedAt;
    });
    await h.session.prompt("second: look up eight more");
    const ends = autoEnds(h.events);
    assert.ok(ends.length >= 1, "compacted in the second turn");
    assert.equal(ends[0].midTurn, true);
    assert.equal(statuses(h.events).slice(0, 3).join(","), "started,ready,used");
    assert.equal(h.summarizer.requests.filter((r) => r.purpose === "history").length, requestsBefore, "no new history summary was asked for");
    assert.ok(took >= 0 && took < 200, `the compaction took ${took.toFixed(1)} ms with a 400 ms summarizer`);
    // the kept part starts where the background summary's plan cut, before the second prompt
    const compaction = h.manager.getEntries().find((e) => e.type === "compaction") as { firstKeptEntryId: string };
    const kept = h.manager.getEntries().findIndex((e) => e.id === compaction.firstKeptEntryId);
    const secondPrompt = h.manager.getEntries().findIndex((e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes("second"));
    assert.ok(kept < secondPrompt, "the entries appended since are kept verbatim");
  });

  test("when the appended entries no longer fit the keep budget, the ready summary is updated with the delta only", async () => {
    const h = await setup([300, 1200], 10);
    const ready = h.summarizer.requests.filter((r) => r.purpose === "history").length;
    await h.session.prompt("second: look up eight more");
    assert.ok(statuses(h.events).includes("used"), "the ready summary was taken");
    const update: SummarizeRequest | undefined = h.summarizer.requests.filter((r) => r.purpose === "history")[ready];
    assert.ok(update, "one more history request: the update");
    assert.match(update.prompt, /<previous-summary>[\s\S]*Summary \d+ of \d+ chars[\s\S]*<\/previous-summary>/, "it updates the ready summary");
    assert.doesNotMatch(update.prompt, /value of k0:/, "the first turn's results, already summarized, are not sent again");
  });

  test("a background summary is dropped when the branch changes under it", async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const gated = scriptedSummarizer({ gate: () => held });
    const step = toolCallingModel(13, "done");
    harness = await createHarness({
      contextWindow: 6000,
      settings: { compaction: { reserveTokens: 1000, keepRecentTokens: 800 } },
      summarizer: gated,
      responses: Array.from({ length: 40 }, () => step),
      session: { tools: [lookupTool(300) as never] },
    });
    const h = harness;
    await h.session.prompt("look up thirteen keys");
    await until(() => gated.requests.length > 0, "the background request");
    const firstUser = h.manager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
    await h.session.navigateTree(firstUser!.id);
    await h.session.prompt("something else");
    assert.ok(statuses(h.events).includes("dropped"), "dropped");
    assert.equal(gated.requests[0].signal?.aborted, true, "its request was aborted");
    release();
  });
});

describe("free savings and truncated answers", () => {
  test("superseded reads become notices before any summary, and can be restored", async () => {
    const files = new Map([["a.ts", `export const a = 1; // ${"x".repeat(7200)}`]]);
    const script = [
      fauxToolCall("read", { path: "a.ts" }),
      fauxToolCall("read", { path: "a.ts" }),
      fauxToolCall("write", { path: "a.ts", content: `export const a = 2; // ${"y".repeat(7200)}` }),
      fauxToolCall("read", { path: "a.ts" }),
    ];
    let i = 0;
    const step: FauxResponseStep = () => (i < script.length ? fauxAssistantMessage(script[i++], { stopReason: "toolUse" }) : fauxAssistantMessage("a is 2"));
    harness = await createHarness({
      persisted: true,
      contextWindow: 6000,
      settings: { compaction: { reserveTokens: 1000, keepRecentTokens: 800, backgroundPercent: 0 } },
      responses: Array.from({ length: 8 }, () => step),
      session: { tools: fileTools(files) as never, prune: { protectTokens: 1_000_000 } },
    });
    const h = harness;
    await h.session.prompt("read a.ts, then change it");
    const pruned = h.events.find((e): e is Extract<AgentSessionEvent, { type: "session_pruned" }> => e.type === "session_pruned" && e.kind === "savings");
    assert.ok(pruned, "savings ran");
    assert.equal(pruned.superseded, 2);
    assert.deepEqual(autoStarts(h.events), [], "no summary was needed");
    const results = h.manager.getEntries().filter((e) => e.type === "message" && e.message.role === "toolResult");
    const text = (k: number) => JSON.stringify((results[k] as { message: { content: unknown } }).message.content);
    assert.match(text(0), new RegExp(`a.ts was read again later \\(entry ${results[1].id}\\)`));
    assert.match(text(1), new RegExp(`a.ts was changed later by write \\(entry ${results[2].id}\\)`));
    assert.match(text(3), /export const a = 2/);
    const restored = restorePrunedOutputs(h.manager);
    assert.deepEqual(restored.restored.sort(), [results[0].id, results[1].id].sort());
    assert.match(text(0), /export const a = 1/);
  });

  test("an answer cut at the output limit past backgroundPercent is compacted and continued, at most three times in a row", async () => {
    harness = await createHarness({
      // the kept part and a new cut answer pass backgroundPercent again after each compaction
      settings: { compaction: { keepRecentTokens: 700, backgroundPercent: 50 } },
      responses: [
        reply("one"),
        reply("two"),
        ...Array.from({ length: 6 }, (_, k) => reply(bigText(`cut ${k}`, 350), { stopReason: "length" })),
        reply("finally"),
      ],
    });
    const h = harness;
    await h.session.prompt(bigText("first", 400));
    await h.session.prompt(bigText("second", 400));
    await h.session.prompt(bigText("third", 400));
    const nudges = h.manager
      .getEntries()
      .filter((e) => e.type === "message" && e.message.role === "user" && e.message.synthetic && JSON.stringify(e.message.content).includes(TRUNCATED_CONTINUE_PROMPT));
    assert.equal(nudges.length, 3);
    assert.equal(h.faux.state.callCount, 6, "the third prompt's answer and three continuations, then it stops");
  });
});
