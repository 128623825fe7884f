/**
 * Issue 24: each agent's context rule (format/dialects/), tested as pure functions over paths.
 * The real agents check the same rules in `npm run test:oracle`; these run in `npm test`, without
 * them, and name the behaviour each rule must keep.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { contextFromPath, entriesInContext } from "../../src/format/context.js";
import { type Dialect, DIALECTS, dialectOfEntries } from "../../src/format/dialects/index.js";
import { collectEntriesForBranchSummary } from "../../src/compaction/branch-summary.js";
import { systemCheckpoint } from "../../src/format/dialects/pi-1.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { planCompaction } from "../../src/compaction/prepare.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../../src/compaction/settings.js";
import { SessionManager } from "../../src/session/manager.js";
import { assistantMsg, entry, msg, userEntry, userMsg } from "../helpers/session-builders.js";

/** A root-first path: each entry's parent is the one before. */
function chain(...entries: SessionEntry[]): SessionEntry[] {
  return entries.map((e, i) => ({ ...e, parentId: i === 0 ? null : entries[i - 1].id }));
}

const texts = (messages: readonly AgentMessage[]) =>
  messages.map((m) => {
    if (m.role === "compactionSummary" || m.role === "branchSummary") return `${m.role}: ${m.summary}`;
    const content = (m as { content?: unknown }).content;
    if (typeof content === "string") return `${m.role}: ${content}`;
    const blocks = (content as { type: string; text?: string; name?: string }[]) ?? [];
    return `${m.role}: ${blocks.map((b) => (b.type === "text" ? b.text : `[${b.type}${b.name ? ` ${b.name}` : ""}]`)).join(" ")}`;
  });

const system = (id: string, content: string | null, more: Record<string, unknown> = {}) => msg(id, null, { role: "system", content, timestamp: 1, ...more });
const edit = (id: string, targetId: string, replacement: { content: unknown } | null) => entry("context_edit", id, null, { targetId, replacement });
const compaction = (id: string, firstKeptEntryId: string, summary: string, more: Record<string, unknown> = {}) =>
  entry("compaction", id, null, { summary, firstKeptEntryId, tokensBefore: 100, ...more });
const toolCall = (id: string, callId: string, more: Record<string, unknown> = {}) =>
  msg(id, null, { ...assistantMsg(""), content: [{ type: "toolCall", id: callId, name: "read", arguments: {} }], stopReason: "toolUse", ...more });
const toolResult = (id: string, callId: string) => msg(id, null, { role: "toolResult", toolCallId: callId, toolName: "read", content: [{ type: "text", text: "out" }], isError: false, timestamp: 1 });

describe("which dialect a session is in", () => {
  it("pi 1.x from a context edit, a usage entry or a system message; omp from its own entries; else pi", () => {
    assert.equal(dialectOfEntries([userEntry("u", null, "hi")]), "pi");
    assert.equal(dialectOfEntries([edit("e", "u", null)]), "pi-1");
    assert.equal(dialectOfEntries([entry("usage", "g", null)]), "pi-1");
    assert.equal(dialectOfEntries([system("s", "prompt")]), "pi-1");
    assert.equal(dialectOfEntries([compaction("c", "c", "s", { systemMessage: { role: "system", content: "", timestamp: 0 } })]), "pi-1");
    assert.equal(dialectOfEntries([entry("reset_boundary", "z", null)]), "omp");
    assert.equal(dialectOfEntries([entry("title_change", "t", null), system("s", "prompt")]), "omp");
    // older omp spellings keep pi's rule, as before dialects
    assert.equal(dialectOfEntries([entry("model_change", "m", null, { model: "a/b" }), entry("ttsr_injection", "t", null, { injectedRules: [] })]), "pi");
  });
});

