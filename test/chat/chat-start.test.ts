/**
 * Issue 19, item 3: a chat session remembers how it was started (base URL, model id, window;
 * never a key) on the model_change it writes, and --continue / --session reuse it unless flags
 * say otherwise.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chatStartRecord, rememberedModel, resumedModelOptions, startDiffers } from "../../src/chat/chat-start.js";
import type { SessionEntry } from "../../src/format/entry-types.js";

const change = (fields: Record<string, unknown>, id = "m1"): SessionEntry =>
  ({ type: "model_change", id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z", ...fields }) as unknown as SessionEntry;
const local = change({ provider: "openai-compatible", modelId: "qwen", model: "openai-compatible/qwen", chat: { baseUrl: "http://h:1/v1", contextWindow: 32768 } });

describe("rememberedModel", () => {
  it("is the last model change on the branch, in either spelling, with how the chat reached it", () => {
    assert.equal(rememberedModel([]), undefined);
    const older = change({ model: "anthropic/claude-sonnet-4-5" }, "m0");
    assert.deepEqual(rememberedModel([older]), { provider: "anthropic", modelId: "claude-sonnet-4-5" });
    assert.deepEqual(rememberedModel([older, local]), { provider: "openai-compatible", modelId: "qwen", baseUrl: "http://h:1/v1", contextWindow: 32768 });
  });
});

describe("resumedModelOptions", () => {
  const remembered = rememberedModel([local]);
  it("without model flags, is the remembered start, ahead of the environment", () => {
    assert.deepEqual(resumedModelOptions({}, remembered), { baseUrl: "http://h:1/v1", modelId: "qwen", contextWindow: 32768 });
    assert.deepEqual(resumedModelOptions({ apiKey: "k", contextWindow: 8192 }, remembered), {
      apiKey: "k",
      baseUrl: "http://h:1/v1",
      modelId: "qwen",
      contextWindow: 8192,
    });
    assert.deepEqual(resumedModelOptions({}, rememberedModel([change({ provider: "anthropic", modelId: "claude-sonnet-4-5" })])), {
      model: "anthropic/claude-sonnet-4-5",
    });
  });
  it("with the same --base-url and no --model-id, keeps the remembered model id and window", () => {
    assert.deepEqual(resumedModelOptions({ baseUrl: "http://h:1/v1/" }, remembered), { baseUrl: "http://h:1/v1/", modelId: "qwen", contextWindow: 32768 });
  });
  it("flags that name another model win, and nothing is carried over to it", () => {
    assert.deepEqual(resumedModelOptions({ model: "openai/gpt-4o" }, remembered), { model: "openai/gpt-4o" });
    assert.deepEqual(resumedModelOptions({ baseUrl: "http://other:2/v1" }, remembered), { baseUrl: "http://other:2/v1" });
    assert.deepEqual(resumedModelOptions({ baseUrl: "http://h:1/v1", modelId: "llama" }, remembered), { baseUrl: "http://h:1/v1", modelId: "llama" });
  });
  it("a session started before the URL was remembered still keeps its model id on --base-url", () => {
    const old = rememberedModel([change({ provider: "openai-compatible", modelId: "qwen" })]);
    assert.deepEqual(resumedModelOptions({ baseUrl: "http://h:1/v1" }, old), { baseUrl: "http://h:1/v1", modelId: "qwen" });
    assert.deepEqual(resumedModelOptions({}, old), {}, "without a URL there is nothing to reach it by");
  });
});

describe("a gateway that speaks another API (--api)", () => {
  const gateway = change({ provider: "anthropic", modelId: "claude-gw", chat: { baseUrl: "https://gw/anthropic", api: "anthropic-messages" } });
  it("is recorded with its API, remembered, and resumed with it", () => {
    assert.deepEqual(chatStartRecord({ baseUrl: "https://gw/anthropic", api: "anthropic-messages" }, {}), { baseUrl: "https://gw/anthropic", api: "anthropic-messages" });
    assert.deepEqual(chatStartRecord({ baseUrl: "http://h:1/v1", api: "openai-completions" }, {}), { baseUrl: "http://h:1/v1" });
    assert.deepEqual(chatStartRecord({}, { BONSAI_BASE_URL: "https://gw/v1", BONSAI_API: "openai-responses" }), { baseUrl: "https://gw/v1", api: "openai-responses" });
    const remembered = rememberedModel([gateway]);
    assert.deepEqual(remembered, { provider: "anthropic", modelId: "claude-gw", baseUrl: "https://gw/anthropic", api: "anthropic-messages" });
    assert.deepEqual(resumedModelOptions({}, remembered), { baseUrl: "https://gw/anthropic", api: "anthropic-messages", modelId: "claude-gw" });
    // the same gateway named again keeps the model id, and its API unless another is named
    assert.deepEqual(resumedModelOptions({ baseUrl: "https://gw/anthropic" }, remembered), { baseUrl: "https://gw/anthropic", api: "anthropic-messages", modelId: "claude-gw" });
    assert.deepEqual(resumedModelOptions({ baseUrl: "https://gw/anthropic", api: "anthropic-messages" }, remembered), {
      baseUrl: "https://gw/anthropic",
      api: "anthropic-messages",
      modelId: "claude-gw",
    });
  });
  it("differs when the API is not what the branch remembers", () => {
    const model = { provider: "anthropic", id: "claude-gw" };
    assert.equal(startDiffers(rememberedModel([gateway]), model, { baseUrl: "https://gw/anthropic", api: "anthropic-messages" }), false);
    assert.equal(startDiffers(rememberedModel([gateway]), model, { baseUrl: "https://gw/anthropic", api: "openai-responses" }), true);
  });
});

describe("chatStartRecord and startDiffers", () => {
  it("records the base URL and an explicit window, never a key", () => {
    const record = chatStartRecord({ baseUrl: "http://h:1/v1", modelId: "qwen", apiKey: "secret", contextWindow: 4096 }, {});
    assert.deepEqual(record, { baseUrl: "http://h:1/v1", contextWindow: 4096 });
    assert.doesNotMatch(JSON.stringify(record), /secret/);
    assert.deepEqual(chatStartRecord({}, { BONSAI_BASE_URL: "http://env:3/v1" }), { baseUrl: "http://env:3/v1" });
    assert.deepEqual(chatStartRecord({ model: "anthropic/claude-sonnet-4-5" }, {}), {});
  });
  it("differs when the model, the URL or the window is not what the branch remembers", () => {
    const model = { provider: "openai-compatible", id: "qwen" };
    assert.equal(startDiffers(rememberedModel([local]), model, { baseUrl: "http://h:1/v1", contextWindow: 32768 }), false);
    assert.equal(startDiffers(rememberedModel([local]), model, { baseUrl: "http://h:1/v1", contextWindow: 4096 }), true);
    assert.equal(startDiffers(rememberedModel([local]), { ...model, id: "llama" }, { baseUrl: "http://h:1/v1", contextWindow: 32768 }), true);
    assert.equal(startDiffers(undefined, model, {}), true);
  });
});
