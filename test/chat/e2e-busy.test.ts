/**
 * Issue 19, items 4 and 9, end to end: `/compact` in a short chat says what is the case, without
 * the word "failed"; a compaction that takes a while shows its elapsed seconds.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { askAbout, chatWorld, lastText, longText } from "../helpers/chat-e2e.js";

test("/compact with nothing to compact is a notice; a slow compaction counts its seconds", async () => {
  const world = await chatWorld(
    (request, kind) => {
      if (kind === "compaction") return { text: "## Goal\nTalk about the parts.", delayMs: 2500 };
      const topic = /about the (\w+)/.exec(lastText(request))?.[1];
      return { text: topic ? `${longText(topic)} [done-${topic}]` : "Hi. [done-nothing]" };
    },
    { compaction: { keepRecentTokens: 1000 } },
  );
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    chat.submit("hello");
    await chat.waitFor("[done-nothing]");
    chat.submit("/compact");
    const nothing = await chat.waitFor(/Nothing to compact yet/);
    assert.match(nothing.replace(/\s*\n\s*/g, " "), /Nothing to compact yet: the whole conversation \(\d+ tokens\) fits in the [\d,]+ tokens kept verbatim/);
    assert.doesNotMatch(nothing, /fail/i);
    await askAbout(chat, ["lexer", "parser"]);
    chat.submit("/compact");
    await chat.waitFor(/Compacting… \(esc to cancel\) · [12]s/);
    await chat.waitFor("✓ Compacted:");
    chat.submit("/quit");
    await chat.waitFor("[exited 0]");
  } finally {
    await world.cleanup();
  }
});