describe("pi 1.x: context edits and system checkpoints", () => {
  const rule = DIALECTS["pi-1"];
  it("the latest edit of a target wins, null leaves it out, a string becomes a text block for assistants only", () => {
    const path = chain(
      userEntry("u1", null, "original request"),
      msg("a1", null, assistantMsg("original answer")),
      entry("custom_message", "cm", null, { customType: "note", content: "a note", display: true }),
      userEntry("u2", null, "a failed try"),
      edit("e1", "u1", { content: "first edit" }),
      edit("e2", "u1", { content: "second edit" }),
      edit("e3", "a1", { content: "edited answer" }),
      edit("e4", "u2", null),
      edit("e5", "cm", { content: "edited note" }),
    );
    const { messages } = contextFromPath(path, rule);
    assert.deepEqual(texts(messages), ["user: second edit", "assistant: edited answer", "custom: edited note"]);
    assert.deepEqual((messages[1] as { content: unknown }).content, [{ type: "text", text: "edited answer" }]);
    assert.equal((messages[2] as { content: unknown }).content, "edited note");
    // pi up to 0.86 ignores the edits
    assert.equal(contextFromPath(path, DIALECTS.pi).messages.length, 4);
  });

  it("an edit of an entry a compaction summarized changes nothing; system messages kept by a compaction give way to its checkpoint", () => {
    const checkpoint = { role: "system", content: "prompt at the compaction", timestamp: 5 };
    const path = chain(
      system("s1", "base prompt"),
      userEntry("u1", null, "summarized"),
      system("s2", "kept system message"),
      userEntry("u2", null, "kept"),
      compaction("c1", "s2", "summary", { systemMessage: checkpoint }),
      edit("e1", "u1", { content: "edit of a summarized entry" }),
      system("s3", "after the compaction"),
    );
    assert.deepEqual(texts(contextFromPath(path, rule).messages), ["system: prompt at the compaction", "compactionSummary: summary", "user: kept", "system: after the compaction"]);
  });

  it("the checkpoint folds the system messages as pi replays them", () => {
    const messages = [system("s1", "base", { sections: { a: "A", b: "B" }, toolsAdded: [{ name: "read" }, { name: "bash" }] }), system("s2", null, { sections: { a: null, c: "C" }, toolsRemoved: [{ name: "bash" }] }), system("s3", "more")].map(
      (e) => (e as { message: AgentMessage }).message,
    );
    assert.deepEqual(systemCheckpoint(messages, 9), { role: "system", content: "base\n\nmore", sections: { b: "B", c: "C" }, toolsAdded: [{ name: "read" }], timestamp: 9 });
    assert.equal(systemCheckpoint([], 9), undefined);
  });
});

