import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { Command } from "commander";
import { addSummarizerOptions, summarizerChoiceFrom, summarizerFromOptions } from "../../src/cli/summarizer-options.js";
import { CliError } from "../../src/cli/output.js";
import { EXTRACTIVE_NOTICE, parseSummarizerSpec, selectSummarizer } from "../../src/summarizer/select.js";
import { SummarizerConfigError } from "../../src/summarizer/types.js";

const SECRET = `ghp_${"1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"}`;

async function capturingServer(): Promise<{ url: string; prompts: string[]; close: () => void }> {
  const prompts: string[] = [];
  const server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const part of req) raw += part;
    prompts.push((JSON.parse(raw) as { prompt: string }).prompt);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ summary: "ok" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/summarize`,
    prompts,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("selectSummarizer", () => {
  it("falls back to the extractive summarizer and says so", async () => {
    const notices: string[] = [];
    const summarizer = await selectSummarizer({ onNotice: (m) => notices.push(m) });
    assert.equal(summarizer.name, "extractive");
    assert.deepEqual(notices, [EXTRACTIVE_NOTICE]);
    assert.match(EXTRACTIVE_NOTICE, /--model provider\/id/);
    const quiet: string[] = [];
    await selectSummarizer({ extractive: true, onNotice: (m) => quiet.push(m) });
    assert.deepEqual(quiet, [], "an explicit choice needs no notice");
  });

  it("prefers remote over base URL over model, and says what it ignored", async () => {
    const notices: string[] = [];
    const remote = await selectSummarizer({
      remote: "http://127.0.0.1:9/summarize",
      baseUrl: "http://127.0.0.1:11434/v1",
      model: "anthropic/claude-sonnet-4-5",
      onNotice: (m) => notices.push(m),
    });
    assert.equal(remote.name, "remote http://127.0.0.1:9/summarize");
    assert.deepEqual(notices, ["--remote, --base-url, --model given: using --remote and ignoring the rest"]);
    const local = await selectSummarizer({ baseUrl: "http://127.0.0.1:11434/v1", modelId: "qwen2.5", model: "x/y", contextWindow: 32768 });
    assert.equal(local.name, "openai-compatible/qwen2.5");
    assert.equal(local.contextWindow, 32768);
  });

  it("resolves --model with its key and window override, and reports configuration errors as such", async () => {
    const model = await selectSummarizer({ model: "anthropic/claude-sonnet-4-5", apiKey: "k", contextWindow: 50_000 });
    assert.equal(model.name, "anthropic/claude-sonnet-4-5");
    assert.equal(model.contextWindow, 50_000);
    await assert.rejects(selectSummarizer({ model: "nope" }), SummarizerConfigError);
  });

  it("redacts what goes to a remote summarizer unless redaction is turned off", async () => {
    const server = await capturingServer();
    try {
      const request = { systemPrompt: "s", prompt: `[Tool result]: GITHUB_TOKEN=${SECRET}`, maxTokens: 10, purpose: "history" as const };
      await (await selectSummarizer({ remote: server.url, remoteToken: "t" })).summarize(request);
      await (await selectSummarizer({ remote: server.url, remoteToken: "t", redact: false })).summarize(request);
      assert.deepEqual(server.prompts, ["[Tool result]: GITHUB_TOKEN=[REDACTED:github-token]", request.prompt]);
    } finally {
      server.close();
    }
  });
});

describe("CLI summarizer options", () => {
  const parse = (args: string[]) => {
    const command = addSummarizerOptions(new Command("x").exitOverride().configureOutput({ writeErr: () => {} }));
    command.parse(args, { from: "user" });
    return command.opts();
  };

  it("parses every option into a choice, with redaction on unless --no-redact", () => {
    const choice = summarizerChoiceFrom(
      parse(["--base-url", "http://127.0.0.1:8080/v1", "--model-id", "llama", "--api-key", "k", "--context-window", "8192"]),
      () => {},
    );
    assert.equal(choice.baseUrl, "http://127.0.0.1:8080/v1");
    assert.equal(choice.modelId, "llama");
    assert.equal(choice.apiKey, "k");
    assert.equal(choice.contextWindow, 8192);
    assert.equal(choice.redact, true);
    assert.equal(summarizerChoiceFrom(parse(["--remote", "http://h/summarize", "--no-redact"])).redact, false);
    assert.equal(summarizerChoiceFrom(parse(["--model", "openai/gpt-4o"])).model, "openai/gpt-4o");
    assert.throws(() => parse(["--context-window", "lots"]), /'lots' is invalid\. must be a positive integer/);
  });

  it("turns configuration errors into one-line CLI errors", async () => {
    await assert.rejects(summarizerFromOptions({ model: "missing-slash" }, () => {}), (error: Error) => {
      assert.ok(error instanceof CliError);
      assert.match(error.message, /not provider\/id/);
      return true;
    });
  });
});

describe("parseSummarizerSpec", () => {
  it("reads the four forms `bonsai eval --summarizer` takes", () => {
    assert.deepEqual(parseSummarizerSpec("extractive"), { extractive: true });
    assert.deepEqual(parseSummarizerSpec("model:anthropic/claude-haiku-4-5"), { model: "anthropic/claude-haiku-4-5" });
    assert.deepEqual(parseSummarizerSpec("base-url:http://127.0.0.1:11434/v1"), { baseUrl: "http://127.0.0.1:11434/v1" });
    assert.deepEqual(parseSummarizerSpec("base-url:http://127.0.0.1:11434/v1#qwen3:8b"), { baseUrl: "http://127.0.0.1:11434/v1", modelId: "qwen3:8b" });
    assert.deepEqual(parseSummarizerSpec("remote:https://summaries.example/v1"), { remote: "https://summaries.example/v1" });
  });

  it("refuses anything else with a message naming the forms", () => {
    for (const spec of ["", "gpt-5", "model:", "ollama:llama3"]) {
      assert.throws(() => parseSummarizerSpec(spec), (error: unknown) => error instanceof SummarizerConfigError && /use extractive, model:provider\/id/.test(error.message));
    }
  });
});
