/**
 * Provider-native compaction through `bonsai chat`, end to end in a pseudo-terminal: a model named
 * with `--base-url … --api anthropic-messages` (a gateway speaking Anthropic's API, here a scripted
 * one) compacts through Anthropic's own lane at the threshold, the chat says so, and the next
 * request replays the provider's block.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { bigText } from "../helpers/agent-harness.js";
import { startAnthropicServer } from "../helpers/provider-servers.js";
import { assistantMsg, userMsg } from "../helpers/session-builders.js";
import { ChatTerminal } from "../helpers/terminal.js";

test("bonsai chat --api anthropic-messages: the threshold compaction is the provider's, said in the chat, and replayed", async () => {
  const block = { type: "compaction", content: "## Goal\nShip the parser (native summary)." };
  const server = await startAnthropicServer((request) => {
    if (request.body.stream === false) {
      const usage = { input_tokens: 1, output_tokens: 0, iterations: [{ type: "compaction", input_tokens: 1000, cache_read_input_tokens: 9000, output_tokens: 500 }] };
      return { json: { id: "msg_c", type: "message", role: "assistant", content: [block], stop_reason: "compaction", usage } };
    }
    return { text: "ok [answered]", inputTokens: 190_000 };
  });
  const home = mkdtempSync(join(tmpdir(), "bonsai-native-home-"));
  const file = join(home, "long.jsonl");
  // about 96,000 estimated tokens of history: enough for the provider's 50,000-token floor
  const session = SessionManager.open(file);
  for (let i = 0; i < 8; i++) {
    session.appendMessage(userMsg(bigText(`request ${i}`, 6000)));
    session.appendMessage(assistantMsg(bigText(`answer ${i}`, 6000)));
  }
  await session.close();
  const args = ["--base-url", server.baseUrl, "--api", "anthropic-messages", "--model-id", "claude-sonnet-4-6", "--context-window", "200000", "--session", file];
  const chat = ChatTerminal.start({ cwd: home, args, env: { HOME: home, BONSAI_DIR: join(home, ".bonsai"), ANTHROPIC_API_KEY: "gateway-key" } });
  try {
    // a 400 KB session to lay out first, and a suite running beside it: generous waits
    const slow = { timeoutMs: 30_000 };
    await chat.waitFor(/tokens/, slow);
    chat.submit("next step");
    const done = await chat.waitFor("✓ Auto-compaction (threshold)", slow);
    assert.match(done.replace(/\s+/g, " "), /provider-native, anthropic: 90% of the request read from the provider's cache/);

    const compactionRequest = server.requests.find((r) => r.body.stream === false);
    assert.equal(compactionRequest?.headers["x-api-key"], "gateway-key");
    assert.match(String(compactionRequest?.headers["anthropic-beta"]), /compact-2026-01-12/);

    const before = server.requests.length;
    chat.submit("and now?");
    await chat.waitFor(/\[answered\][\s\S]*\[answered\]/, slow);
    const replayed = server.requests.slice(before).find((r) => r.body.stream !== false);
    const first = (replayed?.body.messages as { role: string; content: unknown[] }[] | undefined)?.[0];
    assert.equal(first?.role, "assistant");
    assert.deepEqual(first?.content[0], block);

    const entries = readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const compaction = entries.find((e) => e.type === "compaction");
    assert.equal(compaction.details.method, "native");
    assert.deepEqual(compaction.preserveData.native.data, block);
    // the chat remembers the API with the gateway, so a resumed chat speaks it again
    assert.deepEqual(entries.find((e) => e.type === "model_change")?.chat, { baseUrl: server.baseUrl, api: "anthropic-messages", contextWindow: 200_000 });
  } finally {
    await chat.kill();
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
});
