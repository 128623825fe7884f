import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseModelRef, requiredContextWindow, selectCandidates } from "../../src/agent/candidates.js";

const models = [
  { provider: "anthropic", id: "claude-sonnet-4-5", contextWindow: 200_000 },
  { provider: "openai", id: "gpt-4o-mini", contextWindow: 128_000 },
  { provider: "local", id: "tiny", contextWindow: 4096 },
  { provider: "local", id: "unknown-window", contextWindow: 0 },
  { provider: "openrouter", id: "qwen/qwen3-coder", contextWindow: 262_144 },
];
const resolve = (provider: string, id: string) => models.find((m) => m.provider === provider && m.id === id);
const refs = (list: { provider: string; id: string }[]) => list.map((m) => `${m.provider}/${m.id}`);

describe("parseModelRef", () => {
  test("splits at the first slash", () => {
    assert.deepEqual(parseModelRef("openrouter/qwen/qwen3-coder"), { provider: "openrouter", id: "qwen/qwen3-coder" });
    assert.equal(parseModelRef("gpt-4o"), undefined);
    assert.equal(parseModelRef("/x"), undefined);
    assert.equal(parseModelRef("x/"), undefined);
  });
});

describe("selectCandidates", () => {
  test("current model first, then configured ones in order, deduplicated", () => {
    const { candidates, skipped } = selectCandidates({
      current: models[1],
      configured: ["anthropic/claude-sonnet-4-5", "openai/gpt-4o-mini", "openrouter/qwen/qwen3-coder", "anthropic/claude-sonnet-4-5"],
      resolve,
      requiredTokens: 1000,
    });
    assert.deepEqual(refs(candidates), ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "openrouter/qwen/qwen3-coder"]);
    assert.deepEqual(skipped, []);
  });

  test("compaction.model comes before the current model; naming the current model changes nothing", () => {
    const first = selectCandidates({ current: models[0], preferred: "openai/gpt-4o-mini", configured: ["openai/gpt-4o-mini", "openrouter/qwen/qwen3-coder"], resolve, requiredTokens: 1000 });
    assert.deepEqual(refs(first.candidates), ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "openrouter/qwen/qwen3-coder"]);
    const same = selectCandidates({ current: models[0], preferred: "anthropic/claude-sonnet-4-5", configured: [], resolve, requiredTokens: 1000 });
    assert.deepEqual(refs(same.candidates), ["anthropic/claude-sonnet-4-5"]);
    const unknown = selectCandidates({ current: models[0], preferred: "nope/none", configured: [], resolve, requiredTokens: 1000 });
    assert.deepEqual(unknown.skipped, [{ ref: "nope/none", reason: "unknown model" }]);
  });

  test("unknown and malformed references are skipped with a reason", () => {
    const { candidates, skipped } = selectCandidates({
      current: models[0],
      configured: ["nope/none", "bare-id"],
      resolve,
      requiredTokens: 1000,
    });
    assert.deepEqual(refs(candidates), ["anthropic/claude-sonnet-4-5"]);
    assert.deepEqual(skipped, [
      { ref: "nope/none", reason: "unknown model" },
      { ref: "bare-id", reason: 'not a "provider/model-id" reference' },
    ]);
  });

  test("models whose window cannot hold the request are skipped, the current one too", () => {
    const { candidates, skipped } = selectCandidates({
      current: models[2],
      configured: ["openai/gpt-4o-mini", "local/unknown-window"],
      resolve,
      requiredTokens: requiredContextWindow(6000, 1000),
    });
    assert.deepEqual(refs(candidates), ["openai/gpt-4o-mini", "local/unknown-window"]);
    assert.deepEqual(skipped, [{ ref: "local/tiny", reason: "context window 4096 cannot hold 9000 tokens" }]);
  });

  test("when nothing fits, the largest window remains", () => {
    const { candidates } = selectCandidates({
      current: models[2],
      configured: ["openai/gpt-4o-mini"],
      resolve,
      requiredTokens: 500_000,
    });
    assert.deepEqual(refs(candidates), ["openai/gpt-4o-mini"]);
  });

  test("no current model: only configured ones", () => {
    const { candidates } = selectCandidates({ current: undefined, configured: ["local/tiny"], resolve, requiredTokens: 10 });
    assert.deepEqual(refs(candidates), ["local/tiny"]);
    assert.deepEqual(selectCandidates({ current: undefined, configured: [], resolve, requiredTokens: 10 }).candidates, []);
  });
});
