/**
 * `bonsai chat` end to end (a pty, scripted server on 127.0.0.1): a model caught thinking shows
 * only the last lines of its thinking, which collapse to one line once the answer arrives; two
 * lines typed meanwhile reach the model as one user message, in one turn.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { THINKING_LIVE_LINES } from "../../src/chat/transcript.js";
import { chatWorld, lastText, requestKind } from "../helpers/chat-e2e.js";

const THOUGHTS = Array.from({ length: 10 }, (_, i) => `idea-${String(i + 1).padStart(2, "0")} look at the parser`);

test("thinking streams as a short tail, then collapses; lines typed while busy go as one message", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const world = await chatWorld((request, kind) => {
    if (kind !== "chat") return { text: "## Goal\nunused" };
    const said = lastText(request);
    if (said.includes("think it through")) return { thinking: THOUGHTS.join("\n"), afterThinking: released, text: "Thought it through." };
    return { text: `Answered ${request.messages.filter((m) => m.role === "user").length} user messages.` };
  });
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    chat.submit("think it through");
    const thinking = await chat.waitFor("idea-10", { timeoutMs: 15_000 });
    const shown = THOUGHTS.filter((t) => thinking.includes(t));
    assert.deepEqual(shown, THOUGHTS.slice(-THINKING_LIVE_LINES), "only the last lines of the thinking are on screen");
    await chat.waitFor("Thinking… (esc to stop)");

    chat.submit("first queued line");
    chat.submit("second queued line");
    await chat.waitFor("Queued (2, sent as one message when the answer ends): first queued line + second queued line");
    release();

    const done = await chat.waitFor("Answered 2 user messages.", { timeoutMs: 15_000 });
    assert.match(done, /thinking: idea-01 look at the parser… \(10 lines\)/);
    assert.match(done, /Thought it through\./);
    assert.doesNotMatch(done, /idea-10/, "the thinking collapsed to its line");
    assert.doesNotMatch(done, /Queued/);
    assert.doesNotMatch(done, /Thinking…/, "the spinner is gone with the answer");

    const chats = world.server.requests.filter((r) => requestKind(r) === "chat");
    assert.equal(chats.length, 2, "the two queued lines made one turn, not two");
    const users = chats[1].messages.filter((m) => m.role === "user");
    assert.equal(users.length, 2);
    const joined = users[1].content;
    const text = typeof joined === "string" ? joined : (joined as { text?: string }[]).map((p) => p.text ?? "").join("");
    assert.equal(text, "first queued line\n\nsecond queued line");

    const stored = world.entries().filter((e) => e.type === "message" && (e.message as { role: string }).role === "assistant");
    const content = (stored[0].message as { content: { type: string; thinking?: string }[] }).content;
    assert.equal(content.find((b) => b.type === "thinking")?.thinking, THOUGHTS.join("\n"), "the session keeps the whole thinking");
  } finally {
    release();
    await world.cleanup();
  }
});
