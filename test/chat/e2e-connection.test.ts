/**
 * Issue 19, item 5, end to end: a --base-url where nothing listens is named once, with the cause,
 * and the retries count down instead of repeating "Connection error.".
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { chatWorld } from "../helpers/chat-e2e.js";
import { refusedPort } from "../helpers/refused-port.js";
import { ChatTerminal } from "../helpers/terminal.js";

test("a dead --base-url: the URL and why, once, and how many retries are left", async () => {
  const world = await chatWorld(() => ({ text: "unused" }), { retry: { maxRetries: 2, baseDelayMs: 200 } });
  const port = await refusedPort();
  const url = `http://127.0.0.1:${port}/v1`;
  try {
    const chat = ChatTerminal.start({ cwd: world.cwd, args: ["--base-url", url, "--model-id", "m"], env: { HOME: world.home, BONSAI_DIR: world.bonsaiDir } });
    world.terminals.push(chat);
    await chat.waitFor(/tokens/);
    chat.submit("hello");
    const screen = await chat.waitFor(/Gave up after 2 retries/, { timeoutMs: 60_000 });
    const reach = `cannot reach ${url}: connection refused (ECONNREFUSED)`;
    assert.equal(screen.split(`Error: ${reach}`).length - 1, 1, `the error once:\n${screen}`);
    assert.match(screen, /Retrying in \d+\.\d s \(2 retries left\)/);
    assert.match(screen, /Retrying in \d+\.\d s \(1 retry left\)/);
    assert.match(screen, /Gave up after 2 retries\.\s*$/m);
    assert.doesNotMatch(screen, /Connection error\./);
    chat.submit("/quit");
    await chat.waitFor("[exited 0]");
  } finally {
    await world.cleanup();
  }
});
