/**
 * The summarizer chain of compaction.methods: remote only with an endpoint, the candidate models
 * for "model", the extractive summary for "extractive", in the configured order.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Api, Model } from "@mariozechner/pi-ai";
import { NATIVE_PAUSE_MS, SummarizerSource } from "../../src/agent/summarizer-source.js";
import type { CompactionMethod } from "../../src/config/settings.js";
import type { Summarizer } from "../../src/summarizer/types.js";

const model = (id: string) => ({ provider: "p", id, contextWindow: 100_000 }) as unknown as Model<Api>;
const fake = (m: Model<Api>): Summarizer => ({ name: `p/${m.id}`, contextWindow: 100_000, reasoning: false, summarize: async () => ({ text: "s" }) });

function source(methods: CompactionMethod[], extra: { remoteEndpoint?: string; summarizer?: Summarizer; model?: string } = {}) {
  return new SummarizerSource({
    methods,
    models: ["p/backup"],
    resolveModel: (_provider, id) => model(id),
    createSummarizer: fake,
    onSkip: () => {},
    ...extra,
  });
}

const names = async (s: SummarizerSource) => (await s.chain(model("main"), 1000)).map((c) => `${c.method}:${c.summarizer.name}`);

describe("SummarizerSource.chain", () => {
  test("default order without an endpoint: compaction.model, the current model, compaction.models, then extractive", async () => {
    assert.deepEqual(await names(source(["remote", "model", "extractive"], { model: "p/cheap" })), [
      "model:p/cheap",
      "model:p/main",
      "model:p/backup",
      "extractive:extractive",
    ]);
  });

  test("remote first when an endpoint is set; methods in the configured order; extractive can be left out", async () => {
    const chain = await names(source(["extractive", "remote"], { remoteEndpoint: "http://127.0.0.1:1/summarize" }));
    assert.equal(chain.length, 2);
    assert.equal(chain[0], "extractive:extractive");
    assert.match(chain[1], /^remote:/);
    assert.deepEqual(await names(source(["model"])), ["model:p/main", "model:p/backup"]);
  });

  test("an injected summarizer stands in for remote and model, once, named model", async () => {
    const injected = fake(model("injected"));
    assert.deepEqual(await names(source(["remote", "model", "extractive"], { summarizer: injected })), ["model:p/injected", "extractive:extractive"]);
  });
});

describe("SummarizerSource: the native method", () => {
  const anthropic = (id: string, provider = "anthropic") => ({ provider, id, api: "anthropic-messages", contextWindow: 200_000, baseUrl: "http://127.0.0.1:1" }) as unknown as Model<Api>;
  const span = (tokens: number, hasHistory = true) => ({ messages: [], tokens, hasHistory });
  const nativeSource = (methods: CompactionMethod[], extra: { summarizer?: Summarizer; now?: () => number } = {}) =>
    new SummarizerSource({
      methods,
      models: [],
      resolveModel: () => undefined,
      createSummarizer: fake,
      getApiKey: () => "k",
      onSkip: () => {},
      requestShape: () => ({ systemPrompt: "s", tools: [], options: {} }),
      ...extra,
    });
  const methodsOf = async (s: SummarizerSource, current: Model<Api>, tokens = 60_000, hasHistory = true) =>
    (await s.chain(current, 1000, span(tokens, hasHistory))).map((c) => c.method);

  test("in front for a model whose API has a lane, in the configured place, and only with enough history for the provider", async () => {
    assert.deepEqual(await methodsOf(nativeSource(["native", "model", "extractive"]), anthropic("claude-sonnet-4-6")), ["native", "model", "extractive"]);
    assert.deepEqual(await methodsOf(nativeSource(["model", "native", "extractive"]), anthropic("claude-sonnet-4-6")), ["model", "native", "extractive"]);
    // Anthropic refuses a trigger under 50,000 input tokens; a split turn's beginning alone leaves nothing to compact
    assert.deepEqual(await methodsOf(nativeSource(["native", "model"]), anthropic("claude-sonnet-4-6"), 52_000), ["model"]);
    assert.deepEqual(await methodsOf(nativeSource(["native", "model"]), anthropic("claude-sonnet-4-6"), 60_000, false), ["model"]);
    // no lane for the model's API, a model the provider does not compact, another provider of the API, the method left out, an injected summarizer
    assert.deepEqual(await methodsOf(nativeSource(["native", "model"]), model("main")), ["model"]);
    assert.deepEqual(await methodsOf(nativeSource(["native", "model"]), anthropic("claude-sonnet-4-5")), ["model"]);
    assert.deepEqual(await methodsOf(nativeSource(["native", "model"]), anthropic("claude-sonnet-4-6", "vercel-ai-gateway")), ["model"]);
    assert.deepEqual(await methodsOf(nativeSource(["model"]), anthropic("claude-sonnet-4-6")), ["model"]);
    assert.deepEqual(await methodsOf(nativeSource(["native", "model"], { summarizer: fake(model("injected")) }), anthropic("claude-sonnet-4-6")), ["model"]);
  });

  test("a failed lane is not retried and is not offered again for that model; after an error that may pass, not for a while", async () => {
    let now = 0;
    const s = nativeSource(["native", "model"], { now: () => now });
    const [native] = await s.chain(anthropic("claude-sonnet-4-6"), 1000, span(60_000));
    assert.equal(native.method, "native");
    assert.equal(native.retry, false);
    native.onFailure?.(new Error("refused"));
    assert.deepEqual(await methodsOf(s, anthropic("claude-sonnet-4-6")), ["model"]);
    assert.deepEqual(await methodsOf(s, anthropic("claude-opus-4-6")), ["native", "model"]);
    now = 10 * NATIVE_PAUSE_MS;
    assert.deepEqual(await methodsOf(s, anthropic("claude-sonnet-4-6")), ["model"], "a refusal holds for the session");
    // an overloaded provider: left out for a while, then offered again
    const [other] = await s.chain(anthropic("claude-opus-4-6"), 1000, span(60_000));
    other.onFailure?.(new Error("529 overloaded_error: Overloaded"));
    assert.deepEqual(await methodsOf(s, anthropic("claude-opus-4-6")), ["model"]);
    now += NATIVE_PAUSE_MS + 1;
    assert.deepEqual(await methodsOf(s, anthropic("claude-opus-4-6")), ["native", "model"]);
  });
});

describe("SummarizerSource redaction", () => {
  test("prompts for a model leave the machine redacted; the extractive summary and an injected summarizer are left as they are", async () => {
    const seen: string[] = [];
    const recording = (m: Model<Api>): Summarizer => ({
      ...fake(m),
      summarize: async (request) => {
        seen.push(request.prompt);
        return { text: "s" };
      },
    });
    const secret = "deploy with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";
    const src = new SummarizerSource({ methods: ["model"], models: [], resolveModel: (_p, id) => model(id), createSummarizer: recording, onSkip: () => {} });
    const [first] = await src.chain(model("main"), 1000);
    await first.summarizer.summarize({ systemPrompt: "s", prompt: secret, maxTokens: 10, purpose: "history" });
    assert.equal(seen.length, 1, "the model was asked once");
    assert.doesNotMatch(seen[0], /sk-ant-api03/, "the key is redacted");
    assert.match(seen[0], /deploy with \[REDACTED:anthropic-key\]/, "the rest of the prompt is kept");

    const injected = recording(model("injected"));
    const direct = await source(["model"], { summarizer: injected }).chain(model("main"), 1000);
    await direct[0].summarizer.summarize({ systemPrompt: "s", prompt: secret, maxTokens: 10, purpose: "history" });
    assert.match(seen[1], /sk-ant-api03/, "an injected summarizer gets the prompt as it is");
  });
});
