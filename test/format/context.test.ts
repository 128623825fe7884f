/**
 * buildSessionContext over plain entry lists (spec section 3 and the cases of 12.2).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildSessionContext, contextFromPath } from "../../src/format/context.js";
import type { PathProblem } from "../../src/format/path.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import {
  assistantEntry,
  assistantMsg,
  entry,
  msg,
  T0,
  userEntry,
  userMsg,
} from "../helpers/session-builders.js";

const roles = (entries: readonly SessionEntry[], leafId?: string | null) =>
  buildSessionContext(entries, leafId).messages.map((m) => m.role);

const texts = (entries: readonly SessionEntry[], leafId?: string | null) =>
  buildSessionContext(entries, leafId).messages.map((m) => {
    if (m.role === "compactionSummary" || m.role === "branchSummary") return `${m.role}:${m.summary}`;
    if (m.role === "user" || m.role === "custom") return typeof m.content === "string" ? m.content : "[blocks]";
    if (m.role === "assistant") return m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    return m.role;
  });

/** u1 a2 u3 a4 u5 a6 u7 in a chain, ids "1".."7". */
function chain(n: number): SessionEntry[] {
  const out: SessionEntry[] = [];
  for (let i = 1; i <= n; i++) {
    const parent = i === 1 ? null : String(i - 1);
    out.push(i % 2 === 1 ? userEntry(String(i), parent, `u${i}`, i) : assistantEntry(String(i), parent, `a${i}`, i));
  }
  return out;
}

describe("buildSessionContext: trivial cases", () => {
  it("an empty list gives the empty context", () => {
    assert.deepEqual(buildSessionContext([]), { messages: [], thinkingLevel: "off", model: null });
  });

  it("an explicit null leaf gives the empty context even when entries exist", () => {
    const entries = [entry("thinking_level_change", "t", null, { thinkingLevel: "high" }), userEntry("1", "t", "hi")];
    assert.deepEqual(buildSessionContext(entries, null), { messages: [], thinkingLevel: "off", model: null });
  });

  it("a single user message", () => {
    const ctx = buildSessionContext([userEntry("1", null, "hello")]);
    assert.deepEqual(ctx.messages, [userMsg("hello")]);
    assert.equal(ctx.model, null);
  });

  it("a four-message conversation keeps roles in order", () => {
    assert.deepEqual(roles(chain(4)), ["user", "assistant", "user", "assistant"]);
    assert.deepEqual(texts(chain(4)), ["u1", "a2", "u3", "a4"]);
  });

  it("tracks the thinking level; the last change on the path wins", () => {
    const entries = [
      entry("thinking_level_change", "t1", null, { thinkingLevel: "low" }),
      userEntry("1", "t1", "u"),
      entry("thinking_level_change", "t2", "1", { thinkingLevel: "high" }),
    ];
    assert.equal(buildSessionContext(entries).thinkingLevel, "high");
    assert.equal(buildSessionContext(entries, "1").thinkingLevel, "low");
  });

  it("takes the model from an assistant message", () => {
    const entries = [userEntry("1", null, "u"), msg("2", "1", assistantMsg("a", { provider: "openai", model: "gpt-4" }))];
    assert.deepEqual(buildSessionContext(entries).model, { provider: "openai", modelId: "gpt-4" });
  });

  it("an assistant message overrides an earlier model_change, and a later model_change overrides it", () => {
    const entries = [
      entry("model_change", "m1", null, { provider: "openai", modelId: "gpt-4" }),
      userEntry("1", "m1", "u"),
      assistantEntry("2", "1", "a"),
      entry("model_change", "m2", "2", { provider: "google", modelId: "gemini" }),
    ];
    assert.deepEqual(buildSessionContext(entries, "2").model, { provider: "anthropic", modelId: "claude-sonnet-4-5" });
    assert.deepEqual(buildSessionContext(entries, "m2").model, { provider: "google", modelId: "gemini" });
    assert.deepEqual(buildSessionContext(entries, "1").model, { provider: "openai", modelId: "gpt-4" });
  });

  it("reads the oh-my-pi model_change spelling and ignores roles other than default", () => {
    const entries = [
      entry("model_change", "m1", null, { model: "openai/gpt-4o" }),
      entry("model_change", "m2", "m1", { model: "anthropic/claude-haiku", role: "smol" }),
      entry("model_change", "m3", "m2", { model: "google/gemini/pro", role: "default" }),
    ];
    assert.deepEqual(buildSessionContext(entries, "m2").model, { provider: "openai", modelId: "gpt-4o" });
    // only the first slash separates provider from model id
    assert.deepEqual(buildSessionContext(entries, "m3").model, { provider: "google", modelId: "gemini/pro" });
  });
});

