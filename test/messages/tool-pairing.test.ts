/**
 * withoutStrayToolResults: a request never carries a tool result that answers no open call of
 * the assistant message before it, and keeps everything else, in order. Checked on hand-made
 * cases, on random conversations against the rule restated independently, and end to end: an
 * AgentSession resumed from a session with a stray result sends a request without it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { withoutStrayToolResults } from "../../src/messages/tool-pairing.js";
import type { AssistantMessage, LlmMessage, ToolResultMessage } from "../../src/format/message-types.js";
import { SessionManager } from "../../src/session/manager.js";
import { seededRandom } from "../../src/util/seeded-random.js";
import { createHarness } from "../helpers/agent-harness.js";
import { assistantMsg, userMsg } from "../helpers/session-builders.js";

function calling(ids: string[], stopReason: AssistantMessage["stopReason"] = "toolUse"): AssistantMessage {
  const message = assistantMsg("calling", { stopReason });
  message.content = [...message.content, ...ids.map((id) => ({ type: "toolCall" as const, id, name: "read", arguments: { path: id } }))];
  return message;
}

function result(id: string): ToolResultMessage {
  return { role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: `out ${id}` }], isError: false, timestamp: 0 };
}

const ids = (messages: readonly LlmMessage[]) =>
  messages.map((m) => (m.role === "toolResult" ? `r:${m.toolCallId}` : m.role === "user" ? "u" : "a"));

describe("withoutStrayToolResults", () => {
  it("keeps paired results and leaves a well-formed conversation as it was", () => {
    const messages = [userMsg("go"), calling(["c1", "c2"]), result("c2"), result("c1"), assistantMsg("done"), userMsg("next")];
    assert.deepEqual(withoutStrayToolResults(messages), messages);
  });

  it("drops a result with no call, a second result for one call, and results after a user message", () => {
    const messages = [
      userMsg("go"),
      result("ghost"), // before any call
      calling(["c1"]),
      result("c1"),
      result("c1"), // answered already
      result("c9"), // never called
      userMsg("meanwhile"),
      calling(["c2"]),
      userMsg("interrupts"),
      result("c2"), // the call is closed by the user message in between
    ];
    assert.deepEqual(ids(withoutStrayToolResults(messages)), ["u", "a", "r:c1", "u", "a", "u"]);
  });

  it("drops the results of a failed or stopped answer, which pi-ai leaves out of requests", () => {
    for (const stopReason of ["error", "aborted"] as const) {
      const messages = [userMsg("go"), calling(["c1"], stopReason), result("c1"), userMsg("again")];
      assert.deepEqual(ids(withoutStrayToolResults(messages)), ["u", "a", "u"], stopReason);
    }
  });

  it("on random conversations: only stray results go, and the output is stable", () => {
    const random = seededRandom(42);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
    for (let round = 0; round < 500; round++) {
      const messages: LlmMessage[] = [];
      for (let k = 0; k < 12; k++) {
        const roll = random();
        if (roll < 0.2) messages.push(userMsg(`u${k}`));
        else if (roll < 0.45) messages.push(calling(["a", "b", "c"].slice(0, Math.floor(random() * 3)), pick(["toolUse", "stop", "error", "aborted"] as const)));
        else messages.push(result(pick(["a", "b", "c", "d"])));
      }
      const kept = withoutStrayToolResults(messages);
      // the rule restated: walk the output, each result must close a call of the assistant before it
      let open: string[] = [];
      for (const m of kept) {
        if (m.role === "assistant") {
          open = m.stopReason === "error" || m.stopReason === "aborted" ? [] : m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : []));
        } else if (m.role === "user") open = [];
        else {
          assert.ok(open.includes(m.toolCallId), `round ${round}: stray result ${m.toolCallId} kept`);
          open = open.filter((id) => id !== m.toolCallId);
        }
      }
      // nothing but tool results is ever dropped, and the order is kept
      assert.deepEqual(kept.filter((m) => m.role !== "toolResult"), messages.filter((m) => m.role !== "toolResult"));
      const positions = kept.map((m) => messages.indexOf(m));
      assert.deepEqual(positions, [...positions].sort((x, y) => x - y));
      assert.deepEqual(withoutStrayToolResults(kept), kept, "a second pass changes nothing");
    }
  });

  it("an AgentSession resumed from a session with a stray result sends a request without it", async () => {
    const manager = SessionManager.inMemory("/project");
    manager.appendMessage(userMsg("read the config"));
    manager.appendMessage(calling(["c1"]));
    manager.appendMessage(result("c1"));
    manager.appendMessage(result("stray")); // e.g. written by another tool
    manager.appendMessage(assistantMsg("read it"));
    const sent: Context[] = [];
    const harness = await createHarness({
      responses: [
        (context: Context) => {
          sent.push(context);
          return fauxAssistantMessage("ok");
        },
      ],
      session: { sessionManager: manager },
    });
    try {
      await harness.session.prompt("and now?");
      assert.equal(sent.length, 1);
      const results = sent[0].messages.filter((m) => m.role === "toolResult").map((m) => (m as ToolResultMessage).toolCallId);
      assert.deepEqual(results, ["c1"], "the stray result is not in the request");
      assert.equal(
        manager.getEntries().filter((e) => e.type === "message" && e.message.role === "toolResult").length,
        2,
        "the session keeps both entries",
      );
    } finally {
      harness.cleanup();
    }
  });
});
