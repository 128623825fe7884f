/**
 * Summarizer candidates for compaction (decision 11) through the real pi-ai summarizer over
 * faux models: the current model first, fallback on failures, retries with backoff that honour
 * retry-after, moving on when the wait is over 30 s, skipping models too small for the input,
 * and abort during a backoff wait.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, test } from "node:test";
import { type FauxResponseStep, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { CompactionError } from "../../src/agent/compaction-run.js";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import { bigText, createHarness, type Harness } from "../helpers/agent-harness.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

type Behaviour = (call: number) => { text?: string; error?: string };

/**
 * One responder for everything: agent turns (recognised by the agent's system prompt) get
 * "answer N"; summarizer calls go to `behaviour[model id]`, which sees how often that model
 * was asked.
 */
function router(behaviour: Record<string, Behaviour>, calls: string[]): FauxResponseStep[] {
  let answers = 0;
  const perModel = new Map<string, number>();
  const step: FauxResponseStep = (context, _options, _state, model) => {
    if (context.systemPrompt === "You are terse.") return fauxAssistantMessage(`answer ${answers++}`);
    const n = perModel.get(model.id) ?? 0;
    perModel.set(model.id, n + 1);
    calls.push(`${model.id}#${n}`);
    const outcome = behaviour[model.id]?.(n) ?? { error: `no behaviour for ${model.id}` };
    if (outcome.error) return fauxAssistantMessage("", { stopReason: "error", errorMessage: outcome.error });
    return fauxAssistantMessage(outcome.text ?? `summary by ${model.id}`);
  };
  return Array.from({ length: 60 }, () => step);
}

async function setup(
  behaviour: Record<string, Behaviour>,
  models: string[] = ["faux/backup"],
  retry = { baseDelayMs: 1 },
  extra: { model?: string; methods?: ("remote" | "model" | "extractive")[] } = {},
) {
  const calls: string[] = [];
  harness = await createHarness({
    models: [
      { id: "main", contextWindow: 8000 },
      { id: "backup", contextWindow: 100_000 },
      { id: "tiny", contextWindow: 500 },
    ],
    settings: { compaction: { keepRecentTokens: 100, models, ...extra }, retry },
    responses: router(behaviour, calls),
    session: { summarizer: undefined },
  });
  const h = harness;
  // a clean cut before the second question: history and short summary, no turn prefix
  await h.session.prompt(bigText("first question", 200));
  await h.session.prompt(bigText("second question", 200));
  return { h, calls };
}

const retryEvents = (h: Harness) =>
  h.events.filter((e): e is Extract<AgentSessionEvent, { type: "compaction_retry" }> => e.type === "compaction_retry");

