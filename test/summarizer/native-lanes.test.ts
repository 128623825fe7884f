/**
 * The native lanes' own rules, without an agent: what each sends and reads back, what counts as
 * a failure, and how a payload takes the summary message's place in a request.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Api, Model } from "@mariozechner/pi-ai";
import { anthropicCompacts, anthropicLane, COMPACTION_TURN } from "../../src/summarizer/native-anthropic.js";
import { endpoint, NativeCompactionError, type NativePayload, nativePayloadOf, replayNotes, replaysTo } from "../../src/summarizer/native-lane.js";
import { laneById, laneFor, NATIVE_LANES } from "../../src/summarizer/native-lanes.js";
import { openAiResponsesLane } from "../../src/summarizer/native-openai.js";

const model = (api: Api, id = "m1", extra: Partial<Model<Api>> = {}) =>
  ({ id, name: id, api, provider: "p", baseUrl: "http://host/base/", contextWindow: 300_000, maxTokens: 1000, ...extra }) as Model<Api>;

/** A fetch that records the request and answers with `status` and `body`. */
function fakeFetch(status: number, body: unknown) {
  const calls: { url: string; headers: Record<string, string>; body: Record<string, unknown> }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, headers: init.headers as Record<string, string>, body: JSON.parse(String(init.body)) });
    return new Response(typeof body === "string" ? body : JSON.stringify(body), { status });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, calls };
}

const summaryText = "Earlier parts were condensed.\n\n<summary>\nS\n</summary>";
const isSummary = (text: string) => text === summaryText;
const stored = (data: unknown, lane = "anthropic"): NativePayload => ({ lane, provider: "p", model: "m1", api: "anthropic-messages", route: "r", data });

