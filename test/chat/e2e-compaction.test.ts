/**
 * `bonsai chat` compacting, end to end in a pseudo-terminal against a scripted OpenAI-compatible server:
 * `/compact` with instructions, automatic compaction at the threshold (with a message typed
 * during it queued and sent afterwards), and recovery from a context overflow.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { chatWorld, lastText, longText, requestKind, topicAnswer } from "../helpers/chat-e2e.js";

const SUMMARY = "## Goal\nMake the parser fast.\n\n## Progress\n- measured the tokenizer";

test("/compact: Escape cancels it; with instructions it summarizes older turns and shows the compaction", async () => {
  const world = await chatWorld(
    (request, kind) => {
      if (kind === "compaction") return { text: SUMMARY, delayMs: 800 };
      return topicAnswer(request);
    },
    { compaction: { keepRecentTokens: 1000 } },
  );
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    for (const [i, topic] of ["the lexer", "the parser", "the printer"].entries()) {
      chat.submit(`tell me about ${topic}`);
      await chat.waitFor(`[done-${topic.split(" ")[1]}]`);
      assert.equal(world.server.requests.length, i + 1);
    }
    chat.submit("/compact");
    await chat.waitFor("Compacting… (esc to cancel)");
    chat.keys("Escape");
    await chat.waitFor("Compaction cancelled.");
    assert.equal(world.entries().filter((e) => e.type === "compaction").length, 0, "a cancelled compaction writes nothing");

    chat.submit("/compact focus on the parser");
    await chat.waitFor("Compacting… (esc to cancel)");
    await chat.waitFor("✓ Compacted:");
    const screen = chat.screen(true);
    assert.match(screen, /\[compaction\] [\d.k]+ tokens of history summarized:/);
    assert.match(screen, /Make the parser fast\./);
    assert.match(screen, /with the instructions "focus on the parser"/);
    assert.match(screen, /\?\/128k tokens/, "the footer does not know the size until the next answer");

    const summaryRequest = world.server.requests.find((r) => r.messages.some((m) => JSON.stringify(m.content).includes("focus on the parser")));
    assert.ok(summaryRequest, "the instructions reached the summarizer");
    const compactions = world.entries().filter((e) => e.type === "compaction");
    assert.equal(compactions.length, 1);
    assert.match(String(compactions[0].summary), /^## Goal\nMake the parser fast\./);
  } finally {
    await world.cleanup();
  }
});

test("automatic compaction at the threshold shows why, and a message typed meanwhile is sent after it", async () => {
  const world = await chatWorld(
    (request, kind) => {
      if (kind === "compaction") return { text: SUMMARY, delayMs: 1500 };
      const said = lastText(request);
      if (said.includes("queued question")) return { text: "You asked: queued question" };
      if (said.includes("second")) return { text: `${longText("the second topic")} [done-second]`, promptTokens: 3600 };
      return { text: `${longText("the first topic")} [done-first]`, promptTokens: 1200 };
    },
    { compaction: { reserveTokens: 1000, keepRecentTokens: 1000 } },
  );
  try {
    const chat = world.start(["--context-window", "4000"]);
    await chat.waitFor(/tokens/);
    chat.submit("first");
    await chat.waitFor("[done-first]");
    chat.submit("second");
    const during = await chat.waitFor("Auto-compacting… (esc to cancel)");
    assert.match(during, /Auto-compacting: the context \(3\.6k tokens\) passed the threshold of 3k in a 4k-token window/);
    assert.match(during, /3\.6k\/4k tokens \(90\.\d%\)/);
    chat.submit("queued question");
    await chat.waitFor("Queued (1, sent after the compaction): queued question");
    await chat.waitFor("✓ Auto-compaction (threshold)");
    await chat.waitFor("You asked: queued question");

    const kinds = world.server.requests.map((r) => (lastText(r).includes("queued question") ? "queued" : requestKind(r)));
    const compactionAt = kinds.indexOf("compaction");
    const queuedAt = kinds.indexOf("queued");
    assert.ok(compactionAt >= 0 && queuedAt > compactionAt, `the queued message was sent after the summary request (${kinds.join(", ")})`);
    assert.equal(world.entries().filter((e) => e.type === "compaction").length, 1);
  } finally {
    await world.cleanup();
  }
});

test("a context overflow is announced, compacted and the turn retried", async () => {
  let overflowed = false;
  const world = await chatWorld(
    (request, kind) => {
      if (kind === "compaction") return { text: SUMMARY, delayMs: 1200 };
      const said = lastText(request);
      if (said.includes("third")) {
        if (!overflowed) {
          overflowed = true;
          return { status: 400, message: "This model's maximum context length is 4000 tokens. However, your messages resulted in 5200 tokens." };
        }
        return { text: "Recovered answer." };
      }
      const which = said.includes("second") ? "second" : "first";
      return { text: `${longText(`the ${which} topic`)} [done-${which}]`, promptTokens: 1500 };
    },
    { compaction: { reserveTokens: 1000, keepRecentTokens: 1000 } },
  );
  try {
    const chat = world.start(["--context-window", "4000"]);
    await chat.waitFor(/tokens/);
    chat.submit("first");
    await chat.waitFor("[done-first]");
    chat.submit("second");
    await chat.waitFor("[done-second]");
    chat.submit("third");
    const during = await chat.waitFor("Context overflow detected, Auto-compacting… (esc to cancel)");
    assert.match(during, /maximum context length is 4000 tokens/);
    await chat.waitFor("Recovered answer.");
    const after = chat.screen(true);
    assert.match(after, /✓ Auto-compaction \(overflow\): [\d,]+ tokens of context; kept from entry \w+; retrying the turn\./);

    const retry = world.server.requests.at(-1)!;
    assert.ok(JSON.stringify(retry.messages).includes("Make the parser fast."), "the retried turn carries the summary");
    assert.ok(!JSON.stringify(retry.messages).includes("Point 60 about the first topic"), "and no longer the first answer");
    assert.equal(world.entries().filter((e) => e.type === "compaction").length, 1);
  } finally {
    await world.cleanup();
  }
});
