import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { displayUrl, parseRetryAfter, remoteSummarizer } from "../../src/summarizer/remote.js";
import { SummarizationAbortedError, SummarizerConfigError, type SummarizeRequest } from "../../src/summarizer/types.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown>) => void;
const script: Handler[] = [];
const seen: { headers: http.IncomingHttpHeaders; body: Record<string, unknown>; at: number }[] = [];
let server: http.Server;
let url: string;

before(async () => {
  server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const part of req) raw += part;
    const body = JSON.parse(raw) as Record<string, unknown>;
    seen.push({ headers: req.headers, body, at: Date.now() });
    const handler = script.shift();
    if (handler) handler(req, res, body);
    else res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "script exhausted" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/summarize`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  script.length = 0;
  seen.length = 0;
});

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
};
const request = (over: Partial<SummarizeRequest> = {}): SummarizeRequest => ({
  systemPrompt: "sys",
  prompt: "<conversation>\n[User]: hi\n</conversation>",
  maxTokens: 1000,
  purpose: "history",
  ...over,
});

describe("remoteSummarizer", () => {
  it("posts the protocol body with the bearer token and returns summary, shortSummary, model and usage", async () => {
    script.push(json(200, { summary: "## Goal\nx", shortSummary: "Did x.", model: "m/1", usage: { input: 10, output: 5 } }));
    const summarizer = remoteSummarizer({ url, token: "t0ken", env: {} });
    assert.equal(summarizer.contextWindow, 0);
    const result = await summarizer.summarize(request());
    assert.deepEqual(result, {
      text: "## Goal\nx",
      shortSummary: "Did x.",
      model: "m/1",
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
    });
    assert.equal(seen[0].headers.authorization, "Bearer t0ken");
    assert.equal(seen[0].headers["content-type"], "application/json");
    assert.deepEqual(seen[0].body, { systemPrompt: "sys", prompt: request().prompt, maxTokens: 1000, purpose: "history" });
  });

  it("takes the token from BONSAI_SERVER_TOKEN, and sends none when there is none", async () => {
    script.push(json(200, { summary: "a" }), json(200, { summary: "b" }), json(200, { summary: "c" }));
    await remoteSummarizer({ url, env: { BONSAI_SERVER_TOKEN: "from-env" } }).summarize(request());
    await remoteSummarizer({ url, env: {} }).summarize(request());
    // a password in the URL is the token (fetch itself refuses URLs with credentials)
    await remoteSummarizer({ url: url.replace("http://", "http://bonsai:in-url@"), env: {} }).summarize(request());
    assert.equal(seen[0].headers.authorization, "Bearer from-env");
    assert.equal(seen[1].headers.authorization, undefined);
    assert.equal(seen[2].headers.authorization, "Bearer in-url");
  });

  it("reports a non-2xx status with the server's reason", async () => {
    script.push(json(401, { error: "invalid bearer token" }));
    await assert.rejects(remoteSummarizer({ url, env: {} }).summarize(request()), {
      message: "Remote summarization failed (401 Unauthorized): invalid bearer token",
    });
    script.push((_req, res) => res.writeHead(502, { "content-type": "text/plain" }).end("upstream model unreachable"));
    await assert.rejects(remoteSummarizer({ url, env: {} }).summarize(request()), {
      message: "Remote summarization failed (502 Bad Gateway): upstream model unreachable",
    });
  });

  it("rejects an answer without a string summary", async () => {
    script.push(json(200, { text: "wrong field" }));
    await assert.rejects(remoteSummarizer({ url, env: {} }).summarize(request()), {
      message: "Remote summarization response missing summary",
    });
    script.push((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{not json"));
    await assert.rejects(remoteSummarizer({ url, env: {} }).summarize(request()), /is not JSON/);
  });

  it("waits for Retry-After on 429 and 503, then succeeds", async () => {
    script.push(json(429, { error: "busy" }, { "retry-after": "0.3" }), json(503, { error: "busy" }, { "retry-after": "0.2" }), json(200, { summary: "done" }));
    const started = Date.now();
    const result = await remoteSummarizer({ url, env: {} }).summarize(request());
    assert.equal(result.text, "done");
    assert.equal(seen.length, 3);
    assert.ok(seen[1].at - seen[0].at >= 280, `waited ${seen[1].at - seen[0].at} ms after the 429`);
    assert.ok(seen[2].at - seen[1].at >= 180, `waited ${seen[2].at - seen[1].at} ms after the 503`);
    assert.ok(Date.now() - started < 3000);
  });

  it("gives up after the bounded number of retries, and at once when Retry-After is beyond the cap", async () => {
    for (let i = 0; i < 3; i++) script.push(json(429, { error: "the server is busy" }, { "retry-after": "0" }));
    await assert.rejects(remoteSummarizer({ url, env: {}, maxRetries: 2 }).summarize(request()), (error: Error) => {
      assert.match(error.message, /^Remote summarization failed \(429 Too Many Requests\): the server is busy/);
      return true;
    });
    assert.equal(seen.length, 3);
    seen.length = 0;
    script.push(json(503, { error: "maintenance" }, { "retry-after": "3600" }));
    const started = Date.now();
    await assert.rejects(remoteSummarizer({ url, env: {}, maxRetryWaitMs: 30_000 }).summarize(request()), /retry after 3600 s/);
    assert.equal(seen.length, 1);
    assert.ok(Date.now() - started < 1000);
  });

  it("times out a request that gets no answer", async () => {
    script.push(() => {
      /* never answers */
    });
    const started = Date.now();
    await assert.rejects(remoteSummarizer({ url, env: {}, timeoutMs: 200 }).summarize(request()), /no answer from .* within/);
    assert.ok(Date.now() - started < 2000);
  });

  it("stops on the caller's signal, during a request and during a Retry-After wait", async () => {
    script.push(() => {
      /* never answers */
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(remoteSummarizer({ url, env: {} }).summarize(request({ signal: controller.signal })), SummarizationAbortedError);

    script.push(json(429, { error: "busy" }, { "retry-after": "20" }));
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 150);
    const started = Date.now();
    await assert.rejects(remoteSummarizer({ url, env: {} }).summarize(request({ signal: waiting.signal })), SummarizationAbortedError);
    assert.ok(Date.now() - started < 2000, "the wait was cut short");
  });

  it("says when the endpoint cannot be reached, and hides URL credentials", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const summarizer = remoteSummarizer({ url: `http://user:pw@127.0.0.1:${port}/summarize`, env: {} });
    assert.equal(summarizer.name, `remote http://127.0.0.1:${port}/summarize`);
    await assert.rejects(summarizer.summarize(request()), (error: Error) => {
      assert.match(error.message, /cannot reach http:\/\/127\.0\.0\.1:\d+\/summarize \(ECONNREFUSED\)/);
      assert.ok(!error.message.includes("pw"));
      return true;
    });
    assert.throws(() => remoteSummarizer({ url: "not a url" }), SummarizerConfigError);
  });
});

describe("parseRetryAfter and displayUrl", () => {
  it("reads delta-seconds and HTTP dates", () => {
    assert.equal(parseRetryAfter("2"), 2000);
    assert.equal(parseRetryAfter(" 0 "), 0);
    const now = Date.parse("2025-01-01T00:00:00Z");
    assert.equal(parseRetryAfter("Wed, 01 Jan 2025 00:00:05 GMT", now), 5000);
    assert.equal(parseRetryAfter("soon"), undefined);
    assert.equal(parseRetryAfter(null), undefined);
  });
  it("drops credentials", () => {
    assert.equal(displayUrl("https://a:b@example.com/x"), "https://example.com/x");
  });
});
