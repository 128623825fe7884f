/**
 * prepareCompaction (spec 5.1, 4.3; DESIGN.md decisions 1, 2 and 4).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { computeFileLists } from "../../src/compaction/file-ops.js";
import {
  contextTokensOfPath,
  MAX_USAGE_RATIO,
  planCompaction,
  prepareCompaction,
  usageRatio,
} from "../../src/compaction/prepare.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../../src/compaction/settings.js";
import { estimateTokens } from "../../src/compaction/tokens.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { contextFromPath } from "../../src/format/context.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import {
  a,
  bash,
  branchSummary,
  compaction,
  customMessage,
  label,
  modelChange,
  path,
  text,
  thinking,
  tr,
  u,
} from "../helpers/paths.js";
import { usage } from "../helpers/session-builders.js";

const settings = (keepRecentTokens: number) => ({ ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens });
const tokensOf = (e: SessionEntry) => (e.type === "message" ? estimateTokens(e.message) : 0);
const texts = (messages: readonly AgentMessage[]) =>
  messages.map((m) => {
    if (m.role === "user") return typeof m.content === "string" ? m.content : "";
    if (m.role === "assistant") return m.content.map((b) => (b.type === "text" ? b.text : `call:${b.type === "toolCall" ? b.name : ""}`)).join("|");
    if (m.role === "toolResult") return `result:${m.toolName}`;
    if (m.role === "custom") return `custom:${m.content}`;
    if (m.role === "branchSummary") return `branch:${m.summary}`;
    return m.role;
  });

describe("prepareCompaction: nothing to do", () => {
  it("a path ending in a compaction is already compacted", () => {
    const p = path(u("q"), a("r"), compaction("s", "e1"));
    const plan = planCompaction(p, settings(1));
    assert.equal(plan.ok, false);
    assert.equal(!plan.ok && plan.reason, "already-compacted");
    assert.equal(prepareCompaction(p, settings(1)), undefined);
  });

  it("an empty path has nothing to compact", () => {
    const plan = planCompaction([], settings(1));
    assert.equal(!plan.ok && plan.reason, "nothing-to-compact");
  });

  it("a single user message has nothing older to summarize (the reference would make a 'No prior history.' summary)", () => {
    const plan = planCompaction(path(u("hello")), settings(1));
    assert.equal(!plan.ok && plan.reason, "nothing-to-compact");
  });

  it("a conversation within the keep budget has nothing to compact", () => {
    const plan = planCompaction(path(u("q"), a("r"), u("q2"), a("r2")), settings(20_000));
    assert.equal(!plan.ok && plan.reason, "nothing-to-compact");
    assert.match(!plan.ok ? plan.message : "", /Nothing to compact/);
    // issue 19, item 4: with no compaction before, it is the whole conversation that fits
    assert.match(!plan.ok ? plan.message : "", /the whole conversation \(\d+ tokens\) fits in the 20,000 tokens kept verbatim/);
    const after = planCompaction(path(u(text(400)), a(text(400)), compaction("s", "e1"), u("q2"), a("r2")), settings(20_000));
    assert.match(!after.ok ? after.message : "", /the conversation since the last compaction \(\d+ tokens\) fits/);
  });

  it("only metadata appended after a compaction leaves nothing new to compact", () => {
    const p = path(u(text(400)), a(text(400)), u(text(400)), a(text(400)), compaction("s", "e2"), label("e3"));
    assert.equal(planCompaction(p, settings(150)).ok, false);
  });
});

describe("prepareCompaction: what is summarized and kept", () => {
  it("a clean cut: older messages summarized, the rest kept; metadata gives no messages", () => {
    const p = path(u("q1"), a(text(400)), thinking(), u("q2"), a(text(400)));
    // 100 + 1 tokens: the budget lands on the user message at 3
    const prep = prepareCompaction(p, settings(101))!;
    assert.equal(prep.firstKeptEntryId, "e2", "the thinking change moves to the kept side");
    assert.equal(prep.firstKeptEntryIndex, 2);
    assert.equal(prep.isSplitTurn, false);
    assert.deepEqual(texts(prep.messagesToSummarize), ["q1", text(400)]);
    assert.deepEqual(prep.turnPrefixMessages, []);
    assert.deepEqual(texts(prep.recentMessages), ["q2", text(400)]);
    assert.equal(prep.previousSummary, undefined);
    assert.equal(prep.boundaryStart, 0);
    assert.equal(prep.keepRecentTokens, 101);
    assert.equal(prep.usageRatio, undefined);
  });

  it("a split turn: the turn's beginning becomes the prefix, older turns the history", () => {
    const p = path(u("q1"), a("r1"), u("q2"), a("", { calls: [{ name: "bash" }] }), tr(text(4000)), a(text(400)));
    const prep = prepareCompaction(p, settings(50))!;
    assert.equal(prep.firstKeptEntryId, "e5");
    assert.equal(prep.isSplitTurn, true);
    assert.deepEqual(texts(prep.messagesToSummarize), ["q1", "r1"]);
    assert.deepEqual(texts(prep.turnPrefixMessages), ["q2", "call:bash", "result:bash"]);
    assert.deepEqual(texts(prep.recentMessages), [text(400)]);
  });

  it("a split turn in the first turn: nothing older, only a prefix", () => {
    const p = path(u("q"), a("", { calls: [{ name: "bash" }] }), tr(text(4000)), a(text(400)));
    const prep = prepareCompaction(p, settings(50))!;
    assert.equal(prep.isSplitTurn, true);
    assert.deepEqual(prep.messagesToSummarize, []);
    assert.deepEqual(texts(prep.turnPrefixMessages), ["q", "call:bash", "result:bash"]);
  });

  it("decision 1: a model change in front of a user message is a clean cut, not a split turn", () => {
    const p = path(u("q1"), a(text(400)), modelChange(), u("q2"), a(text(400)));
    const prep = prepareCompaction(p, settings(101))!;
    assert.equal(prep.firstKeptEntryId, "e2");
    assert.equal(prep.isSplitTurn, false);
    assert.deepEqual(texts(prep.messagesToSummarize), ["q1", text(400)]);
    assert.deepEqual(prep.turnPrefixMessages, []);
  });

  it("a cut on a custom message (its own turn start) is clean: an empty prefix is no split", () => {
    const p = path(u("q1"), a(text(400)), tr("x"), customMessage("note"), a(text(400)));
    const prep = prepareCompaction(p, settings(100))!;
    assert.equal(prep.firstKeptEntryId, "e3");
    assert.equal(prep.isSplitTurn, false);
    assert.deepEqual(texts(prep.messagesToSummarize), ["q1", text(400), "result:bash"]);
    assert.deepEqual(texts(prep.recentMessages), ["custom:note", text(400)]);
  });

  it("branch summaries and custom messages before the cut are summarized", () => {
    const p = path(branchSummary("explored X"), u("q1"), customMessage("hint"), a(text(40)), bash("ls", "out"), u("q2"), a(text(400)));
    const prep = prepareCompaction(p, settings(101))!;
    assert.equal(prep.firstKeptEntryId, "e5");
    assert.deepEqual(texts(prep.messagesToSummarize), ["branch:explored X", "q1", "custom:hint", text(40), "bashExecution"]);
  });
});

describe("prepareCompaction: after a previous compaction", () => {
  const details = { readFiles: ["old-read.ts", "both.ts"], modifiedFiles: ["old-mod.ts"] };
  const base = (fromExtension?: boolean) =>
    path(
      u("q1"),
      a("r1", { calls: [{ name: "read", args: { path: "gone.ts" } }] }),
      u("q2"), // e2: kept by the compaction
      a(text(400), { calls: [{ name: "edit", args: { path: "both.ts" } }] }),
      compaction("PREVIOUS", "e2", details, fromExtension),
      u("q3"),
      a(text(400), { calls: [{ name: "write", args: { path: "new.ts" } }, { name: "read", args: { path: "r.ts" } }] }),
      u("q4"),
      a(text(400)),
    );

  // keeps that land exactly on q4 (e7) and on q3 (e5)
  const keepFromQ4 = () => tokensOf(base()[8]) + tokensOf(base()[7]);
  const keepFromQ3 = () => keepFromQ4() + tokensOf(base()[6]) + tokensOf(base()[5]);

  it("the previous summary is carried and its kept messages are summarized when they leave", () => {
    const prep = prepareCompaction(base(), settings(keepFromQ4()))!;
    assert.equal(prep.boundaryStart, 2, "the search starts at the previous compaction's first kept entry");
    assert.equal(prep.firstKeptEntryId, "e7");
    assert.equal(prep.previousSummary, "PREVIOUS");
    assert.deepEqual(texts(prep.messagesToSummarize), ["q2", `${text(400)}|call:edit`, "q3", `${text(400)}|call:write|call:read`]);
    // nothing before the previous compaction's kept region comes back
    assert.ok(!texts(prep.messagesToSummarize).includes("q1"));
  });

  it("the previously kept entries count as recent: a larger budget keeps more of them", () => {
    const prep = prepareCompaction(base(), settings(keepFromQ3()))!;
    assert.equal(prep.firstKeptEntryId, "e5");
    assert.deepEqual(texts(prep.messagesToSummarize), ["q2", `${text(400)}|call:edit`]);
    const all = prepareCompaction(base(), settings(keepFromQ3() + tokensOf(base()[3]) + tokensOf(base()[2])));
    assert.equal(all, undefined, "a budget covering the previous kept region leaves nothing to compact");
  });

  it("file operations are seeded from the previous compaction; read files exclude modified ones", () => {
    const prep = prepareCompaction(base(), settings(keepFromQ4()))!;
    assert.deepEqual(computeFileLists(prep.fileOps), {
      readFiles: ["old-read.ts", "r.ts"],
      modifiedFiles: ["both.ts", "new.ts", "old-mod.ts"],
    });
    assert.ok(!prep.fileOps.read.has("gone.ts"), "tool calls already summarized by the previous compaction are not re-read");
  });

  it("a compaction made by an extension breaks the file history", () => {
    const prep = prepareCompaction(base(true), settings(keepFromQ4()))!;
    assert.deepEqual(computeFileLists(prep.fileOps), { readFiles: ["r.ts"], modifiedFiles: ["both.ts", "new.ts"] });
    const fromHookOnly = base();
    (fromHookOnly[4] as { fromHook?: boolean }).fromHook = true;
    assert.deepEqual(computeFileLists(prepareCompaction(fromHookOnly, settings(keepFromQ4()))!.fileOps).modifiedFiles, ["both.ts", "new.ts"]);
  });

  it("a previous compaction whose first kept entry is not on the path bounds the search right after it", () => {
    const p = base();
    (p[4] as { firstKeptEntryId: string }).firstKeptEntryId = "missing";
    const prep = prepareCompaction(p, settings(keepFromQ4()))!;
    assert.equal(prep.boundaryStart, 5);
    assert.deepEqual(texts(prep.messagesToSummarize), ["q3", `${text(400)}|call:write|call:read`]);
  });
});

describe("prepareCompaction: usage ratio (decision 4)", () => {
  // 400 chars = 100 estimated tokens each
  const convo = (replyUsage: ReturnType<typeof usage>, stopReason?: "aborted" | "error") =>
    path(u(text(400)), a(text(400)), u(text(400)), a(text(400), { usage: replyUsage, stopReason }), u(text(400)));

  it("shrinks the keep budget by reported prompt tokens per estimated token of what that request carried", () => {
    // the request for e3 carried e0..e2: 300 estimated tokens; it reported 600 prompt tokens: ratio 2
    const p = convo(usage(500, 50, 100, 0));
    const prep = prepareCompaction(p, settings(300))!;
    assert.equal(prep.usageRatio, 2);
    assert.equal(prep.keepRecentTokens, 150);
    assert.equal(usageRatio(p, usage(500, 50, 100, 0), 3), 2);
  });

  it("clamps the ratio at 4", () => {
    // 30,000 reported against 300 estimated would be 100; 4 is the cap
    const prep = prepareCompaction(convo(usage(30_000, 10)), settings(400))!;
    assert.equal(prep.usageRatio, MAX_USAGE_RATIO);
    assert.equal(prep.keepRecentTokens, 100);
    assert.equal(prep.firstKeptEntryId, "e4");
  });

  it("never grows the budget", () => {
    const prep = prepareCompaction(convo(usage(150, 10)), settings(300))!;
    assert.equal(prep.usageRatio, undefined);
    assert.equal(prep.keepRecentTokens, 300);
  });

  it("ignores aborted and failed replies", () => {
    const prep = prepareCompaction(convo(usage(30_000, 10), "aborted"), settings(300))!;
    assert.equal(prep.keepRecentTokens, 300);
  });

  it("ignores usage from before the latest compaction", () => {
    const p = path(
      u(text(400)),
      a(text(400), { usage: usage(90_000, 10) }),
      compaction("s", "e1"),
      u(text(400)),
      a(text(400), { usage: usage(50_000, 10), stopReason: "aborted" }),
      u(text(400)),
    );
    const prep = prepareCompaction(p, settings(150))!;
    assert.equal(prep.usageRatio, undefined);
    assert.equal(prep.keepRecentTokens, 150);
  });

  it("counts the summary the request carried after a compaction", () => {
    const summary = text(800); // 200 tokens
    const p = path(u(text(400)), a(text(400)), compaction(summary, "e1"), u(text(400)), a(text(400), { usage: usage(1200, 10) }), u("next"));
    // carried: the summary (200), the kept e1 (100), e3 (100) = 400 estimated; 1200 reported: ratio 3
    const carried = contextFromPath(p.slice(0, 4)).messages.reduce((s, m) => s + estimateTokens(m), 0);
    assert.equal(carried, 400);
    assert.equal(prepareCompaction(p, settings(300))!.usageRatio, 3);
  });
});

describe("prepareCompaction: tokensBefore", () => {
  it("is the latest fresh usage plus estimates of the messages after it", () => {
    const p = path(u("q"), a("r", { usage: usage(1000, 200) }), u(text(400)), a(text(800), { usage: usage(0, 0), stopReason: "aborted" }));
    assert.equal(contextTokensOfPath(p), 1200 + 100 + 200);
    assert.equal(prepareCompaction(p, settings(150))!.tokensBefore, 1500);
  });

  it("without usage after the latest compaction, it is the estimate of the whole context", () => {
    const p = path(u(text(400)), a(text(400), { usage: usage(90_000, 10) }), compaction(text(40), "e1"), u(text(400)));
    const expected = 10 + tokensOf(p[1]) + tokensOf(p[3]);
    assert.equal(contextTokensOfPath(p), expected);
  });
});
