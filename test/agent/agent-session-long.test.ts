/**
 * A long scripted session: hundreds of turns with tool calls through the real Agent, which
 * compacts (and prunes) several times. Nothing the agent produced may be missing from the file,
 * pruning on a turn changes what is sent, not the file (the session's dialect has no context
 * edits: ops/prune.ts requestOnly), and the context stays bounded.
 */
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { type FauxResponseStep, fauxAssistantMessage, fauxToolCall, Type } from "@mariozechner/pi-ai";
import { existsSync } from "node:fs";
import { prunedArchivePath } from "../../src/ops/prune.js";
import { estimateTokens } from "../../src/compaction/tokens.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { loadSessionFile } from "../../src/storage/load.js";
import { SessionManager } from "../../src/session/manager.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { createHarness, type Harness } from "../helpers/agent-harness.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

const TURNS = 300;

test(`${TURNS} turns with tools: several compactions, every message still in the file`, async () => {
  const lookup = {
    name: "lookup",
    label: "Lookup",
    description: "looks something up",
    parameters: Type.Object({ key: Type.String() }),
    execute: async (_id: string, params: { key: string }) => ({
      content: [{ type: "text" as const, text: `value of ${params.key}: ${"data ".repeat(120)}` }],
      details: {},
    }),
  };
  // Every third turn the model looks something up before answering.
  let call = 0;
  const step: FauxResponseStep = (context) => {
    call++;
    const last = context.messages.at(-1);
    if (last?.role === "user") {
      const text = JSON.stringify(last.content);
      const turn = Number(/turn (\d+)/.exec(text)?.[1] ?? 0);
      if (turn % 3 === 0) return fauxAssistantMessage(fauxToolCall("lookup", { key: `k${turn}` }), { stopReason: "toolUse" });
      return fauxAssistantMessage(`answer for turn ${turn}: ${"words ".repeat(30)}`);
    }
    return fauxAssistantMessage(`used the lookup (call ${call})`);
  };
  harness = await createHarness({
    persisted: true,
    contextWindow: 4000,
    settings: { compaction: { reserveTokens: 800, keepRecentTokens: 900 } },
    responses: Array.from({ length: TURNS * 2 + 50 }, () => step),
    session: { tools: [lookup as never], prune: { protectTokens: 400, minimumSavings: 150, protectedTools: [] } },
  });
  const h = harness;
  const produced: AgentMessage[] = [];
  let maxContext = 0;
  let sawPruned = false;
  h.session.subscribe((event) => {
    if (event.type === "message_end") produced.push(JSON.parse(JSON.stringify(event.message)) as AgentMessage);
  });

  for (let turn = 1; turn <= TURNS; turn++) {
    await h.session.prompt(`turn ${turn}: please continue the work ${"detail ".repeat(25)}`);
    const context = h.session.messages.reduce((sum, m) => sum + estimateTokens(m), 0);
    maxContext = Math.max(maxContext, context);
    if (h.session.messages.some((m) => m.role === "toolResult" && m.prunedAt !== undefined)) sawPruned = true;
  }

  const compactions = h.manager.getEntries().filter((e) => e.type === "compaction");
  assert.ok(compactions.length >= 5, `compacted ${compactions.length} times`);
  const ends = h.events.filter((e) => e.type === "auto_compaction_end");
  assert.equal(ends.length, compactions.length);
  assert.ok(ends.every((e) => e.type === "auto_compaction_end" && !e.errorMessage && !e.aborted));
  assert.ok(h.events.some((e) => e.type === "session_pruned"), "pruning ran too");
  assert.ok(maxContext < 4000, `context stayed below the window (max ${maxContext})`);

  // Reopen the file from disk: every message, in order, as the agent produced it (never pruned there).
  const file = h.manager.getSessionFile()!;
  const lastContext = h.session.messages;
  h.manager.close();
  const stored = (loadSessionFile(file).fileEntries.slice(1) as SessionEntry[]).filter((e) => e.type === "message");
  assert.deepEqual(
    stored.map((e) => e.type === "message" && e.message),
    produced,
  );
  assert.equal(existsSync(prunedArchivePath(file)), false, "nothing archived: the file keeps the originals");
  const userTurns = stored.filter((e) => e.type === "message" && e.message.role === "user" && !e.message.synthetic).length;
  assert.equal(userTurns, TURNS);
  assert.ok(sawPruned, "the agent was sent pruned results");

  // The reopened session builds the context the agent last had, with the originals of what it pruned.
  const originals = new Map(produced.flatMap((m) => (m.role === "toolResult" ? [[m.toolCallId, m] as const] : [])));
  const unpruned = lastContext.map((m) => (m.role === "toolResult" && m.prunedAt !== undefined ? originals.get(m.toolCallId) : m));
  assert.ok(unpruned.length > lastContext.filter((m) => m.role !== "toolResult" || m.prunedAt === undefined).length, "the last context held pruned results");
  const reopened = SessionManager.open(file, { readOnly: true });
  const fromFile = reopened.buildSessionContext().messages;
  assert.deepEqual(JSON.parse(JSON.stringify(fromFile)), JSON.parse(JSON.stringify(unpruned)));
});
