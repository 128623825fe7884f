/**
 * Issue 19, item 3, end to end: `bonsai chat --continue` as printed at exit resumes with the model,
 * server and window the session was started with, and `--base-url` alone keeps the model id;
 * neither writes a model change.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { chatWorld } from "../helpers/chat-e2e.js";
import { ChatTerminal } from "../helpers/terminal.js";

test("--continue and --session resume with the remembered server, model id and window; --base-url alone keeps the model id", async () => {
  const world = await chatWorld(() => ({ text: "Noted." }));
  try {
    const first = world.start(["--context-window", "4096"]);
    await first.waitFor(/tokens/);
    first.submit("remember heron");
    await first.waitFor("Noted.");
    first.submit("/quit");
    const exit = await first.waitFor("[exited 0]");
    assert.match(exit, /Resume it with: bonsai chat --continue/);
    const env = { HOME: world.home, BONSAI_DIR: world.bonsaiDir };
    const modelChanges = () => world.entries().filter((e) => e.type === "model_change");
    assert.equal(modelChanges().length, 1);
    assert.deepEqual(modelChanges()[0].chat, { baseUrl: world.server.baseUrl, contextWindow: 4096 });

    const resumed = ChatTerminal.start({ cwd: world.cwd, args: ["--continue"], env });
    world.terminals.push(resumed);
    const screen = await resumed.waitFor(/tokens.*\n?.*jsonl|\[exited/);
    assert.doesNotMatch(screen, /no model configured/);
    assert.match(screen, /openai-compatible\/scripted · \S+\/4\.1k tokens/);
    resumed.submit("again");
    await resumed.waitFor(/Noted\.[\s\S]*Noted\./);
    resumed.submit("/quit");
    await resumed.waitFor("[exited 0]");

    const byUrl = ChatTerminal.start({ cwd: world.cwd, args: ["--continue", "--base-url", world.server.baseUrl], env });
    world.terminals.push(byUrl);
    assert.match(await byUrl.waitFor(/tokens/), /openai-compatible\/scripted · \S+\/4\.1k tokens/);
    byUrl.submit("third");
    await byUrl.waitFor(/Noted\.[\s\S]*Noted\.[\s\S]*Noted\./);
    byUrl.submit("/quit");
    await byUrl.waitFor("[exited 0]");
    assert.equal(modelChanges().length, 1, "resuming with the same model writes no model change");

    const bySession = ChatTerminal.start({ cwd: world.cwd, args: ["--session", world.sessionFiles()[0]], env });
    world.terminals.push(bySession);
    assert.match(await bySession.waitFor(/tokens/), /openai-compatible\/scripted · \S+\/4\.1k tokens/);
    bySession.submit("/quit");
    await bySession.waitFor("[exited 0]");
  } finally {
    await world.cleanup();
  }
});