describe("buildSessionContext: compaction", () => {
  // 1 u, 2 a, 3 u, 4 a, 5 compaction(firstKept 3), 6 u, 7 a
  const withCompaction = (firstKept: string): SessionEntry[] => [
    ...chain(4),
    entry("compaction", "5", "4", { summary: "Summary of 1-2", firstKeptEntryId: firstKept, tokensBefore: 1234 }, 5),
    userEntry("6", "5", "u6", 6),
    assistantEntry("7", "6", "a7", 7),
  ];

  it("emits the summary, then the kept entries, then what follows the compaction", () => {
    const ctx = buildSessionContext(withCompaction("3"));
    assert.equal(ctx.messages.length, 5);
    assert.deepEqual(ctx.messages[0], {
      role: "compactionSummary",
      summary: "Summary of 1-2",
      tokensBefore: 1234,
      timestamp: T0 + 5000,
    });
    assert.deepEqual(texts(withCompaction("3")).slice(1), ["u3", "a4", "u6", "a7"]);
  });

  it("keeps everything when the first kept entry is the first entry", () => {
    assert.deepEqual(texts(withCompaction("1")), ["compactionSummary:Summary of 1-2", "u1", "a2", "u3", "a4", "u6", "a7"]);
  });

  it("keeps nothing from before the compaction when the first kept id is not on the path", () => {
    assert.deepEqual(texts(withCompaction("nope")), ["compactionSummary:Summary of 1-2", "u6", "a7"]);
  });

  it("uses only the latest compaction on the path", () => {
    const entries = [
      ...withCompaction("3"),
      entry("compaction", "8", "7", { summary: "Second summary", firstKeptEntryId: "6", tokensBefore: 99 }, 8),
      userEntry("9", "8", "u9", 9),
    ];
    assert.deepEqual(texts(entries), ["compactionSummary:Second summary", "u6", "a7", "u9"]);
  });

  it("carries shortSummary into the summary message when the entry has one", () => {
    const entries = [
      userEntry("1", null, "u"),
      entry("compaction", "2", "1", { summary: "long", shortSummary: "short", firstKeptEntryId: "1", tokensBefore: 5 }, 2),
    ];
    const first = buildSessionContext(entries).messages[0];
    assert.deepEqual(first, { role: "compactionSummary", summary: "long", shortSummary: "short", tokensBefore: 5, timestamp: T0 + 2000 });
  });

  it("lets metadata before the compaction still set thinking level and model", () => {
    const entries = [
      entry("thinking_level_change", "t", null, { thinkingLevel: "medium" }),
      entry("model_change", "m", "t", { provider: "openai", modelId: "o3" }),
      userEntry("1", "m", "u1", 1),
      entry("compaction", "c", "1", { summary: "s", firstKeptEntryId: "zzz", tokensBefore: 1 }, 2),
    ];
    const ctx = buildSessionContext(entries);
    assert.equal(ctx.thinkingLevel, "medium");
    assert.deepEqual(ctx.model, { provider: "openai", modelId: "o3" });
    assert.deepEqual(ctx.messages.map((m) => m.role), ["compactionSummary"]);
  });

  it("a compaction on another branch does not affect this one", () => {
    const entries = [
      ...chain(2),
      entry("compaction", "c", "2", { summary: "s", firstKeptEntryId: "2", tokensBefore: 1 }, 3),
      userEntry("x", "2", "other", 4),
    ];
    assert.deepEqual(texts(entries, "x"), ["u1", "a2", "other"]);
  });
});