describe("compaction candidates", () => {
  test("the current model summarizes first", async () => {
    const { h, calls } = await setup({ main: () => ({ text: "main summary" }), backup: () => ({ text: "backup summary" }) });
    const result = await h.session.compact();
    assert.match(result.summary, /^main summary/);
    assert.deepEqual(calls, ["main#0", "main#1"], "history and short summary, both by the current model");
    assert.equal(result.shortSummary, "main summary");
  });

  test("a non-transient failure moves to the next candidate at once", async () => {
    const { h, calls } = await setup({ main: () => ({ error: "401 invalid api key" }), backup: () => ({ text: "backup summary" }) });
    const result = await h.session.compact();
    assert.match(result.summary, /^backup summary/);
    assert.deepEqual(calls, ["main#0", "backup#0", "backup#1"]);
    assert.deepEqual(
      retryEvents(h).map((e) => [e.summarizer, e.action]),
      [["faux/main", "next-candidate"]],
    );
  });

  test("a transient failure is retried on the same model after the retry-after wait", async () => {
    const { h, calls } = await setup({
      main: (n) => (n === 0 ? { error: "429 rate limit reached (retry-after-ms: 40)" } : { text: "main after wait" }),
      backup: () => ({ text: "backup summary" }),
    });
    const started = Date.now();
    const result = await h.session.compact();
    assert.ok(Date.now() - started >= 35, "waited for the hint");
    assert.match(result.summary, /^main after wait/);
    assert.deepEqual(calls, ["main#0", "main#1", "main#2"]);
    assert.deepEqual(
      retryEvents(h).map((e) => [e.action, e.delayMs]),
      [["retry", 40]],
    );
  });

  test("transient failures back off exponentially until retries run out, then fall back", async () => {
    const { h, calls } = await setup(
      { main: () => ({ error: "503 service unavailable" }), backup: () => ({ text: "backup summary" }) },
      ["faux/backup"],
      { baseDelayMs: 5, maxRetries: 2 } as never,
    );
    const result = await h.session.compact();
    assert.match(result.summary, /^backup summary/);
    assert.deepEqual(calls.slice(0, 4), ["main#0", "main#1", "main#2", "backup#0"]);
    assert.deepEqual(
      retryEvents(h).map((e) => [e.action, e.delayMs ?? null]),
      [
        ["retry", 5],
        ["retry", 10],
        ["next-candidate", null],
      ],
    );
  });

  test("a wait over 30 s moves to the next candidate instead of waiting", async () => {
    const { h, calls } = await setup({
      main: () => ({ error: "429 Too Many Requests (retry-after: 45)" }),
      backup: () => ({ text: "backup summary" }),
    });
    const started = Date.now();
    const result = await h.session.compact();
    assert.ok(Date.now() - started < 2000);
    assert.match(result.summary, /^backup summary/);
    assert.deepEqual(calls.slice(0, 2), ["main#0", "backup#0"]);
  });

  test("models whose window cannot hold the input are skipped", async () => {
    const { h, calls } = await setup({ main: () => ({ error: "401 invalid api key" }), tiny: () => ({ text: "tiny" }), backup: () => ({ text: "backup summary" }) }, [
      "faux/tiny",
      "faux/backup",
      "faux/main",
      "faux/unknown",
    ]);
    const result = await h.session.compact();
    assert.match(result.summary, /^backup summary/);
    assert.equal(calls.some((c) => c.startsWith("tiny")), false);
    const warnings = h.events.filter((e) => e.type === "warning").map((e) => (e as { message: string }).message);
    assert.ok(warnings.some((w) => /faux\/tiny skipped: context window 500 cannot hold \d+ tokens/.test(w)));
    assert.ok(warnings.some((w) => /faux\/unknown skipped: unknown model/.test(w)));
  });

  test("without the extractive method, when every candidate fails, manual compaction throws the last error", async () => {
    const { h } = await setup({ main: () => ({ error: "401 invalid api key" }), backup: () => ({ error: "403 forbidden" }) }, ["faux/backup"], { baseDelayMs: 1 }, { methods: ["remote", "model"] });
    await assert.rejects(
      h.session.compact(),
      (e: unknown) => e instanceof CompactionError && e.code === "failed" && /faux\/backup: 403 forbidden/.test(e.message),
    );
    assert.equal(h.manager.getEntries().some((e) => e.type === "compaction"), false);
  });

  test("when every candidate fails, the extractive method makes the summary, and says so", async () => {
    const { h } = await setup({ main: () => ({ error: "401 invalid api key" }), backup: () => ({ error: "403 forbidden" }) });
    const result = await h.session.compact();
    assert.match(result.summary, /extractive summary/);
    const entry = h.manager.getEntries().find((e) => e.type === "compaction");
    assert.equal((entry?.type === "compaction" && (entry.details as { method?: string }).method) || undefined, "extractive");
  });

  test("compaction.model is tried first, then the current model", async () => {
    const { h, calls } = await setup({ backup: () => ({ error: "403 forbidden" }), main: () => ({ text: "main summary" }) }, [], { baseDelayMs: 1 }, { model: "faux/backup" });
    const result = await h.session.compact();
    assert.match(result.summary, /^main summary/);
    assert.deepEqual(calls.slice(0, 2), ["backup#0", "main#0"]);
  });

  test("without the extractive method, when every candidate fails, automatic compaction ends with Auto-compaction failed", async () => {
    const calls: string[] = [];
    harness = await createHarness({
      models: [{ id: "main", contextWindow: 8000 }],
      settings: { compaction: { keepRecentTokens: 1, methods: ["model"] } },
      responses: router({ main: () => ({ error: "401 invalid api key" }) }, calls),
      session: { summarizer: undefined },
    });
    for (let i = 0; i < 4; i++) await harness.session.prompt(`q${i} ${"y".repeat(7600)}`);
    const end = harness.events.find((e) => e.type === "auto_compaction_end") as Extract<AgentSessionEvent, { type: "auto_compaction_end" }>;
    assert.equal(end.reason, "threshold");
    // The cut splits the last turn: both spans fail with one error, said once, never one span at random.
    assert.equal(end.errorMessage, "Auto-compaction failed: Summarization failed (history and turn prefix): faux/main: 401 invalid api key");
    assert.equal(harness.manager.getEntries().some((e) => e.type === "compaction"), false);
  });

  test("abortCompaction during a backoff wait cancels at once", async () => {
    const { h } = await setup({ main: () => ({ error: "429 slow down (retry-after-ms: 20000)" }) }, []);
    const compaction = h.session.compact();
    while (retryEvents(h).length === 0) await new Promise((r) => setTimeout(r, 2));
    const started = Date.now();
    h.session.abortCompaction();
    await assert.rejects(compaction, (e: unknown) => e instanceof CompactionError && e.code === "cancelled");
    assert.ok(Date.now() - started < 1000);
  });
});

describe("remote endpoint", () => {
  test("compaction.remoteEndpoint summarizes instead of the models, and its shortSummary is used", async () => {
    const bodies: { systemPrompt: string; prompt: string; purpose?: string }[] = [];
    const server = http.createServer(async (req, res) => {
      let body = "";
      for await (const part of req) body += part;
      bodies.push(JSON.parse(body));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ summary: "remote summary", shortSummary: "remote short" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const calls: string[] = [];
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/summarize`;
      harness = await createHarness({
        models: [{ id: "main", contextWindow: 8000 }],
        settings: { compaction: { keepRecentTokens: 100, remoteEndpoint: url } },
        responses: router({ main: () => ({ error: "the model must not summarize" }) }, calls),
        session: { summarizer: undefined },
      });
      await harness.session.prompt(bigText("first question", 200));
      await harness.session.prompt(bigText("second question", 200));
      const result = await harness.session.compact();
      assert.match(result.summary, /^remote summary/);
      assert.equal(result.shortSummary, "remote short");
      assert.deepEqual(calls, []);
      assert.equal(bodies.length, 1, "the endpoint's short summary spared a second request");
      assert.match(bodies[0].prompt, /first question/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
