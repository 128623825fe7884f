/**
 * `bonsai chat` end to end, in a real terminal (a pseudo-terminal) against a scripted OpenAI-compatible
 * server on 127.0.0.1: a conversation with a tool call that writes a file, Escape during a slow
 * answer, command hints, /session, /quit, and --continue resuming with the context intact.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { NO_MODEL_MESSAGE } from "../../src/chat/model.js";
import { chatWorld, lastText } from "../helpers/chat-e2e.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";

const run = promisify(execFile);

test("without a model, bonsai chat exits 1 with one line saying how to configure one", async () => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: "/nonexistent-home" };
  await assert.rejects(run(process.execPath, [...BONSAI_ARGS, "chat"], { env, cwd: resolve(import.meta.dirname, "../..") }), (error: unknown) => {
    const e = error as { code: number; stderr: string };
    assert.equal(e.code, 1);
    assert.equal(e.stderr, `bonsai: ${NO_MODEL_MESSAGE}\n`);
    return true;
  });
});

test("a conversation with a tool call, Escape during an answer, /quit and --continue", async () => {
  const world = await chatWorld((request, kind) => {
    if (kind !== "chat") return { text: "## Goal\nunused" };
    const last = request.messages[request.messages.length - 1];
    const said = lastText(request);
    if (last.role === "tool") return { text: "Done: hello.txt written." };
    if (said.includes("please create hello.txt")) {
      return { text: "Creating it.", toolCalls: [{ name: "write", arguments: { path: "hello.txt", content: "hi from the model\n" } }] };
    }
    if (said.includes("take your time")) return { text: "far too late", delayMs: 8000 };
    const words = said.match(/what did you do\?/)?.[0] ?? "something";
    return { text: `You said: ${words}` };
  });
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    chat.submit("please create hello.txt");
    const screen = await chat.waitFor("Done: hello.txt written.");
    assert.match(screen, /› please create hello\.txt/);
    assert.match(screen, /→ write hello\.txt \(2 lines\)/);
    assert.match(screen, /✓ Wrote 18 bytes to hello\.txt/);
    assert.equal(readFileSync(join(world.cwd, "hello.txt"), "utf8"), "hi from the model\n");

    chat.submit("take your time");
    await chat.waitFor("Working… (esc to stop)");
    chat.keys("Escape");
    await chat.waitFor("Stopped.");
    assert.doesNotMatch(chat.screen(), /far too late|Working…/);

    chat.submit("/compcat");
    await chat.waitFor("unknown command /compcat: did you mean /compact?");
    chat.submit("/session");
    const info = await chat.waitFor(/cost:\s+\$0/);
    assert.match(info, /entries:\s+\d+ \(2 user, 3 assistant, 1 tool result,/);

    chat.submit("/quit");
    const exit = await chat.waitFor("[exited 0]");
    assert.match(exit, /Session saved: /);
    assert.equal(world.sessionFiles().length, 1);

    const resumed = world.start(["--continue"]);
    const first = await resumed.waitFor("Resumed");
    assert.match(first, /please create hello\.txt/);
    assert.match(first, /Done: hello\.txt written\./);
    resumed.submit("what did you do?");
    await resumed.waitFor("You said: what did you do?");
    const request = world.server.requests.at(-1)!;
    const sent = JSON.stringify(request.messages);
    assert.match(sent, /please create hello\.txt/, "the resumed context holds the first turn");
    assert.match(sent, /Wrote 18 bytes to hello\.txt/, "and its tool result");
    assert.equal(world.sessionFiles().length, 1, "--continue appends to the same file");
    const users = world.entries().filter((e) => e.type === "message" && (e.message as { role: string }).role === "user");
    assert.equal(users.length, 3);
    assert.ok(existsSync(join(world.cwd, "hello.txt")));
  } finally {
    await world.cleanup();
  }
});

test("text from the model cannot drive the terminal: no clipboard write, title or hyperlink reaches it (issue 26, defect 6)", async () => {
  const OSC52 = "\u001b]52;c;Y3VybCBldmlsLnNofGJhc2g=\u0007";
  const TITLE = "\u001b]0;pwned\u0007";
  const world = await chatWorld((_request, kind) => (kind !== "chat" ? { text: "## Goal\nunused" } : { text: `Here you go ${OSC52}${TITLE} done.` }));
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    chat.submit("say something");
    await chat.waitFor(/done\./);
    assert.doesNotMatch(chat.output, /\u001b\]52;/, "no clipboard write");
    assert.doesNotMatch(chat.output, /\u001b\]0;pwned/, "no title");
  } finally {
    await world.cleanup();
  }
});