describe("the lane registry", () => {
  test("one lane per API, for the provider's own models that compact, found by API and by the id a payload records", () => {
    assert.equal(laneFor(model("anthropic-messages", "claude-opus-4-6", { provider: "anthropic" })), anthropicLane);
    assert.equal(laneFor(model("anthropic-messages", "claude-sonnet-4-5", { provider: "anthropic" })), undefined, "not a model that compacts");
    assert.equal(laneFor(model("anthropic-messages", "claude-opus-4-6", { provider: "vercel-ai-gateway" })), undefined, "another provider of the API");
    assert.equal(laneFor(model("openai-responses", "gpt-5.1", { provider: "openai" })), openAiResponsesLane);
    assert.equal(laneFor(model("openai-responses", "gpt-5.1", { provider: "github-copilot" })), undefined);
    assert.equal(laneFor(model("openai-completions", "gpt-5.1", { provider: "openai" })), undefined);
    for (const lane of Object.values(NATIVE_LANES)) assert.equal(laneById(lane?.id ?? ""), lane);
    assert.equal(laneById("gemini"), undefined);
  });

  test("a payload replays only to the provider, model and API that made it; a malformed one is not a payload", () => {
    const payload = { lane: "anthropic", provider: "p", model: "m1", api: "anthropic-messages", route: "r", data: {} };
    assert.ok(replaysTo(payload, model("anthropic-messages")));
    assert.ok(!replaysTo(payload, model("anthropic-messages", "m2")));
    assert.ok(!replaysTo(payload, model("anthropic-messages", "m1", { provider: "q" })));
    assert.deepEqual(nativePayloadOf({ native: payload }), payload);
    assert.equal(nativePayloadOf({ native: { ...payload, data: undefined } }), undefined);
    assert.equal(nativePayloadOf({ native: { ...payload, model: 3 } }), undefined);
    assert.equal(nativePayloadOf({ other: 1 }), undefined);
    assert.equal(endpoint("http://h/v1/", "/responses/compact"), "http://h/v1/responses/compact");
    // a payload made through one endpoint is not replayed through another (a gateway and the provider)
    assert.ok(replaysTo({ ...payload, baseUrl: "http://host/base" }, model("anthropic-messages")));
    assert.ok(!replaysTo({ ...payload, baseUrl: "https://gateway.example" }, model("anthropic-messages")));
  });

  test("which Anthropic models compact: Opus and Sonnet from 4.6, Fable and Mythos from 5; dates are no version", () => {
    for (const id of ["claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-opus-4.6", "claude-sonnet-5", "claude-fable-5-1", "claude-mythos-5"]) assert.ok(anthropicCompacts(id), id);
    for (const id of ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5", "claude-sonnet-4-20250514", "claude-fable-4-9", "gpt-5"]) assert.ok(!anthropicCompacts(id), id);
  });

  test("a refusal of a replayed payload is told from other errors by the provider's own words", () => {
    assert.match("The encrypted content for item cmp_1 could not be verified. Reason: Encrypted content could not be decrypted or parsed.", openAiResponsesLane.refusal);
    assert.match('400 {"type":"error","error":{"message":"messages.0.content.0: Input tag \'compaction\' found using \'type\' does not match"}}', anthropicLane.refusal);
    for (const lane of [anthropicLane, openAiResponsesLane]) {
      assert.doesNotMatch("429 rate limit exceeded", lane.refusal);
      assert.doesNotMatch("prompt is too long: 210000 tokens > 200000 maximum", lane.refusal);
    }
  });
});

describe("Anthropic lane", () => {
  const body = { model: "m1", max_tokens: 1000, stream: true, system: [{ type: "text", text: "sys" }], messages: [{ role: "user", content: "hi" }] };

  test("asks for a paused compaction at the floor, with the beta, and reads the compaction iteration's usage", async () => {
    const block = { type: "compaction", content: " notes ", signature: "sig" };
    const { fetch, calls } = fakeFetch(200, {
      content: [block],
      stop_reason: "compaction",
      usage: { input_tokens: 5, output_tokens: 0, iterations: [{ type: "compaction", input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 900, cache_creation_input_tokens: 3 }] },
    });
    const outcome = await anthropicLane.compact({ model: model("anthropic-messages"), apiKey: "sk-ant-api", body, instructions: "write notes", fetch });
    assert.equal(calls[0].url, "http://host/base/v1/messages");
    assert.equal(calls[0].headers["x-api-key"], "sk-ant-api");
    assert.equal(calls[0].headers["anthropic-beta"], "compact-2026-01-12");
    assert.deepEqual(calls[0].body, {
      ...body,
      stream: false,
      messages: body.messages,
      context_management: { edits: [{ type: "compact_20260112", trigger: { type: "input_tokens", value: 50_000 }, pause_after_compaction: true, instructions: "write notes" }] },
    });
    assert.deepEqual(outcome, { data: block, readable: "notes", usage: { input: 100, output: 20, cacheRead: 900, cacheWrite: 3 } });

    // a span ending with an answer gets a user turn (the models that compact refuse a prefilled answer);
    // an OAuth token goes as a bearer with its betas; a model's own betas are kept
    const second = fakeFetch(200, { content: [block] });
    const answered = { ...body, messages: [...body.messages, { role: "assistant", content: "done" }] };
    const withHeaders = model("anthropic-messages", "m1", { headers: { "anthropic-beta": "context-1m-2025-08-07" } });
    await anthropicLane.compact({ model: withHeaders, apiKey: "sk-ant-oat-1", body: answered, instructions: "i", fetch: second.fetch });
    assert.deepEqual((second.calls[0].body.messages as unknown[]).at(-1), { role: "user", content: [{ type: "text", text: COMPACTION_TURN }] });
    assert.equal(second.calls[0].headers.authorization, "Bearer sk-ant-oat-1");
    assert.equal(second.calls[0].headers["x-api-key"], undefined);
    assert.equal(second.calls[0].headers["anthropic-beta"], "claude-code-20250219,oauth-2025-04-20,context-1m-2025-08-07,compact-2026-01-12");
  });

  test("an answer without a compaction, an empty one, an HTTP error and a body that is not JSON fail clearly", async () => {
    const run = (status: number, answer: unknown) =>
      anthropicLane.compact({ model: model("anthropic-messages"), apiKey: "k", body, instructions: "i", fetch: fakeFetch(status, answer).fetch });
    await assert.rejects(run(200, { content: [{ type: "text", text: "hello" }], stop_reason: "end_turn" }), (e: Error) => e instanceof NativeCompactionError && /without compacting \(stop_reason end_turn\)/.test(e.message));
    await assert.rejects(run(200, { content: [{ type: "compaction", content: null }] }), /compaction without a summary/);
    await assert.rejects(run(400, { type: "error", error: { message: "trigger too low" } }), /answered 400: trigger too low/);
    await assert.rejects(run(200, "<html>"), /not JSON/);
  });

  test("replay: the block opens an assistant turn in the summary's place; a kept assistant turn continues it; the edit never fires", () => {
    const block = { type: "compaction", content: "notes" };
    const m = model("anthropic-messages");
    const replayed = anthropicLane.replay({ messages: [{ role: "user", content: [{ type: "text", text: summaryText }] }, { role: "user", content: "next" }] }, stored(block), isSummary, m, "");
    assert.deepEqual(replayed, {
      messages: [{ role: "assistant", content: [block] }, { role: "user", content: "next" }],
      context_management: { edits: [{ type: "compact_20260112", trigger: { type: "input_tokens", value: 300_000 } }] },
    });
    const split = anthropicLane.replay({ messages: [{ role: "user", content: summaryText }, { role: "assistant", content: "partial" }] }, stored(block), isSummary, m, "");
    assert.deepEqual((split as { messages: unknown }).messages, [{ role: "assistant", content: [block, { type: "text", text: "partial" }] }]);
    assert.equal(anthropicLane.replay({ messages: [{ role: "user", content: "no summary here" }] }, stored(block), isSummary, m, ""), undefined);
    // notes (what bonsai's summary adds) follow the block as a user turn, before the kept assistant turn
    const noted = anthropicLane.replay({ messages: [{ role: "user", content: summaryText }, { role: "assistant", content: "partial" }] }, stored(block), isSummary, m, "## Pinned\n> keep the API stable");
    const sent = (noted as { messages: { role: string; content: unknown }[] }).messages;
    assert.deepEqual(sent.map((x) => x.role), ["assistant", "user", "assistant"]);
    assert.match(JSON.stringify(sent[1].content), /Notes kept beside[^"]*\\n\\n## Pinned\\n> keep the API stable/);
  });

  test("notes: what the readable summary says after the provider's text; nothing to replay when it no longer starts with it", () => {
    const payload = stored({ type: "compaction", content: " Provider notes. " });
    assert.equal(replayNotes(anthropicLane, payload, "Provider notes.\n\n## User requests\n> exact"), "## User requests\n> exact");
    assert.equal(replayNotes(anthropicLane, payload, "Provider notes."), "");
    assert.equal(replayNotes(anthropicLane, payload, "An edited summary."), undefined);
    assert.equal(replayNotes(anthropicLane, stored({ type: "compaction" }), "x"), undefined);
    assert.equal(replayNotes(openAiResponsesLane, stored([], "openai-responses"), "anything"), "", "OpenAI's window keeps the user's messages itself");
  });

  test("replay headers keep the betas pi-ai or the caller send and add the compaction beta", () => {
    const headers = anthropicLane.replayHeaders;
    assert.ok(headers);
    assert.deepEqual(headers({ model: model("anthropic-messages", "claude-sonnet-4-5"), hasTools: false }), { "anthropic-beta": "interleaved-thinking-2025-05-14,compact-2026-01-12" });
    assert.deepEqual(headers({ model: model("anthropic-messages", "claude-opus-4-6"), hasTools: false }), { "anthropic-beta": "compact-2026-01-12" });
    assert.deepEqual(headers({ model: model("anthropic-messages"), hasTools: false, headers: { "anthropic-beta": "a, b" } }), { "anthropic-beta": "a,b,compact-2026-01-12" });
    // pi-ai sends the model's headers over its own, and an OAuth token's betas
    const own = model("anthropic-messages", "claude-opus-4-6", { headers: { "anthropic-beta": "context-1m-2025-08-07" } });
    assert.deepEqual(headers({ model: own, hasTools: true }), { "anthropic-beta": "context-1m-2025-08-07,compact-2026-01-12" });
    assert.deepEqual(headers({ model: model("anthropic-messages", "claude-opus-4-6"), hasTools: false, apiKey: "sk-ant-oat-x" }), {
      "anthropic-beta": "claude-code-20250219,oauth-2025-04-20,compact-2026-01-12",
    });
  });
});

describe("OpenAI Responses lane", () => {
  const input = [
    { role: "developer", content: "sys" },
    { role: "user", content: [{ type: "input_text", text: "hi" }] },
  ];

  test("posts the input to /responses/compact and keeps the compacted window without instructions", async () => {
    const output = [{ role: "developer", content: "sys" }, { type: "message", role: "user", content: [] }, { type: "compaction", id: "c", encrypted_content: "x" }];
    const { fetch, calls } = fakeFetch(200, { output, usage: { input_tokens: 1000, input_tokens_details: { cached_tokens: 800 }, output_tokens: 50 } });
    const outcome = await openAiResponsesLane.compact({ model: model("openai-responses"), apiKey: "sk", body: { model: "m1", input, stream: true, prompt_cache_key: "s1" }, instructions: "i", fetch });
    assert.equal(calls[0].url, "http://host/base/responses/compact");
    assert.equal(calls[0].headers.authorization, "Bearer sk");
    assert.deepEqual(calls[0].body, { model: "m1", input, prompt_cache_key: "s1" });
    assert.deepEqual(outcome, { data: output.slice(1), usage: { input: 200, output: 50, cacheRead: 800, cacheWrite: 0 } });
    // what a replay of the window puts in a request: its user messages and the compaction item (about what was written)
    const window = [{ role: "user", content: [{ type: "input_text", text: "x".repeat(400) }] }, { type: "compaction", encrypted_content: "y".repeat(9000) }];
    assert.equal(openAiResponsesLane.replayedTokens?.({ data: window, usage: { input: 0, output: 50, cacheRead: 0, cacheWrite: 0 } }), 150);
    await assert.rejects(
      openAiResponsesLane.compact({ model: model("openai-responses"), apiKey: "sk", body: { input }, instructions: "i", fetch: fakeFetch(200, { output: [] }).fetch }),
      /without a compaction item/,
    );
  });

  test("replay: the window's items take the summary message's place", () => {
    const items = [{ type: "compaction", id: "c", encrypted_content: "x" }];
    const body = { input: [input[0], { role: "user", content: [{ type: "input_text", text: summaryText }] }, input[1]] };
    assert.deepEqual(openAiResponsesLane.replay(body, stored(items, "openai-responses"), isSummary, model("openai-responses"), ""), { input: [input[0], ...items, input[1]] });
    assert.equal(openAiResponsesLane.replay({ input }, stored(items, "openai-responses"), isSummary, model("openai-responses"), ""), undefined);
  });
});
