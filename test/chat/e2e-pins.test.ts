/**
 * `/pin`, `/unpin`, `/undo-compact`, `/compact --preview` and the recall tools in `bonsai chat`,
 * end to end in a pseudo-terminal against a scripted OpenAI-compatible server: a pinned request is
 * quoted verbatim in the compaction, undoing it brings the full conversation back on a new branch,
 * a previewed summary is stored as edited (or not at all), and the agent looks back past it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { askAbout, chatWorld, lastText, topicAnswer } from "../helpers/chat-e2e.js";

/** A chat whose model answers topics at length and summarizes everything as "Something about parsing." */
const parsingWorld = () =>
  chatWorld((request, kind) => (kind === "compaction" ? { text: "## Goal\nSomething about parsing." } : topicAnswer(request)), {
    compaction: { keepRecentTokens: 1000 },
  });

test("/pin carries the latest request through /compact, /undo-compact brings the conversation back", async () => {
  const world = await parsingWorld();
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    chat.submit("tell me about the lexer, and never use regular expressions in it");
    await chat.waitFor("[done-lexer]");
    chat.submit("/pin");
    await chat.waitFor(/Pinned \w+\. Every later compaction carries it verbatim\./);
    const pin = world.entries().find((e) => e.type === "custom" && e.customType === "bonsai.pin");
    const request = world.entries().find((e) => e.type === "message" && (e.message as { role?: string }).role === "user");
    assert.deepEqual(pin?.data, { targetId: request?.id, pinned: true });
    await askAbout(chat, ["parser", "printer"]);

    chat.submit("/compact");
    await chat.waitFor(/✓ Compacted: /);
    const compaction = world.entries().find((e) => e.type === "compaction");
    assert.match(String(compaction?.summary), /## Pinned \(verbatim\)\n\n_\(entry \w+\)_\n> tell me about the lexer, and never use regular expressions in it/);

    chat.submit("/undo-compact");
    await chat.waitFor(/Compaction \w+ undone: continuing from before it, 0 entries after it copied\./);
    chat.submit("tell me about the tests");
    await chat.waitFor("[done-tests]");
    const sent = JSON.stringify(world.server.requests.at(-1));
    assert.match(sent, /tell me about the lexer/, "the full conversation is sent again");
    assert.doesNotMatch(sent, /Something about parsing/, "without the summary");

    chat.submit("/unpin");
    await chat.waitFor(/Unpinned \w+\./);
  } finally {
    await world.cleanup();
  }
});

test("/compact --preview puts the summary in the editor: Escape writes nothing, Enter writes exactly what was edited", async () => {
  const world = await parsingWorld();
  const compactions = () => world.entries().filter((e) => e.type === "compaction");
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    await askAbout(chat, ["lexer", "parser", "printer"]);

    chat.submit("/compact --preview");
    await chat.waitFor(/The summary is in the editor/);
    await chat.waitFor(/Something about parsing\./);
    chat.keys("Escape");
    await chat.waitFor(/Compaction cancelled\./);
    assert.equal(compactions().length, 0, "nothing is written on cancel");

    chat.submit("/compact --preview");
    await chat.waitFor((screen) => screen.split("The summary is in the editor").length > 2, { history: true });
    chat.type(" Keep the lexer free of regular expressions.");
    chat.keys("Enter");
    await chat.waitFor(/✓ Compacted: /);
    const stored = compactions();
    assert.equal(stored.length, 1);
    const summary = String(stored[0].summary);
    assert.match(summary, /^## Goal\nSomething about parsing\./, "the summary the model made is what the editor held");
    assert.ok(summary.endsWith(" Keep the lexer free of regular expressions."), `the user's edit is stored as typed:\n${summary}`);
  } finally {
    await world.cleanup();
  }
});

test("after /compact the chat's agent reads what the summary dropped with history_search, then history_read", async () => {
  const calls: string[] = [];
  const world = await chatWorld(
    (request, kind) => {
      if (kind === "compaction") return { text: "## Goal\nSomething about parsing." };
      const said = lastText(request);
      const asked = JSON.stringify(request.messages).includes("which port did the parser server use");
      if (said.includes("about the parser")) return { text: `The parser server listens on port 7311. ${topicAnswer(request).text}` };
      if (!asked) return topicAnswer(request);
      const last = request.messages.at(-1);
      if (last?.role !== "tool") {
        calls.push("history_search");
        return { text: "Looking back.", toolCalls: [{ name: "history_search", arguments: { query: "parser port" } }] };
      }
      if (calls.length === 1) {
        const id = /([0-9a-f]{8}) assistant/.exec(said)?.[1] ?? "none";
        calls.push(`history_read ${id}`);
        return { text: "Reading it.", toolCalls: [{ name: "history_read", arguments: { ids: [id] } }] };
      }
      return { text: `It was port ${/port (\d+)/.exec(said)?.[1] ?? "unknown"}.` };
    },
    { compaction: { keepRecentTokens: 1000 } },
  );
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    await askAbout(chat, ["parser", "lexer", "printer"]);
    chat.submit("/compact");
    await chat.waitFor(/✓ Compacted: /);
    const summary = String(world.entries().find((e) => e.type === "compaction")?.summary);
    assert.doesNotMatch(summary, /port 7311/, "the summary dropped the detail");
    chat.submit("which port did the parser server use?");
    await chat.waitFor("It was port 7311.");
    assert.equal(calls[0], "history_search");
    assert.match(calls[1] ?? "", /^history_read [0-9a-f]{8}$/);
  } finally {
    await world.cleanup();
  }
});
