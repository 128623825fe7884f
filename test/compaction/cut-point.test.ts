/**
 * Cut points (spec 5.2-5.4, 12.1 "findCutPoint", DESIGN.md decision 1).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  findCutPoint,
  findTurnStartIndex,
  findValidCutPoints,
  isTurnStart,
  isValidCutPoint,
} from "../../src/compaction/cut-point.js";
import { estimateTokens } from "../../src/compaction/tokens.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { SessionManager } from "../../src/session/manager.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { REAL_SESSION } from "../helpers/fixtures.js";
import {
  a,
  bash,
  branchSummary,
  compaction,
  custom,
  customMessage,
  label,
  message,
  modelChange,
  path,
  text,
  thinking,
  tr,
  u,
} from "../helpers/paths.js";

const tokensOf = (e: SessionEntry) => (e.type === "message" ? estimateTokens(e.message) : 0);
const roleOf = (e: SessionEntry) => (e.type === "message" ? e.message.role : e.type);

describe("findCutPoint: spec 12.1", () => {
  it("20 alternating user/assistant entries with keep 2500 cut at a user or assistant message, keeping about 2500 tokens", () => {
    const entries = path(...Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? u(text(1000)) : a(text(1000)))));
    const cut = findCutPoint(entries, 0, entries.length, 2500);
    assert.ok(["user", "assistant"].includes(roleOf(entries[cut.firstKeptEntryIndex])));
    // 250 tokens each: the 10 newest reach 2500, so the cut is at index 10, a user message (no split)
    assert.equal(cut.firstKeptEntryIndex, 10);
    assert.deepEqual(cut, { firstKeptEntryIndex: 10, turnStartIndex: -1, isSplitTurn: false });
    const kept = entries.slice(cut.firstKeptEntryIndex).reduce((s, e) => s + tokensOf(e), 0);
    assert.equal(kept, 2500);
  });

  it("a single assistant entry gives index 0", () => {
    const entries = path(a("only"));
    assert.deepEqual(findCutPoint(entries, 0, 1, 1000), { firstKeptEntryIndex: 0, turnStartIndex: -1, isSplitTurn: false });
  });

  it("a budget above the total keeps everything", () => {
    const entries = path(u("hello"), a("hi"), u("more"), a("sure"));
    assert.equal(findCutPoint(entries, 0, entries.length, 1_000_000).firstKeptEntryIndex, 0);
  });

  it("a turn of a user message and three assistants, keep 3000: the cut at an assistant splits the turn started at 2", () => {
    const entries = path(u("first"), a("ok"), u("do it"), a(text(4000)), a(text(4000)), a(text(4000)));
    const cut = findCutPoint(entries, 0, entries.length, 3000);
    assert.equal(roleOf(entries[cut.firstKeptEntryIndex]), "assistant");
    assert.equal(cut.firstKeptEntryIndex, 3);
    assert.equal(cut.isSplitTurn, true);
    assert.equal(cut.turnStartIndex, 2);
  });
});

describe("findCutPoint: the large real fixture (spec 12.1)", () => {
  it("after v1 migration, the default budget cuts at a user or assistant message and keeps about 20,000 tokens", () => {
    const branch = SessionManager.open(REAL_SESSION, { readOnly: true }).getBranch();
    assert.ok(branch.length > 100);
    assert.ok(branch.filter((e) => e.type === "message").length > 100);
    const cut = findCutPoint(branch, 0, branch.length, 20_000);
    assert.ok(["user", "assistant"].includes(roleOf(branch[cut.firstKeptEntryIndex])));
    assert.ok(cut.firstKeptEntryIndex > 0, "something is left to summarize");
    const kept = branch.slice(cut.firstKeptEntryIndex).reduce((s, e) => s + tokensOf(e), 0);
    const keptWithOneMore = kept + tokensOf(branch[cut.firstKeptEntryIndex - 1]);
    assert.ok(kept >= 20_000 || keptWithOneMore >= 20_000, `${kept} tokens kept`);
  });
});

describe("findCutPoint: rules", () => {
  it("never cuts at a tool result: the cut moves forward to the next cut point", () => {
    const entries = path(u("q"), a("", { calls: [{ name: "bash" }] }), tr(text(4000)), a(text(40)));
    // the budget is reached on the tool result (index 2); the next cut point is the assistant at 3
    const cut = findCutPoint(entries, 0, entries.length, 500);
    assert.equal(cut.firstKeptEntryIndex, 3);
    assert.notEqual(roleOf(entries[cut.firstKeptEntryIndex]), "toolResult");
  });

  it("decision 1: a budget reached inside trailing tool results cuts at the last valid cut point (the reference keeps everything)", () => {
    const entries = path(u(text(400)), a(text(400)), u("go"), a("", { calls: [{ name: "bash" }, { name: "bash" }] }), tr(text(4000)), tr(text(4000)));
    const cut = findCutPoint(entries, 0, entries.length, 100);
    assert.equal(cut.firstKeptEntryIndex, 3);
    assert.equal(cut.isSplitTurn, true);
    assert.equal(cut.turnStartIndex, 2);
  });

  it("metadata entries right before the cut move to the kept side", () => {
    const entries = path(u("q"), a(text(400)), label("e0"), thinking(), modelChange(), custom(), u(text(40)), a(text(400)));
    const keep = tokensOf(entries[7]) + 1;
    const cut = findCutPoint(entries, 0, entries.length, keep);
    assert.equal(cut.firstKeptEntryIndex, 2);
  });

  it("decision 1: split-turn status comes from the entry the budget landed on, before metadata moves", () => {
    // landed on the user message at 3; the model change at 2 moves to the kept side. The reference
    // would see the model change, call it a split turn and summarize turn 0-1 as its "prefix".
    const entries = path(u("q"), a(text(400)), modelChange(), u(text(40)), a(text(400)));
    const cut = findCutPoint(entries, 0, entries.length, tokensOf(entries[4]) + 1);
    assert.deepEqual(cut, { firstKeptEntryIndex: 2, turnStartIndex: -1, isSplitTurn: false });
  });

  it("metadata absorption stops at a compaction and at the boundary start", () => {
    const entries = path(u("q"), compaction("s", "e0"), modelChange(), u(text(40)), a(text(400)));
    assert.equal(findCutPoint(entries, 0, entries.length, tokensOf(entries[4]) + 1).firstKeptEntryIndex, 2);
    const entries2 = path(u("q"), thinking(), modelChange(), u(text(40)), a(text(400)));
    assert.equal(findCutPoint(entries2, 2, entries2.length, tokensOf(entries2[4]) + 1).firstKeptEntryIndex, 2);
  });

  it("a cut on a custom message or bash run is its own turn start (an empty prefix)", () => {
    const entries = path(u("q"), a(text(400)), customMessage("note"), a(text(400)));
    const cut = findCutPoint(entries, 0, entries.length, tokensOf(entries[3]) + 1);
    // custom_message sizes are not counted (as in the reference): the walk reaches the assistant at 1,
    // whose next cut point is itself
    assert.equal(cut.firstKeptEntryIndex, 1);
    const onNote = path(u("q"), a(text(400)), tr(text(40)), customMessage("note"), a(text(400)));
    const cut2 = findCutPoint(onNote, 0, onNote.length, tokensOf(onNote[4]) + 1);
    assert.deepEqual(cut2, { firstKeptEntryIndex: 3, turnStartIndex: 3, isSplitTurn: true });
  });

  it("a bash run starts a turn: cutting at the assistant after it splits that turn", () => {
    const entries = path(u("q"), a(text(40)), bash("ls", "a b"), a(text(4000)));
    const cut = findCutPoint(entries, 0, entries.length, 100);
    assert.deepEqual(cut, { firstKeptEntryIndex: 3, turnStartIndex: 2, isSplitTurn: true });
  });

  it("no cut points at all keeps everything from the start", () => {
    const entries = path(thinking(), tr("x"), modelChange());
    assert.deepEqual(findCutPoint(entries, 1, 3, 1), { firstKeptEntryIndex: 1, turnStartIndex: -1, isSplitTurn: false });
  });

  it("stays inside [start, end): no cut or turn start before start", () => {
    const entries = path(u("q"), a(text(400)), a(text(400)), a(text(400)), u("later"));
    // 100 tokens per assistant: the entries 3 and 2 reach 150; entry 4 is past end and not counted
    const cut = findCutPoint(entries, 1, 4, 150);
    assert.equal(cut.firstKeptEntryIndex, 2);
    assert.equal(cut.turnStartIndex, -1, "the user message at 0 is before start");
    assert.equal(cut.isSplitTurn, false);
  });
});

describe("valid cut points and turn starts", () => {
  const m = (msg: unknown) => message(msg as AgentMessage);
  const entries = path(
    u("u"),
    a("a"),
    tr("r"),
    bash("ls", ""),
    m({ role: "pythonExecution", code: "1", output: "", cancelled: false, truncated: false, timestamp: 0 }),
    m({ role: "custom", customType: "x", content: "c", display: true, timestamp: 0 }),
    m({ role: "fileMention", files: [], timestamp: 0 }),
    m({ role: "branchSummary", summary: "b", fromId: "x", timestamp: 0 }),
    m({ role: "compactionSummary", summary: "c", tokensBefore: 1, timestamp: 0 }),
    customMessage("cm"),
    branchSummary("bs"),
    thinking(),
    modelChange(),
    label("e0"),
    custom(),
    compaction("s", "e0"),
  );

  it("every message role except toolResult, plus custom_message and branch_summary entries, is a cut point", () => {
    assert.deepEqual(findValidCutPoints(entries, 0, entries.length), [0, 1, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(isValidCutPoint(entries[2]), false);
    assert.equal(findValidCutPoints(entries, 2, 4).join(), "3");
  });

  it("turns start at user messages, bash and python runs, custom messages and branch summaries", () => {
    assert.deepEqual(
      entries.map((e, i) => (isTurnStart(e) ? i : -1)).filter((i) => i >= 0),
      [0, 3, 4, 5, 9, 10],
    );
  });

  it("findTurnStartIndex scans back to start and gives -1 when no turn starts there", () => {
    const p = path(u("q"), a("1"), tr("r"), a("2"));
    assert.equal(findTurnStartIndex(p, 3, 0), 0);
    assert.equal(findTurnStartIndex(p, 3, 1), -1);
    assert.equal(findTurnStartIndex(p, 0, 0), 0);
  });
});
