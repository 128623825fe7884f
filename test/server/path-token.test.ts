/**
 * The token in the endpoint's path (`/t/TOKEN/summarize`), for oh-my-pi's remote compaction
 * client: it posts `{systemPrompt, prompt}` (newer versions add `maxTokens`) as JSON with no
 * Authorization header and reads `summary` from the answer.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildServer, startServer } from "../../src/server/app.js";
import { pathToken, printablePath, tokenMatches } from "../../src/server/auth.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";

const TOKEN = "p4th-t0ken-9f2c";
const PROMPT = "<conversation>\n[User]: Rename parseConfig to loadConfig in src/config.ts and keep the old name exported.\n</conversation>";

/** Exactly what oh-my-pi's client sends: JSON, no Authorization header. */
async function ohMyPiPost(endpoint: string, withMaxTokens = false): Promise<Response> {
  const body: Record<string, unknown> = { systemPrompt: "You summarize coding sessions.", prompt: PROMPT };
  if (withMaxTokens) body.maxTokens = 2048;
  return fetch(endpoint, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

describe("token in the path", () => {
  it("reads and masks the token part of a path", () => {
    assert.equal(pathToken(`/t/${TOKEN}/summarize`), TOKEN);
    assert.equal(pathToken("/t/a%2Fb/summarize"), "a/b");
    assert.equal(pathToken("/summarize"), undefined);
    assert.equal(pathToken("/tx/abc/summarize"), undefined);
    assert.equal(printablePath(`/t/${TOKEN}/summarize?x=1`), "/t/<token>/summarize");
    assert.equal(printablePath("/summarize?x=1"), "/summarize");
    assert.equal(tokenMatches(TOKEN, TOKEN), true);
    assert.equal(tokenMatches(`${TOKEN}x`, TOKEN), false);
    assert.equal(tokenMatches("", TOKEN), false);
  });

  it("serves oh-my-pi's request off loopback with the token in the path, and never logs the token", async () => {
    const logs: string[] = [];
    const server = await startServer({ summarizer: extractiveSummarizer(), token: TOKEN, host: "0.0.0.0", port: 0, log: (line) => logs.push(line) });
    try {
      const base = server.url.replace("0.0.0.0", "127.0.0.1");
      for (const withMaxTokens of [false, true]) {
        const answer = await ohMyPiPost(`${base}/t/${TOKEN}/summarize`, withMaxTokens);
        assert.equal(answer.status, 200);
        const json = (await answer.json()) as { summary?: unknown };
        assert.equal(typeof json.summary, "string");
        assert.match(json.summary as string, /loadConfig/);
      }
      // the same client without the token in the path gets the 401 it got before
      const bare = await ohMyPiPost(`${base}/summarize`);
      assert.equal(bare.status, 401);
      const wrong = await ohMyPiPost(`${base}/t/not-the-token/summarize`);
      assert.equal(wrong.status, 401);
      const wrongBody = await wrong.text();
      assert.match(wrongBody, /invalid token in the path/);
      assert.doesNotMatch(wrongBody, /not-the-token/);
      const unknown = await ohMyPiPost(`${base}/t/${TOKEN}/other`);
      assert.equal(unknown.status, 404);
      assert.doesNotMatch(await unknown.text(), new RegExp(TOKEN));
    } finally {
      await server.close();
    }
    const requests = logs.filter((line) => line.includes('"event":"request"'));
    assert.equal(requests.length, 5);
    assert.ok(requests.some((line) => line.includes('"path":"/t/<token>/summarize"')));
    for (const line of logs) {
      assert.doesNotMatch(line, new RegExp(TOKEN), line);
      assert.doesNotMatch(line, /not-the-token/, line);
    }
  });

  it("never logs the token however the path spells it, nor a provider error that quotes the prompt (issue 26, defect 8)", async () => {
    for (const [url, shown] of [
      [`//t/${TOKEN}/summarize`, "//t/<token>/summarize"],
      [`/T/${TOKEN}/summarize`, "/T/<token>/summarize"],
      [`/%74/${TOKEN}/summarize`, "/%74/<token>/summarize"],
      [`/./t/${TOKEN}/summarize`, "/./t/<token>/summarize"],
      [`/x/../t/${TOKEN}/`, "/x/../t/<token>/"],
      [`http://evil.example/t/${TOKEN}/summarize`, "/t/<token>/summarize"],
      [`/q/${encodeURIComponent(TOKEN).replace("4", "%34")}/summarize`, "/q/<token>/summarize"],
    ] as const) {
      assert.equal(printablePath(url, TOKEN), shown, url);
    }
    const logs: string[] = [];
    const echoing = { name: "echo", contextWindow: 100_000, summarize: async (r: { prompt: string }) => Promise.reject(new Error(`400 Bad Request: could not process ${r.prompt}`)) };
    const server = await startServer({ summarizer: echoing as never, token: TOKEN, port: 0, log: (line) => logs.push(line) });
    try {
      const answer = await ohMyPiPost(`${server.url.replace(/\/$/, "")}/t/${TOKEN}/summarize`);
      assert.equal(answer.status, 502);
      for (const variant of [`//t/${TOKEN}/summarize`, `/T/${TOKEN}/summarize`, `/%74/${TOKEN}/x`]) {
        await fetch(`${server.url.replace(/\/$/, "")}${variant}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: "{}" });
      }
    } finally {
      await server.close();
    }
    for (const line of logs) {
      assert.doesNotMatch(line, new RegExp(TOKEN), line);
      assert.doesNotMatch(line, /parseConfig/, "the prompt never reaches the log");
    }
    assert.ok(logs.some((line) => line.includes("the summarizer failed")));
  });

  it("a server without a token has no /t/ routes, and says so", async () => {
    const app = buildServer({ summarizer: extractiveSummarizer(), log: () => {} });
    const answer = await app.inject({ method: "POST", url: "/t/anything/summarize", payload: { systemPrompt: "s", prompt: PROMPT } });
    assert.equal(answer.statusCode, 404);
    assert.match(answer.json().error, /no token, so it has no \/t\/<token>\/ routes/);
    const plain = await app.inject({ method: "POST", url: "/summarize", payload: { systemPrompt: "s", prompt: PROMPT } });
    assert.equal(plain.statusCode, 200);
  });
});
