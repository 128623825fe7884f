import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { buildServer, inferPurpose, startServer, validateBody } from "../../src/server/app.js";
import { assertSafeBinding, bearerMatches, isLoopbackHost, loadServerToken } from "../../src/server/auth.js";
import { createConcurrencyGate, parseByteSize } from "../../src/server/limits.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";
import { piAiSummarizer } from "../../src/summarizer/pi-ai.js";
import { remoteSummarizer } from "../../src/summarizer/remote.js";
import { SummarizationAbortedError, type SummarizeRequest, type Summarizer } from "../../src/summarizer/types.js";
import { spawnServer } from "../helpers/spawn-server.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";
import { scriptArgs } from "../helpers/bonsai-bin.js";

const CONVERSATION = [
  "[User]: Rename the flag --keep to --keep-recent. Never break existing scripts.",
  '[Assistant tool calls]: edit(path="src/cli/compact.ts", oldText="--keep", newText="--keep-recent")',
  "[Tool result]: Successfully replaced text in src/cli/compact.ts.",
  "[Assistant]: Renamed. Next: update the README.",
].join("\n\n");
const PROMPT = `<conversation>\n${CONVERSATION}\n</conversation>\n\nSummarize.`;
const body = (over: object = {}) => ({ systemPrompt: "You summarize.", prompt: PROMPT, ...over });

/** A summarizer the test steers: each call waits until released (or aborted), and records its signal. */
function gatedSummarizer() {
  const calls: { request: SummarizeRequest; release: () => void }[] = [];
  const summarizer: Summarizer = {
    name: "gated",
    contextWindow: 0,
    reasoning: false,
    summarize: (request) =>
      new Promise((resolve, reject) => {
        calls.push({ request, release: () => resolve({ text: "released", model: "gated" }) });
        request.signal?.addEventListener("abort", () => reject(new SummarizationAbortedError()));
      }),
  };
  return { summarizer, calls };
}

