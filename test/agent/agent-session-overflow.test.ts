/**
 * Overflow recovery over a real socket: a scripted OpenAI-compatible server on 127.0.0.1
 * answers with a real HTTP 400 carrying a provider's overflow message (or a "silent" overflow:
 * a normal answer whose prompt was larger than the window). The session compacts with the
 * real pi-ai summarizer against the same server and continues the agent.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { AgentSession } from "../../src/agent/agent-session.js";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { SessionManager } from "../../src/session/manager.js";
import { openAiCompatibleModel } from "../../src/summarizer/pi-ai.js";
import { type ChatRequest, type ScriptedReply, type ScriptedServer, startScriptedServer, systemText } from "../helpers/sse-server.js";

const AGENT_PROMPT = "You are a careful assistant.";
const OVERFLOW = "This model's maximum context length is 4096 tokens. However, your messages resulted in 5210 tokens.";

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const isAgentRequest = (request: ChatRequest) => systemText(request) === AGENT_PROMPT;
const lastUserText = (request: ChatRequest): string => {
  const user = [...request.messages].reverse().find((m) => m.role === "user");
  if (typeof user?.content === "string") return user.content;
  return ((user?.content ?? []) as { text?: string }[]).map((b) => b.text ?? "").join("");
};

/** Agent turns answered by `agent`; summarizer requests get a fixed summary. */
async function setup(agent: (request: ChatRequest, agentCall: number) => ScriptedReply) {
  let agentCalls = 0;
  server = await startScriptedServer((request) =>
    isAgentRequest(request) ? agent(request, agentCalls++) : { text: "## Goal\nThe user asked numbered questions.", promptTokens: 50 },
  );
  const model = openAiCompatibleModel({ baseUrl: server.baseUrl, modelId: "scripted", contextWindow: 4096, maxTokens: 512 });
  const manager = SessionManager.inMemory("/project");
  const session = await AgentSession.create({
    sessionManager: manager,
    model: model as never,
    systemPrompt: AGENT_PROMPT,
    getApiKey: () => "test-key",
    settings: { compaction: { reserveTokens: 500, keepRecentTokens: 1 }, retry: { baseDelayMs: 1 } },
    prune: false,
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((e) => events.push(e));
  return { session, manager, events, srv: server };
}

const autoEvents = (events: AgentSessionEvent[]) => events.filter((e) => e.type.startsWith("auto_"));
const textOf = (m: AgentMessage) => ("content" in m && Array.isArray(m.content) ? m.content.map((b) => ("text" in b ? b.text : "")).join("") : "");

describe("overflow recovery over HTTP", () => {
  test("a 400 overflow: the failed answer leaves the context, the session compacts and continues", async () => {
    const { session, manager, events, srv } = await setup((request, n) => {
      if (n === 2) return { status: 400, message: OVERFLOW };
      return { text: `answer to ${lastUserText(request).slice(0, 12)}`, promptTokens: 300 };
    });
    // long enough that the model's summary is smaller than the turns it replaces (the no-growth guard)
    const detail = "with the details of the task spelled out at length. ".repeat(12);
    await session.prompt(`question one ${detail}`);
    await session.prompt(`question two ${detail}`);
    await session.prompt(`question three ${detail}`);

    const auto = autoEvents(events);
    assert.deepEqual(auto[0], { type: "auto_compaction_start", reason: "overflow" });
    const end = auto[1] as Extract<AgentSessionEvent, { type: "auto_compaction_end" }>;
    assert.equal(end.type, "auto_compaction_end");
    assert.equal(end.willRetry, true);
    assert.equal(end.aborted, false);
    assert.match(end.result?.summary ?? "", /^## Goal/);
    assert.equal(auto.length, 2);
    assert.equal(events.some((e) => e.type === "auto_retry_start"), false, "an overflow is not a transient error");

    // the file keeps everything, including the failed answer; the context does not
    const failed = manager.getEntries().filter((e) => e.type === "message" && e.message.role === "assistant" && e.message.stopReason === "error");
    assert.equal(failed.length, 1);
    assert.ok(failed[0].type === "message" && failed[0].message.role === "assistant");
    assert.match(failed[0].message.errorMessage ?? "", /maximum context length is 4096 tokens/);
    assert.equal(manager.getEntries().filter((e) => e.type === "compaction").length, 1);
    const context = session.messages;
    assert.equal(context[0].role, "compactionSummary");
    assert.equal(context.some((m) => m.role === "assistant" && m.stopReason === "error"), false);
    assert.equal(textOf(context.at(-1) as AgentMessage), "answer to question thr");

    // the retried request carried the summary instead of the old turns
    const agentRequests = srv.requests.filter(isAgentRequest);
    assert.equal(agentRequests.length, 4);
    const retried = JSON.stringify(agentRequests[3].messages);
    assert.match(retried, /## Goal/);
    assert.doesNotMatch(retried, /answer to question one/);
  });

  test("a second overflow in the same turn ends with Context overflow recovery failed", async () => {
    const { session, manager, events, srv } = await setup((_request, n) =>
      n >= 2 ? { status: 400, message: OVERFLOW } : { text: `answer ${n}`, promptTokens: 300 },
    );
    await session.prompt("question one");
    await session.prompt("question two");
    await session.prompt("question three");
    const ends = events.filter((e): e is Extract<AgentSessionEvent, { type: "auto_compaction_end" }> => e.type === "auto_compaction_end");
    assert.equal(ends.length, 2);
    assert.equal(ends[0].willRetry, true);
    assert.match(ends[1].errorMessage ?? "", /^Context overflow recovery failed: /);
    assert.equal(manager.getEntries().filter((e) => e.type === "compaction").length, 1);
    assert.equal(srv.requests.filter(isAgentRequest).length, 4, "one retry, then it stops");
  });

  test("a silent overflow (prompt larger than the window, answered normally) is recovered too", async () => {
    const { session, manager, events } = await setup((_request, n) =>
      n === 2 ? { text: "truncated answer", promptTokens: 5000 } : { text: `answer ${n}`, promptTokens: 300 },
    );
    await session.prompt("question one");
    await session.prompt("question two");
    await session.prompt("question three");
    assert.deepEqual(
      autoEvents(events).map((e) => e.type + (e.type === "auto_compaction_start" ? `:${e.reason}` : "")),
      ["auto_compaction_start:overflow", "auto_compaction_end"],
    );
    assert.equal(manager.getEntries().filter((e) => e.type === "compaction").length, 1);
    assert.equal(textOf(session.messages.at(-1) as AgentMessage), "answer 3");
    assert.equal(session.messages.some((m) => textOf(m) === "truncated answer"), false);
  });

  test("a 400 that is not an overflow is neither retried nor compacted", async () => {
    const { session, events } = await setup((_request, n) =>
      n === 1 ? { status: 400, message: "Invalid value for 'tools'" } : { text: `answer ${n}`, promptTokens: 300 },
    );
    await session.prompt("question one");
    await session.prompt("question two");
    assert.deepEqual(autoEvents(events), []);
    const last = session.messages.at(-1) as AgentMessage;
    assert.ok(last.role === "assistant" && last.stopReason === "error");
  });
});
