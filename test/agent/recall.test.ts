/**
 * Issue 28, item 5: an agent that can look back. After a compaction summarized a detail away, an
 * agent given `recall` answers a question about it by calling history_search, then history_read,
 * and its answer comes from what the tool returned. The tools search every entry (pruned output
 * from its original), are bounded, redact secrets, and write nothing.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { READ_MAX_CHARS, RECALL_NOTE, readHistory, recallTools, searchHistory } from "../../src/agent/recall.js";
import { SessionManager } from "../../src/session/manager.js";
import { bigText, createHarness, type Harness, reply } from "../helpers/agent-harness.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

/** The text of the newest tool result the model was sent. */
const lastToolResult = (context: Context): string => {
  const result = [...context.messages].reverse().find((m) => m.role === "toolResult");
  return result && result.role === "toolResult" ? result.content.map((b) => (b.type === "text" ? b.text : "")).join("") : "";
};

describe("recall tools in an agent", () => {
  test("a detail only before the latest compaction is found with history_search, then read with history_read", async () => {
    let foundId = "";
    harness = await createHarness({
      contextWindow: 100_000,
      persisted: true,
      settings: { compaction: { keepRecentTokens: 100 } },
      session: { recall: true },
      responses: [
        reply(`I looked it up in the vault: the deploy key id is dk-7731. ${bigText("notes", 200)}`),
        reply("Fine."),
        // the question: search, then read what the search found, then answer from what was read
        () => fauxAssistantMessage([fauxToolCall("history_search", { query: "deploy key" })], { stopReason: "toolUse" }),
        (context) => {
          foundId = /^(\w{8}) assistant /m.exec(lastToolResult(context))?.[1] ?? "";
          return fauxAssistantMessage([fauxToolCall("history_read", { ids: [foundId] })], { stopReason: "toolUse" });
        },
        (context) => fauxAssistantMessage(`It is ${/deploy key id is (\S+?)\./.exec(lastToolResult(context))?.[1] ?? "unknown"}.`),
        reply("Noted again."),
      ],
    });
    const h = harness;
    assert.deepEqual(h.session.agent.state.tools.map((t) => t.name).sort(), ["history_read", "history_search"]);
    await h.session.prompt(`Find the deploy key in the vault. ${bigText("background", 300)}`);
    await h.session.prompt(bigText("more work", 300));
    await h.session.compact();
    const summary = h.manager.buildSessionContext().messages[0];
    assert.equal(summary.role, "compactionSummary");
    assert.equal(summary.role === "compactionSummary" ? summary.summary.split(RECALL_NOTE).length - 1 : 0, 1, "the summary tells the model it can look back");
    assert.doesNotMatch(JSON.stringify(h.session.messages), /dk-7731/, "the detail left the context");

    await h.session.prompt("What is the deploy key id?");
    const answer = h.session.messages.at(-1);
    assert.equal(answer?.role, "assistant");
    assert.match(JSON.stringify(answer), /It is dk-7731\./);
    assert.equal(h.manager.getEntry(foundId)?.type, "message", "the search named the entry");

    // a later compaction writes the note again, once (it is not carried in the previous summary)
    await h.session.compact();
    const again = h.manager.buildSessionContext().messages[0];
    assert.equal(again.role === "compactionSummary" ? again.summary.split(RECALL_NOTE).length - 1 : 0, 1);
  });
});

describe("searchHistory and readHistory", () => {
  const session = SessionManager.inMemory("/p");
  const ask = session.appendMessage(messageOf(u("Use the staging key sk-live-abcdefghijklmnopqrstuvwx for the deploy, port 8443.")));
  session.appendMessage(messageOf(a("", { calls: [{ name: "bash", args: { command: "cat config.toml" } }] })));
  const output = session.appendMessage(messageOf(tr("[pruned: 2,000 tokens]", "bash", { prunedAt: 1 })));
  const archived = new Map([[output, [{ type: "text", text: "listen = 8443\nregion = eu-west-2" }]]]);

  test("every word must appear; pruned output is searched in its original; hits are bounded", () => {
    assert.deepEqual(searchHistory(session.getEntries(), "port 8443").hits.map((h) => h.id), [ask]);
    assert.deepEqual(searchHistory(session.getEntries(), "eu-west-2", 10, archived).hits.map((h) => h.id), [output]);
    assert.equal(searchHistory(session.getEntries(), "eu-west-2").total, 0, "without the archive the notice is all there is");
    assert.equal(searchHistory(session.getEntries(), "8443", 1, archived).hits.length, 1);
    assert.equal(searchHistory(session.getEntries(), "8443", 1, archived).total, 2);
  });

  test("reading is bounded and says what it left out", () => {
    const long = SessionManager.inMemory("/p");
    const ids = Array.from({ length: 5 }, (_, i) => long.appendMessage(messageOf(u(`${i} ${"x".repeat(5000)}`))));
    const text = readHistory(long.getEntries(), ids);
    assert.ok(text.length <= READ_MAX_CHARS + 300, `${text.length} characters`);
    assert.match(text, /more entries not read: ask for fewer at a time/);
  });

  test("the tools redact secrets and write nothing", async () => {
    const [search, read] = recallTools(session);
    const before = session.getEntries().length;
    const found = await search.execute("1", { query: "staging key" });
    const text = found.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    assert.doesNotMatch(text, /sk-live-abcdefghijklmnopqrstuvwx/);
    const readBack = await read.execute("2", { ids: [ask] });
    assert.doesNotMatch(JSON.stringify(readBack), /sk-live-abcdefghijklmnopqrstuvwx/);
    assert.equal(session.getEntries().length, before);
  });
});
