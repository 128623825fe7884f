import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { fauxAssistantMessage, fauxText, fauxThinking, registerFauxProvider } from "@mariozechner/pi-ai";
import {
  ModelCallError,
  openAiCompatibleApiKey,
  openAiCompatibleModel,
  piAiSummarizer,
  resolveModelSpec,
} from "../../src/summarizer/pi-ai.js";
import { SummarizationAbortedError, SummarizerConfigError, type SummarizeRequest } from "../../src/summarizer/types.js";

const request = (over: Partial<SummarizeRequest> = {}): SummarizeRequest => ({
  systemPrompt: "You summarize transcripts.",
  prompt: "<conversation>\n[User]: hello\n</conversation>\n\nSummarize.",
  maxTokens: 256,
  purpose: "history",
  ...over,
});

describe("piAiSummarizer over the faux provider", () => {
  it("sends one user message with the system prompt, joins text blocks and drops thinking", async () => {
    const faux = registerFauxProvider({ models: [{ id: "faux-plain", contextWindow: 50_000, maxTokens: 4000 }] });
    try {
      const seen: { systemPrompt?: string; messages: unknown[]; options: unknown }[] = [];
      faux.setResponses([
        (context, options) => {
          seen.push({ systemPrompt: context.systemPrompt, messages: context.messages, options });
          return fauxAssistantMessage([fauxThinking("let me think"), fauxText("## Goal"), fauxText("- ship it")]);
        },
      ]);
      const summarizer = piAiSummarizer(faux.getModel());
      assert.equal(summarizer.contextWindow, 50_000);
      assert.equal(summarizer.reasoning, false);
      assert.equal(summarizer.name, `${faux.getModel().provider}/faux-plain`);
      const result = await summarizer.summarize(request({ maxTokens: 9000, reasoning: "high" }));
      assert.equal(result.text, "## Goal\n- ship it");
      assert.ok(result.usage && result.usage.totalTokens > 0, "faux usage is passed through");
      assert.equal(seen.length, 1);
      assert.equal(seen[0].systemPrompt, "You summarize transcripts.");
      assert.equal(seen[0].messages.length, 1);
      assert.deepEqual((seen[0].messages[0] as { role: string; content: string }).content, request().prompt);
      const options = seen[0].options as { maxTokens?: number; reasoning?: string };
      assert.equal(options.maxTokens, 4000, "clamped to the model's output cap");
      assert.equal(options.reasoning, undefined, "no reasoning for a non-reasoning model");
    } finally {
      faux.unregister();
    }
  });

  it("passes the reasoning level only to reasoning models, and only when asked", async () => {
    const faux = registerFauxProvider({ models: [{ id: "faux-thinker", reasoning: true }] });
    try {
      const levels: unknown[] = [];
      const step = (_c: unknown, options: unknown) => {
        levels.push((options as { reasoning?: string }).reasoning);
        return fauxAssistantMessage("ok");
      };
      faux.setResponses([step, step]);
      const summarizer = piAiSummarizer(faux.getModel());
      assert.equal(summarizer.reasoning, true);
      await summarizer.summarize(request({ reasoning: "high" }));
      await summarizer.summarize(request());
      assert.deepEqual(levels, ["high", undefined]);
    } finally {
      faux.unregister();
    }
  });

  it("turns stopReason error into an error with the provider's message, and aborted into SummarizationAbortedError", async () => {
    const faux = registerFauxProvider({ models: [{ id: "faux-err" }] });
    try {
      faux.setResponses([
        fauxAssistantMessage("", { stopReason: "error", errorMessage: "503 upstream overloaded" }),
        fauxAssistantMessage("partial", { stopReason: "aborted" }),
      ]);
      const summarizer = piAiSummarizer(faux.getModel());
      await assert.rejects(summarizer.summarize(request()), (error: Error) => {
        assert.ok(error instanceof ModelCallError);
        assert.match(error.message, /503 upstream overloaded/);
        assert.equal(error.contextOverflow, false);
        return true;
      });
      await assert.rejects(summarizer.summarize(request()), SummarizationAbortedError);
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(summarizer.summarize(request({ signal: controller.signal })), SummarizationAbortedError);
    } finally {
      faux.unregister();
    }
  });
});

// A scripted OpenAI-compatible server on loopback: each request takes the next handler.
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown>) => void;
const script: Handler[] = [];
const bodies: Record<string, unknown>[] = [];
let server: http.Server;
let baseUrl: string;

const chunk = (delta: object, finish: string | null = null) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "fake",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk = (prompt: number, completion: number) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "fake",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});
function sse(res: http.ServerResponse, events: object[]) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
  res.end("data: [DONE]\n\n");
}