const until = async (check: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("server protocol (inject)", () => {
  it("answers POST /summarize and POST / with the extractive summary, and logs one line without prompt text", async () => {
    const logs: string[] = [];
    const app = buildServer({ summarizer: extractiveSummarizer(), log: (line) => logs.push(line) });
    for (const url of ["/summarize", "/"]) {
      const response = await app.inject({ method: "POST", url, payload: body({ maxTokens: 500 }) });
      assert.equal(response.statusCode, 200);
      const answer = response.json();
      assert.equal(answer.model, "extractive");
      assert.match(answer.summary, /^_\(extractive summary/);
      assert.match(answer.summary, /Edited `src\/cli\/compact\.ts`/);
    }
    assert.equal(logs.length, 2);
    const entry = JSON.parse(logs[0]);
    assert.equal(entry.event, "request");
    assert.equal(entry.status, 200);
    assert.equal(entry.promptChars, PROMPT.length);
    assert.equal(entry.maxTokens, 500);
    assert.equal(entry.purpose, "history");
    assert.ok(!logs.join("\n").includes("Never break existing scripts"), "no prompt text in logs");
    await app.close();
  });

  it("serves a short summary to upstream clients that send no purpose", async () => {
    const app = buildServer({ summarizer: extractiveSummarizer(), log: () => {} });
    const response = await app.inject({
      method: "POST",
      url: "/",
      payload: body({ prompt: `${PROMPT}\n\nDescribe the changes in 2-3 sentences, first person.` }),
    });
    assert.equal(response.statusCode, 200);
    assert.ok(!response.json().summary.includes("## Goal"));
    assert.equal(inferPurpose(PROMPT), "history");
    assert.equal(inferPurpose(`${PROMPT}\n\nSay what changed in two or three sentences.`), "short");
    assert.equal(inferPurpose(`${PROMPT}\n\nWrite a 2–3 sentence summary.`), "short");
    await app.close();
  });

  it("rejects malformed requests with 400 and a reason", async () => {
    const app = buildServer({ summarizer: extractiveSummarizer(), log: () => {} });
    const cases: [string, RegExp][] = [
      ["{not json", /malformed JSON/],
      ['{"systemPrompt":"s","prompt":"p","__proto__":{"admin":true}}', /^JSON body has a "__proto__" or "constructor.prototype" key, which is refused/],
      ['{"systemPrompt":"s","prompt":"p","constructor":{"prototype":{"admin":true}}}', /^JSON body has a "__proto__"/],
      ["[]", /JSON object/],
      [JSON.stringify({ prompt: "x" }), /systemPrompt must be a string/],
      [JSON.stringify({ systemPrompt: "s" }), /prompt must be a string/],
      [JSON.stringify({ systemPrompt: "s", prompt: "  " }), /prompt is empty/],
      [JSON.stringify(body({ maxTokens: -3 })), /maxTokens must be a positive integer/],
      [JSON.stringify(body({ purpose: "poem" })), /purpose must be one of/],
    ];
    for (const [payload, reason] of cases) {
      const response = await app.inject({ method: "POST", url: "/summarize", headers: { "content-type": "application/json" }, payload });
      assert.equal(response.statusCode, 400, payload);
      assert.match(response.json().error, reason);
    }
    const empty = await app.inject({ method: "POST", url: "/summarize", headers: { "content-type": "application/json" } });
    assert.equal(empty.statusCode, 400);
    const text = await app.inject({ method: "POST", url: "/summarize", headers: { "content-type": "text/plain" }, payload: "hi" });
    assert.equal(text.statusCode, 400);
    assert.match(text.json().error, /JSON object/);
    const xml = await app.inject({ method: "POST", url: "/summarize", headers: { "content-type": "application/xml" }, payload: "<a/>" });
    assert.equal(xml.statusCode, 415);
    assert.match(xml.json().error, /application\/json/);
    const missing = await app.inject({ method: "GET", url: "/nope" });
    assert.equal(missing.statusCode, 404);
    assert.match(missing.json().error, /POST \/summarize/);
    for (const [method, url] of [["GET", "/summarize"], ["PUT", "/"], ["DELETE", "/summarize"]] as const) {
      const wrong = await app.inject({ method, url });
      assert.equal(wrong.statusCode, 405, `${method} ${url}`);
      assert.equal(wrong.headers.allow, "POST");
      assert.match(wrong.json().error, new RegExp(`^${method} is not allowed here: POST /summarize`));
    }
    await app.close();
  });

  it("answers 413 beyond the body limit", async () => {
    const app = buildServer({ summarizer: extractiveSummarizer(), maxBodyBytes: 1024, log: () => {} });
    const response = await app.inject({ method: "POST", url: "/summarize", payload: body({ prompt: "x".repeat(2000) }) });
    assert.equal(response.statusCode, 413);
    assert.match(response.json().error, /exceeds the limit of 1024 bytes/);
    await app.close();
  });

  it("requires the bearer token for summaries (401), not for /healthz", async () => {
    const app = buildServer({ summarizer: extractiveSummarizer(), token: "s3cret-token", log: () => {} });
    const none = await app.inject({ method: "POST", url: "/summarize", payload: body() });
    assert.equal(none.statusCode, 401);
    assert.match(none.json().error, /missing bearer token/);
    assert.equal(none.headers["www-authenticate"], 'Bearer realm="bonsai"');
    const wrong = await app.inject({ method: "POST", url: "/summarize", payload: body(), headers: { authorization: "Bearer nope" } });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().error, "invalid bearer token");
    const right = await app.inject({ method: "POST", url: "/summarize", payload: body(), headers: { authorization: "Bearer s3cret-token" } });
    assert.equal(right.statusCode, 200);
    const health = await app.inject({ method: "GET", url: "/healthz" });
    assert.deepEqual(health.json(), { status: "ok", inFlight: 0, capacity: 4 });
    await app.close();
  });

  it("answers 429 with Retry-After when all slots are busy, and frees the slot afterwards", async () => {
    const { summarizer, calls } = gatedSummarizer();
    const app = buildServer({ summarizer, maxConcurrent: 1, log: () => {} });
    const first = app.inject({ method: "POST", url: "/summarize", payload: body() });
    await until(() => calls.length === 1);
    const busy = await app.inject({ method: "POST", url: "/summarize", payload: body() });
    assert.equal(busy.statusCode, 429);
    assert.ok(Number(busy.headers["retry-after"]) >= 1);
    assert.match(busy.json().error, /busy/);
    assert.equal((await app.inject({ method: "GET", url: "/healthz" })).json().inFlight, 1);
    calls[0].release();
    assert.equal((await first).statusCode, 200);
    const again = app.inject({ method: "POST", url: "/summarize", payload: body() });
    await until(() => calls.length === 2);
    calls[1].release();
    assert.equal((await again).statusCode, 200);
    await app.close();
  });

  it("answers 504 at the timeout and aborts the summarizer; 502 when the summarizer fails", async () => {
    const { summarizer, calls } = gatedSummarizer();
    const app = buildServer({ summarizer, requestTimeoutMs: 100, log: () => {} });
    const started = Date.now();
    const response = await app.inject({ method: "POST", url: "/summarize", payload: body() });
    assert.equal(response.statusCode, 504);
    assert.match(response.json().error, /longer than/);
    assert.ok(Date.now() - started < 1500);
    assert.equal(calls[0].request.signal?.aborted, true, "the upstream call was aborted");
    await app.close();

    const failing: Summarizer = {
      name: "failing",
      contextWindow: 0,
      reasoning: false,
      summarize: async () => {
        throw new Error("anthropic/claude: 529 overloaded\nretry later");
      },
    };
    const app2 = buildServer({ summarizer: failing, log: () => {} });
    const bad = await app2.inject({ method: "POST", url: "/summarize", payload: body() });
    assert.equal(bad.statusCode, 502);
    assert.equal(bad.json().error, "the summarizer failed: anthropic/claude: 529 overloaded retry later");
    await app2.close();
  });

  it("checks requests and configuration with small pure helpers", () => {
    assert.deepEqual(validateBody({ systemPrompt: "s", prompt: "p", maxTokens: 5 }), { systemPrompt: "s", prompt: "p", maxTokens: 5, purpose: undefined });
    assert.ok(bearerMatches("Bearer abc", "abc"));
    assert.ok(bearerMatches("bearer abc ", "abc"));
    assert.ok(!bearerMatches("Bearer abcd", "abc"));
    assert.ok(!bearerMatches("Basic abc", "abc"));
    assert.ok(!bearerMatches(undefined, "abc"));
    for (const host of ["127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"]) assert.ok(isLoopbackHost(host), host);
    for (const host of ["0.0.0.0", "::", "192.168.1.4", "example.com"]) assert.ok(!isLoopbackHost(host), host);
    assert.throws(() => assertSafeBinding("0.0.0.0", undefined), /refusing to listen on 0\.0\.0\.0 without a token/);
    assertSafeBinding("0.0.0.0", "tok");
    assertSafeBinding("127.0.0.1", undefined);
    assert.equal(parseByteSize("8mb"), 8 * 1024 * 1024);
    assert.equal(parseByteSize("512KB"), 512 * 1024);
    assert.equal(parseByteSize("100"), 100);
    assert.throws(() => parseByteSize("lots"), /not a size/);
    const gate = createConcurrencyGate(2);
    const a = gate.tryAcquire();
    const b = gate.tryAcquire();
    assert.ok(a && b);
    assert.equal(gate.tryAcquire(), undefined);
    a();
    a(); // releasing twice frees one slot only
    assert.equal(gate.inFlight, 1);
    assert.ok(gate.tryAcquire());
    assert.equal(gate.retryAfterSeconds() >= 1, true);
  });

  it("reads the token from a token file before the environment", () => {
    const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
    try {
      const file = join(dir, "token");
      writeFileSync(file, "file-token\nignored\n");
      assert.equal(loadServerToken({ tokenFile: file, env: { BONSAI_SERVER_TOKEN: "env-token" } }), "file-token");
      assert.equal(loadServerToken({ env: { BONSAI_SERVER_TOKEN: "env-token" } }), "env-token");
      assert.equal(loadServerToken({ env: {} }), undefined);
      writeFileSync(file, "\n");
      assert.throws(() => loadServerToken({ tokenFile: file }), /is empty/);
      assert.throws(() => loadServerToken({ tokenFile: join(dir, "missing") }), /cannot read token file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("server over a real socket on 127.0.0.1", () => {
  it("round-trips through the remote summarizer with the extractive and the faux backends", async () => {
    const extractive = await startServer({ summarizer: extractiveSummarizer(), token: "tok", port: 0, log: () => {} });
    const faux = registerFauxProvider({ models: [{ id: "faux-server", contextWindow: 100_000 }] });
    faux.setResponses([(context) => fauxAssistantMessage(`## Goal\nfaux saw ${(context.messages[0] as { content: string }).content.length} chars`)]);
    const viaFaux = await startServer({ summarizer: piAiSummarizer(faux.getModel()), token: "tok", port: 0, log: () => {} });
    try {
      const request: SummarizeRequest = { systemPrompt: "s", prompt: PROMPT, maxTokens: 1000, purpose: "history" };
      const a = await remoteSummarizer({ url: `${extractive.url}/summarize`, token: "tok" }).summarize(request);
      assert.equal(a.model, "extractive");
      assert.match(a.text, /## Critical Context/);
      const b = await remoteSummarizer({ url: viaFaux.url, token: "tok" }).summarize(request);
      assert.equal(b.text, `## Goal\nfaux saw ${PROMPT.length} chars`);
      assert.equal(b.model, `${faux.getModel().provider}/faux-server`);
      assert.ok(b.usage && b.usage.input > 0, "usage travels back");
      await assert.rejects(remoteSummarizer({ url: extractive.url, token: "wrong" }).summarize(request), {
        message: "Remote summarization failed (401 Unauthorized): invalid bearer token",
      });
    } finally {
      faux.unregister();
      await extractive.close();
      await viaFaux.close();
    }
  });

  it("refuses to start on a non-loopback host without a token", async () => {
    await assert.rejects(startServer({ summarizer: extractiveSummarizer(), host: "0.0.0.0", port: 0, log: () => {} }), /refusing to listen/);
  });

  it("aborts the upstream call when the client disconnects", async () => {
    const { summarizer, calls } = gatedSummarizer();
    const logs: string[] = [];
    const server = await startServer({ summarizer, port: 0, log: (line) => logs.push(line) });
    try {
      const controller = new AbortController();
      const pending = fetch(`${server.url}/summarize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body()),
        signal: controller.signal,
      });
      await until(() => calls.length === 1);
      controller.abort();
      await assert.rejects(pending);
      await until(() => calls[0].request.signal?.aborted === true);
      await until(() => logs.some((line) => line.includes('"clientClosed":true')));
      assert.equal(((await (await fetch(`${server.url}/healthz`)).json()) as { inFlight: number }).inFlight, 0, "the slot was freed");
    } finally {
      await server.close();
    }
  });
});

describe("bonsai serve as a process", () => {
  it("finishes in-flight requests on SIGTERM, then exits 0", async () => {
    const server = await spawnServer(scriptArgs("test/helpers/serve-fake.ts"), { FAKE_DELAY_MS: "600", MAX_CONCURRENT: "8" });
    const inFlight = Array.from({ length: 4 }, () =>
      fetch(`${server.url}/summarize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body()) }),
    );
    await new Promise((r) => setTimeout(r, 200));
    server.child.kill("SIGTERM");
    const responses = await Promise.all(inFlight);
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 200, 200],
    );
    for (const response of responses) assert.match(((await response.json()) as { summary: string }).summary, /^summary of \d+ chars$/);
    assert.equal(await server.exited, 0);
    const events = server.logs.map((l) => l.event);
    assert.ok(events.indexOf("shutdown") < events.lastIndexOf("request"), "requests completed after the shutdown began");
    assert.equal(events[events.length - 1], "stopped");
    await assert.rejects(fetch(`${server.url}/healthz`), "nothing listens any more");
  });

  it("bonsai serve --extractive serves, and refuses 0.0.0.0 without a token", async () => {
    const server = await spawnServer([...BONSAI_ARGS, "serve", "--port", "0", "--extractive"], { BONSAI_SERVER_TOKEN: "" });
    try {
      const response = await fetch(`${server.url}/summarize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body()),
      });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { model: string }).model, "extractive");
    } finally {
      server.child.kill("SIGTERM");
      assert.equal(await server.exited, 0);
    }
    await assert.rejects(
      spawnServer([...BONSAI_ARGS, "serve", "--port", "0", "--host", "0.0.0.0", "--extractive"], { BONSAI_SERVER_TOKEN: "" }),
      /exited with 1 before listening: bonsai: refusing to listen on 0\.0\.0\.0 without a token/,
    );
  });
});