describe("buildSessionContext: branches", () => {
  //      1 - 2 - 3
  //            \ 4
  const tree = [userEntry("1", null, "u1", 1), assistantEntry("2", "1", "a2", 2), userEntry("3", "2", "left", 3), userEntry("4", "2", "right", 4)];

  it("follows the path to the chosen leaf", () => {
    assert.deepEqual(texts(tree, "3"), ["u1", "a2", "left"]);
    assert.deepEqual(texts(tree, "4"), ["u1", "a2", "right"]);
  });

  it("an unknown or undefined leaf falls back to the last entry", () => {
    assert.deepEqual(texts(tree, "nonexistent"), ["u1", "a2", "right"]);
    assert.deepEqual(texts(tree), ["u1", "a2", "right"]);
    assert.deepEqual(roles(chain(2), "missing"), ["user", "assistant"]);
  });

  it("a branch summary on the path becomes a branchSummary message; an empty one is left out", () => {
    const entries = [
      ...tree,
      entry("branch_summary", "b", "2", { fromId: "2", summary: "Tried the left way" }, 5),
      userEntry("5", "b", "after", 6),
      entry("branch_summary", "e", "5", { fromId: "5", summary: "" }, 7),
    ];
    const ctx = buildSessionContext(entries, "e");
    assert.deepEqual(ctx.messages[2], { role: "branchSummary", summary: "Tried the left way", fromId: "2", timestamp: T0 + 5000 });
    assert.deepEqual(texts(entries, "e"), ["u1", "a2", "branchSummary:Tried the left way", "after"]);
  });

  it("a custom_message becomes a custom message with its fields and a millisecond timestamp", () => {
    const entries = [
      userEntry("1", null, "u", 1),
      entry("custom_message", "c", "1", { customType: "note", content: "remember", display: true, details: { k: 1 } }, 2),
    ];
    assert.deepEqual(buildSessionContext(entries).messages[1], {
      role: "custom",
      customType: "note",
      content: "remember",
      display: true,
      details: { k: 1 },
      timestamp: T0 + 2000,
    });
  });

  it("labels, custom entries, session info and other metadata contribute no message", () => {
    const entries = [
      userEntry("1", null, "u", 1),
      entry("label", "l", "1", { targetId: "1", label: "start" }, 2),
      entry("custom", "c", "l", { customType: "ext", data: { a: 1 } }, 3),
      entry("session_info", "s", "c", { name: "n" }, 4),
      entry("mode_change", "m", "s", { mode: "plan" }, 5),
      entry("ttsr_injection", "t", "m", { injectedRules: ["r"] }, 6),
      entry("something_new", "x", "t", { whatever: true }, 7),
      assistantEntry("2", "x", "a", 8),
    ];
    assert.deepEqual(roles(entries), ["user", "assistant"]);
  });

  it("a compaction on the main path and a branch summary on the side path each give their own context", () => {
    // 1 u, 2 a, 3 u, 4 a, 5 compaction(keep 3), 6 u, 7 a   (main)
    //                 \-- 8 branch_summary(from 3), 9 u     (side)
    const entries = [
      ...chain(4),
      entry("compaction", "5", "4", { summary: "Compacted", firstKeptEntryId: "3", tokensBefore: 10 }, 5),
      userEntry("6", "5", "u6", 6),
      assistantEntry("7", "6", "a7", 7),
      entry("branch_summary", "8", "3", { fromId: "3", summary: "Side summary" }, 8),
      userEntry("9", "8", "u9", 9),
    ];
    assert.deepEqual(texts(entries, "7"), ["compactionSummary:Compacted", "u3", "a4", "u6", "a7"]);
    assert.deepEqual(texts(entries, "9"), ["u1", "a2", "u3", "branchSummary:Side summary", "u9"]);
  });
});

describe("buildSessionContext: broken links", () => {
  it("an orphan whose parent is missing yields only itself, and the problem is reported", () => {
    const entries = [userEntry("1", null, "u1"), assistantEntry("2", "1", "a2"), userEntry("3", "gone", "orphan")];
    const problems: PathProblem[] = [];
    const ctx = buildSessionContext(entries, "3", undefined, (p) => problems.push(p));
    assert.deepEqual(texts(entries, "3"), ["orphan"]);
    assert.equal(ctx.messages.length, 1);
    assert.deepEqual(problems, [{ kind: "missing-parent", entryId: "3", parentId: "gone" }]);
  });

  it("a self-parent terminates with the entry once and reports a cycle", () => {
    const entries = [userEntry("1", "1", "self")];
    const problems: PathProblem[] = [];
    const ctx = buildSessionContext(entries, "1", undefined, (p) => problems.push(p));
    assert.deepEqual(texts(entries, "1"), ["self"]);
    assert.equal(ctx.messages.length, 1);
    assert.equal(problems.length, 1);
    assert.equal(problems[0].kind, "cycle");
  });

  it("a two-entry cycle terminates with each entry once and reports a cycle", () => {
    const entries = [userEntry("a", "b", "A", 1), assistantEntry("b", "a", "B", 2)];
    const problems: PathProblem[] = [];
    const ctx = buildSessionContext(entries, "b", undefined, (p) => problems.push(p));
    assert.deepEqual(texts(entries, "b"), ["A", "B"]);
    assert.equal(ctx.messages.length, 2);
    assert.deepEqual(problems.map((p) => p.kind), ["cycle"]);
  });

  it("uses the lookup it is given instead of indexing the entries", () => {
    const e1 = userEntry("1", null, "from lookup");
    const e2 = assistantEntry("2", "1", "a");
    const lookup = (id: string) => (id === "1" ? e1 : id === "2" ? e2 : undefined);
    // entries passed hold only the leaf: the parent can only come from the lookup
    assert.equal(buildSessionContext([e2], "2", lookup).messages.length, 2);
  });
});

describe("contextFromPath", () => {
  it("builds the same context as buildSessionContext for the path it is given", () => {
    const entries = chain(5);
    assert.deepEqual(contextFromPath(entries), buildSessionContext(entries));
    assert.deepEqual(contextFromPath([]), { messages: [], thinkingLevel: "off", model: null });
  });
});