describe("oh-my-pi 18: reset boundaries and failed turns", () => {
  const rule = DIALECTS.omp;
  it("the context starts after the latest /clear unless a compaction follows it", () => {
    const cleared = chain(userEntry("u1", null, "old"), entry("reset_boundary", "z1", null), userEntry("u2", null, "new"));
    assert.deepEqual(texts(contextFromPath(cleared, rule).messages), ["user: new"]);
    assert.deepEqual(entriesInContext(cleared, rule).map((e) => e.id), ["u2"]);
    const compactedAfter = chain(...cleared, compaction("c1", "u2", "summary"), userEntry("u3", null, "later"));
    assert.deepEqual(texts(contextFromPath(compactedAfter, rule).messages), ["compactionSummary: summary", "user: new", "user: later"]);
    const clearedAfter = chain(...compactedAfter, entry("reset_boundary", "z2", null), userEntry("u4", null, "last"));
    assert.deepEqual(texts(contextFromPath(clearedAfter, rule).messages), ["user: last"]);
  });

  it("failed turns go with their results, unanswered calls are stripped, a retried turn is left out", () => {
    const path = chain(
      userEntry("q1", null, "question"),
      toolCall("x1", "c1", { stopReason: "aborted" }),
      toolResult("r1", "c1"),
      msg("x2", null, { ...assistantMsg("empty"), content: [], stopReason: "error" }),
      msg("x3", null, { ...assistantMsg("retried"), retryRecovery: { attempt: 1 } }),
      msg("ok", null, assistantMsg("answer")),
      toolCall("a2", "c2"),
    );
    assert.deepEqual(texts(contextFromPath(path, rule).messages), ["user: question", "assistant: answer"]);
    assert.equal(contextFromPath(path, DIALECTS.pi).messages.length, 7, "pi keeps them all");
  });

  it("a compaction after a /clear summarizes only what followed it, and not the summary before it", () => {
    const long = "word ".repeat(2000);
    const path = chain(
      userEntry("u0", null, `cleared ${long}`),
      compaction("c0", "u0", "an old summary"),
      entry("reset_boundary", "z1", null),
      userEntry("u1", null, `kept task ${long}`),
      msg("a1", null, assistantMsg(long)),
      userEntry("u2", null, "recent"),
      msg("a2", null, assistantMsg("recent answer")),
    );
    const plan = planCompaction(path, { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 50 }, rule);
    assert.ok(plan.ok, !plan.ok ? plan.message : "");
    if (!plan.ok) return;
    const { previousSummary, messagesToSummarize, turnPrefixMessages } = plan.preparation;
    assert.equal(previousSummary, undefined);
    const summarized = JSON.stringify([...messagesToSummarize, ...turnPrefixMessages]);
    assert.doesNotMatch(summarized, /cleared/);
    assert.match(summarized, /kept task/);
    // pi's rule, which knows no /clear, would summarize the cleared turn again
    const piPlan = planCompaction(path, { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 50 }, DIALECTS.pi);
    assert.ok(piPlan.ok && piPlan.preparation.previousSummary === "an old summary");
  });

  it("a branch left after a /clear is summarized from what its context showed, not from the cleared turns", () => {
    const path = chain(
      userEntry("u1", null, "cleared request"),
      msg("a1", null, assistantMsg("cleared answer")),
      entry("reset_boundary", "z1", null),
      userEntry("u2", null, "shown request"),
      msg("x1", null, { ...assistantMsg("failed"), stopReason: "error" }),
      msg("a2", null, assistantMsg("shown answer")),
    );
    const byId = new Map(path.map((e) => [e.id, e]));
    const source = {
      getEntry: (id: string) => byId.get(id),
      getBranch: (id: string) => {
        const out: SessionEntry[] = [];
        for (let e = byId.get(id); e; e = e.parentId ? byId.get(e.parentId) : undefined) out.unshift(e);
        return out;
      },
    };
    const side = userEntry("s1", null, "elsewhere");
    byId.set("s1", { ...side, parentId: null });
    const ids = (d?: Dialect) => collectEntriesForBranchSummary(source, "a2", "s1", d).entries.map((e) => e.id);
    assert.deepEqual(ids(rule), ["u2", "a2"]);
    assert.deepEqual(ids(), ["u1", "a1", "z1", "u2", "x1", "a2"], "without a dialect, every entry as before");
  });

  it("the model is the latest model_change once there is one, then assistants no longer change it", () => {
    const path = chain(
      msg("a0", null, assistantMsg("x", { provider: "google", model: "gemini" })),
      entry("model_change", "m1", null, { model: "anthropic/claude-sonnet-4-5" }),
      msg("a1", null, assistantMsg("y", { provider: "openai", model: "gpt-5" })),
      entry("thinking_level_change", "k1", null, { thinkingLevel: null }),
    );
    assert.deepEqual(contextFromPath(path, rule).model, { provider: "anthropic", modelId: "claude-sonnet-4-5" });
    assert.equal(contextFromPath(path, rule).thinkingLevel, "off");
    assert.deepEqual(contextFromPath(path, DIALECTS.pi).model, { provider: "openai", modelId: "gpt-5" });
  });
});

describe("written in the file's dialect", () => {
  const session = (system: boolean) => {
    const s = SessionManager.inMemory("/work");
    if (system) s.appendMessage({ role: "system", content: "You are a coding agent.", toolsAdded: [{ name: "read" }], timestamp: 1 });
    const u1 = s.appendMessage(userMsg("first"));
    s.appendMessage(assistantMsg("one"));
    s.appendMessage(userMsg("second"));
    const left = s.appendMessage(assistantMsg("two"));
    return { s, u1, left };
  };

  it("a branch summary's fromId: the destination for pi up to 0.86 and omp, the leaf left for pi 1.x", () => {
    for (const [system, expected] of [[false, "destination"], [true, "left"]] as const) {
      const { s, u1, left } = session(system);
      const id = s.branchWithSummary(u1, "the branch that was left");
      assert.equal((s.getEntry(id) as { fromId: string }).fromId, expected === "left" ? left : u1);
    }
  });

  it("a compaction in a pi 1.x session carries the system checkpoint; in a pi session it does not", () => {
    for (const system of [true, false]) {
      const { s, u1 } = session(system);
      const id = s.appendCompaction("summary", u1, 100);
      const entry = s.getEntry(id) as { systemMessage?: { content: string; toolsAdded?: unknown[] } };
      if (system) assert.deepEqual([entry.systemMessage?.content, entry.systemMessage?.toolsAdded], ["You are a coding agent.", [{ name: "read" }]]);
      else assert.equal(entry.systemMessage, undefined);
      // the context after it sends the same prompt as before: the checkpoint, then the summary
      assert.deepEqual(texts(s.buildSessionContext().messages).slice(0, system ? 2 : 1), system ? ["system: You are a coding agent.", "compactionSummary: summary"] : ["compactionSummary: summary"]);
    }
  });
});