before(async () => {
  server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const part of req) raw += part;
    const body = JSON.parse(raw) as Record<string, unknown>;
    bodies.push(body);
    const handler = script.shift();
    if (!handler) {
      res.writeHead(500).end("no scripted answer");
      return;
    }
    handler(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

describe("piAiSummarizer over an OpenAI-compatible server on 127.0.0.1", () => {
  it("streams the answer and reads the usage of the final chunk", async () => {
    script.push((_req, res) =>
      sse(res, [chunk({ role: "assistant", content: "" }), chunk({ content: "## Goal\n" }), chunk({ content: "- port the selector" }), chunk({}, "stop"), usageChunk(42, 7)]),
    );
    bodies.length = 0;
    const model = openAiCompatibleModel({ baseUrl, modelId: "qwen2.5:7b", contextWindow: 32_000 });
    const summarizer = piAiSummarizer(model, { apiKey: "local", maxRetries: 0 });
    assert.equal(summarizer.contextWindow, 32_000);
    const result = await summarizer.summarize(request({ maxTokens: 300, reasoning: "high" }));
    assert.equal(result.text, "## Goal\n- port the selector");
    assert.equal(result.usage?.input, 42);
    assert.equal(result.usage?.output, 7);
    const body = bodies[0];
    assert.equal(body.model, "qwen2.5:7b");
    assert.equal(body.max_tokens, 300, "llama.cpp-style max_tokens field");
    assert.equal(body.store, undefined, "no store field for local servers");
    assert.equal(body.reasoning_effort, undefined, "no reasoning for a non-reasoning model");
    const messages = body.messages as { role: string; content: unknown }[];
    assert.deepEqual(
      messages.map((m) => m.role),
      ["system", "user"],
    );
  });

  it("sends reasoning_effort for a reasoning model that was asked to reason", async () => {
    script.push((_req, res) => sse(res, [chunk({ content: "ok" }), chunk({}, "stop")]));
    bodies.length = 0;
    const model = { ...openAiCompatibleModel({ baseUrl, modelId: "thinker", reasoning: true }) };
    model.compat = { ...model.compat, supportsReasoningEffort: true };
    await piAiSummarizer(model, { apiKey: "local", maxRetries: 0 }).summarize(request({ reasoning: "high" }));
    assert.equal(bodies[0].reasoning_effort, "high");
  });

  it("aborts mid-stream with SummarizationAbortedError", async () => {
    script.push((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(chunk({ role: "assistant", content: "partial " }))}\n\n`);
      // never finishes: the client has to abort
    });
    const controller = new AbortController();
    const summarizer = piAiSummarizer(openAiCompatibleModel({ baseUrl }), { apiKey: "local", maxRetries: 0 });
    const pending = summarizer.summarize(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await assert.rejects(pending, SummarizationAbortedError);
    assert.ok(Date.now() - started < 3000);
  });

  it("reports an HTTP 500 as an error, after exactly one request with maxRetries 0", async () => {
    script.push((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "boom: the GPU caught fire" } }));
    });
    bodies.length = 0;
    const summarizer = piAiSummarizer(openAiCompatibleModel({ baseUrl }), { apiKey: "local", maxRetries: 0 });
    await assert.rejects(summarizer.summarize(request()), (error: Error) => {
      assert.ok(error instanceof ModelCallError);
      assert.match(error.message, /GPU caught fire|500/);
      assert.equal(error.contextOverflow, false);
      return true;
    });
    assert.equal(bodies.length, 1);
  });

  it("reports a context overflow with the provider's text and flags it", async () => {
    script.push((_req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "Your input exceeds the context window of this model.", type: "invalid_request_error" } }));
    });
    const summarizer = piAiSummarizer(openAiCompatibleModel({ baseUrl }), { apiKey: "local", maxRetries: 0 });
    await assert.rejects(summarizer.summarize(request()), (error: Error) => {
      assert.ok(error instanceof ModelCallError);
      assert.match(error.message, /exceeds the context window/);
      assert.equal(error.contextOverflow, true);
      return true;
    });
  });
});

describe("model resolution", () => {
  it("resolves provider/id from the registry with the key from the environment", async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    const savedOauth = process.env.ANTHROPIC_OAUTH_TOKEN;
    delete process.env.ANTHROPIC_OAUTH_TOKEN;
    process.env.ANTHROPIC_API_KEY = "test-key-from-env";
    try {
      const { model, apiKey } = await resolveModelSpec("anthropic/claude-sonnet-4-5");
      assert.equal(model.provider, "anthropic");
      assert.equal(model.id, "claude-sonnet-4-5");
      assert.ok(model.contextWindow > 0);
      assert.equal(apiKey, "test-key-from-env");
      assert.equal((await resolveModelSpec("anthropic/claude-sonnet-4-5", "explicit")).apiKey, "explicit");
      delete process.env.ANTHROPIC_API_KEY;
      await assert.rejects(resolveModelSpec("anthropic/claude-sonnet-4-5"), (error: Error) => {
        assert.ok(error instanceof SummarizerConfigError);
        assert.match(error.message, /ANTHROPIC_API_KEY/);
        return true;
      });
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
      if (savedOauth !== undefined) process.env.ANTHROPIC_OAUTH_TOKEN = savedOauth;
    }
  });

  it("rejects malformed specs, unknown providers and unknown models with a clear error", async () => {
    await assert.rejects(resolveModelSpec("claude"), /not provider\/id/);
    await assert.rejects(resolveModelSpec("nosuchprovider/x"), /unknown provider "nosuchprovider"/);
    await assert.rejects(resolveModelSpec("anthropic/claude-nonexistent-9"), /unknown model "claude-nonexistent-9" for provider anthropic/);
  });

  it("builds OpenAI-compatible models with local-server compat and a default window", () => {
    const model = openAiCompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1/" });
    assert.equal(model.api, "openai-completions");
    assert.equal(model.baseUrl, "http://127.0.0.1:11434/v1");
    assert.equal(model.contextWindow, 128_000);
    assert.deepEqual(model.compat, { supportsStore: false, supportsDeveloperRole: false, maxTokensField: "max_tokens" });
    assert.equal(openAiCompatibleModel({ baseUrl: "http://h/v1", contextWindow: 8192 }).contextWindow, 8192);
    assert.throws(() => openAiCompatibleModel({ baseUrl: "localhost:11434" }), SummarizerConfigError);
    assert.equal(openAiCompatibleApiKey("given", {}), "given");
    assert.equal(openAiCompatibleApiKey(undefined, { OPENAI_API_KEY: "from-env" }), "from-env");
    assert.equal(openAiCompatibleApiKey(undefined, {}), "bonsai");
  });
});
