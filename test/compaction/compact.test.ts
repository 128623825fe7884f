/**
 * compact() (spec 6.2, 6.3; DESIGN.md decisions 2, 6, 7, 10, 12) and compaction end to end
 * through SessionManager: appendCompaction, then buildSessionContext.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateTextTokens, packChunks, promptBudget } from "../../src/compaction/chunking.js";
import { compact, serializeParts } from "../../src/compaction/compact.js";
import { type CompactionPreparation, prepareCompaction } from "../../src/compaction/prepare.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../../src/compaction/settings.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import {
  COMPACTION_SYSTEM_PROMPT,
  INITIAL_SUMMARY_PROMPT,
  MERGE_SUMMARIES_PROMPT,
  NO_PRIOR_HISTORY,
  SHORT_SUMMARY_PROMPT,
  SPLIT_TURN_HEADING,
  SUMMARY_SECTIONS,
  TURN_PREFIX_PROMPT,
  UPDATE_SUMMARY_PROMPT,
} from "../../src/prompts/compaction.js";
import { SessionManager } from "../../src/session/manager.js";
import type { CompactionEntry } from "../../src/format/entry-types.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";
import { SummarizationAbortedError } from "../../src/summarizer/types.js";
import { fakeSummarizer, hangUntilAborted } from "../helpers/fake-summarizer.js";
import { REAL_SESSION } from "../helpers/fixtures.js";
import { a, compaction, messageOf, path, text, tr, u } from "../helpers/paths.js";

const settings = (keepRecentTokens: number) => ({ ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens });
/** The reference's summary layout: no verbatim requests section, no coverage appendix (test/compaction/summary-guard.test.ts has those). */
const REFERENCE_LAYOUT = { guard: { verbatimRequests: false, coverageCheck: false } } as const;

/** A clean cut at "q2": q1 and its reply (which edits and reads files) are summarized. */
function cleanPreparation(previous?: { summary: string; details?: unknown }): CompactionPreparation {
  const entries = previous
    ? path(
        u("q0"),
        compaction(previous.summary, "e0", previous.details),
        u("q1"),
        a(text(400), { calls: [{ name: "edit", args: { path: "src/a.ts" } }, { name: "read", args: { path: "README.md" } }] }),
        u("q2"),
        a(text(400)),
      )
    : path(
        u("q1"),
        a(text(400), { calls: [{ name: "edit", args: { path: "src/a.ts" } }, { name: "read", args: { path: "README.md" } }] }),
        u("q2"),
        a(text(400)),
      );
  const prep = prepareCompaction(entries, settings(101));
  assert.ok(prep, "the fixture path must be compactable");
  return prep;
}

/** A split turn: "q2" starts a turn whose tool call and result are the prefix. */
function splitPreparation(withOlderHistory: boolean, previousSummary?: string): CompactionPreparation {
  const turn = [u("q2"), a("", { calls: [{ name: "write", args: { path: "out.txt" } }] }), tr(text(4000)), a(text(400))];
  const older = withOlderHistory ? [u("q1"), a("r1", { calls: [{ name: "read", args: { path: "in.txt" } }] })] : [];
  const head = previousSummary !== undefined ? [u("q0"), compaction(previousSummary, "e1")] : [];
  const prep = prepareCompaction(path(...head, ...older, ...turn), settings(50));
  assert.ok(prep?.isSplitTurn, "the fixture path must split a turn");
  return prep;
}

describe("compact: the history summary", () => {
  it("asks once with the initial prompt: conversation first, instructions last, 0.8 x reserve tokens", async () => {
    const summarizer = fakeSummarizer((r) => (r.purpose === "history" ? "## Goal\nship it" : "short one"));
    const prep = cleanPreparation();
    const result = await compact(prep, summarizer, REFERENCE_LAYOUT);
    const history = summarizer.requests[0];
    assert.equal(history.purpose, "history");
    assert.equal(history.systemPrompt, COMPACTION_SYSTEM_PROMPT);
    assert.equal(history.maxTokens, Math.floor(0.8 * 16384));
    assert.equal(history.reasoning, undefined, "no reasoning for a summarizer that cannot reason");
    assert.ok(history.prompt.startsWith("<conversation>\n[User]: q1\n\n[Assistant]: "));
    assert.ok(history.prompt.endsWith(INITIAL_SUMMARY_PROMPT));
    assert.ok(!history.prompt.includes("<previous-summary>"));
    assert.equal(result.summary, "## Goal\nship it\n\n<read-files>\nREADME.md\n</read-files>\n\n<modified-files>\nsrc/a.ts\n</modified-files>");
    assert.deepEqual(result.details, { readFiles: ["README.md"], modifiedFiles: ["src/a.ts"] });
    assert.equal(result.firstKeptEntryId, prep.firstKeptEntryId);
    assert.equal(result.tokensBefore, prep.tokensBefore);
    assert.equal(result.shortSummary, "short one");
  });

  it("the prompts name every section and ask to keep the conversation's language", () => {
    for (const prompt of [INITIAL_SUMMARY_PROMPT, UPDATE_SUMMARY_PROMPT, MERGE_SUMMARIES_PROMPT]) {
      for (const section of SUMMARY_SECTIONS) assert.ok(prompt.includes(`## ${section}\n`), `${section} in prompt`);
      for (const sub of ["### Done", "### In Progress", "### Blocked"]) assert.ok(prompt.includes(sub));
      assert.match(prompt, /language of the (conversation|summaries)/);
    }
    assert.match(COMPACTION_SYSTEM_PROMPT, /language the conversation/);
    assert.match(TURN_PREFIX_PROMPT, /## Original Request[\s\S]*## Early Progress[\s\S]*## Context for Suffix/);
  });

  it("custom instructions become an additional focus after the instructions; extra context comes before them", async () => {
    const summarizer = fakeSummarizer();
    await compact(cleanPreparation(), summarizer, { customInstructions: "the parser bug", extraContext: ["ticket 42", "  "] });
    const prompt = summarizer.requests[0].prompt;
    assert.ok(prompt.endsWith(`${INITIAL_SUMMARY_PROMPT}\n\nAdditional focus: the parser bug`));
    assert.ok(prompt.includes("</conversation>\n\n<additional-context>\n- ticket 42\n</additional-context>\n\n"));
  });

  it("a prompt override replaces the instructions", async () => {
    const summarizer = fakeSummarizer();
    await compact(cleanPreparation(), summarizer, { promptOverride: "Just list files." });
    assert.ok(summarizer.requests[0].prompt.endsWith("</conversation>\n\nJust list files."));
  });

  it("with a previous compaction: the update prompt and the previous summary without its file tags", async () => {
    const previous = "## Goal\nold goal\n\n<read-files>\nold.md\n</read-files>\n\n<modified-files>\nold.ts\n</modified-files>";
    const summarizer = fakeSummarizer();
    const result = await compact(cleanPreparation({ summary: previous, details: { readFiles: ["old.md"], modifiedFiles: ["old.ts"] } }), summarizer, REFERENCE_LAYOUT);
    const prompt = summarizer.requests[0].prompt;
    assert.ok(prompt.includes("</conversation>\n\n<previous-summary>\n## Goal\nold goal\n</previous-summary>\n\n"));
    assert.ok(prompt.endsWith(UPDATE_SUMMARY_PROMPT));
    assert.deepEqual(result.details, { readFiles: ["README.md", "old.md"], modifiedFiles: ["old.ts", "src/a.ts"] });
  });

  it("reasoning is asked for only from a summarizer that can reason", async () => {
    const summarizer = fakeSummarizer(undefined, { reasoning: true });
    await compact(cleanPreparation(), summarizer);
    assert.deepEqual(summarizer.requests.map((r) => r.reasoning), ["high", "high"]);
  });

  it("a failing or empty history summary fails the compaction with a clear message", async () => {
    await assert.rejects(compact(cleanPreparation(), fakeSummarizer(() => { throw new Error("rate limited"); })), {
      message: "Summarization failed: rate limited",
    });
    await assert.rejects(compact(cleanPreparation(), fakeSummarizer(() => "  \n")), {
      message: "Summarization failed: the summarizer returned an empty summary",
    });
  });
});

describe("compact: split turns", () => {
  it("summarizes history and the turn prefix in parallel and joins them under the split-turn heading", async () => {
    let started = 0;
    let release: () => void = () => {};
    const bothStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    const summarizer = fakeSummarizer(async (r) => {
      if (r.purpose === "short") return "short";
      started++;
      if (started === 2) release();
      await bothStarted; // resolves only when both calls are in flight
      return r.purpose === "history" ? "HISTORY" : "PREFIX";
    });
    const prep = splitPreparation(true);
    const result = await compact(prep, summarizer, { customInstructions: "focus X", ...REFERENCE_LAYOUT });
    assert.ok(result.summary.startsWith(`HISTORY\n\n---\n\n${SPLIT_TURN_HEADING}\n\nPREFIX\n\n<read-files>`));
    const prefix = summarizer.requests.find((r) => r.purpose === "turn-prefix")!;
    assert.equal(prefix.maxTokens, Math.floor(0.5 * 16384));
    assert.ok(prefix.prompt.startsWith("<conversation>\n[User]: q2"));
    assert.ok(prefix.prompt.endsWith(TURN_PREFIX_PROMPT), "the turn prefix gets no custom instructions");
    assert.deepEqual(result.details, { readFiles: ["in.txt"], modifiedFiles: ["out.txt"] });
  });

  it("decision 2: a split first turn after a compaction keeps the previous summary", async () => {
    const summarizer = fakeSummarizer((r) => (r.purpose === "turn-prefix" ? "PREFIX" : "short"));
    const prep = splitPreparation(false, "PREVIOUS SUMMARY\n\n<modified-files>\nx.ts\n</modified-files>");
    assert.deepEqual(prep.messagesToSummarize, [], "the cut falls in the first turn after the compaction");
    const result = await compact(prep, summarizer);
    assert.ok(result.summary.startsWith(`PREVIOUS SUMMARY\n\n---\n\n${SPLIT_TURN_HEADING}\n\nPREFIX`));
    assert.ok(!summarizer.requests.some((r) => r.purpose === "history"), "no history call for nothing");
  });

  it("a split first turn without any history says so", async () => {
    const summarizer = fakeSummarizer((r) => (r.purpose === "turn-prefix" ? "PREFIX" : "short"));
    const result = await compact(splitPreparation(false), summarizer);
    assert.ok(result.summary.startsWith(`${NO_PRIOR_HISTORY}\n\n---\n\n${SPLIT_TURN_HEADING}\n\nPREFIX`));
  });

  it("a failing turn prefix fails the compaction, named alone when the history succeeds", async () => {
    const summarizer = fakeSummarizer(async (r) => {
      if (r.purpose === "history") return new Promise<string>((resolve) => setTimeout(() => resolve("HISTORY"), 20));
      throw new Error("overloaded");
    });
    await assert.rejects(compact(splitPreparation(true), summarizer), { message: "Turn prefix summarization failed: overloaded" });
  });

  it("when both spans fail, the error names each, history first, whichever failed first", async () => {
    for (const historyDelay of [0, 20]) {
      const summarizer = fakeSummarizer(async (r) => {
        if (r.purpose === "history") {
          await new Promise((resolve) => setTimeout(resolve, historyDelay));
          throw new Error("timed out");
        }
        await new Promise((resolve) => setTimeout(resolve, 20 - historyDelay));
        throw new Error("overloaded");
      });
      await assert.rejects(compact(splitPreparation(true), summarizer), {
        message: "Summarization failed: timed out; turn prefix summarization failed: overloaded",
      });
    }
  });

  it("one error shared by both spans is said once, and the same whichever span failed first", async () => {
    for (const historyDelay of [0, 20]) {
      const summarizer = fakeSummarizer(async (r) => {
        await new Promise((resolve) => setTimeout(resolve, r.purpose === "history" ? historyDelay : 20 - historyDelay));
        throw new Error("connect ECONNREFUSED 127.0.0.1:9");
      });
      await assert.rejects(compact(splitPreparation(true), summarizer), {
        message: "Summarization failed (history and turn prefix): connect ECONNREFUSED 127.0.0.1:9",
      });
    }
  });

  it("the user's abort while one span hangs cancels the compaction", async () => {
    const controller = new AbortController();
    const summarizer = fakeSummarizer((r) => {
      if (r.purpose === "history") return hangUntilAborted(r);
      setTimeout(() => controller.abort(), 5);
      throw new Error("overloaded");
    });
    await assert.rejects(compact(splitPreparation(true), summarizer, { signal: controller.signal }), SummarizationAbortedError);
  });
});

describe("compact: short summary (decision 7)", () => {
  it("reads the kept messages and the new summary, with its own small budget", async () => {
    const summarizer = fakeSummarizer((r) => (r.purpose === "history" ? "THE SUMMARY" : "I fixed it."));
    const prep = cleanPreparation();
    const result = await compact(prep, summarizer, { extraContext: ["ctx"] });
    const short = summarizer.requests[1];
    assert.equal(short.purpose, "short");
    assert.equal(short.maxTokens, Math.min(512, Math.floor(0.2 * 16384)));
    assert.ok(short.prompt.startsWith("<conversation>\n[User]: q2\n\n[Assistant]: "));
    assert.ok(short.prompt.includes("<previous-summary>\nTHE SUMMARY\n</previous-summary>"), "the summary before its file tags");
    assert.ok(short.prompt.includes("<additional-context>\n- ctx\n</additional-context>"));
    assert.ok(short.prompt.endsWith(SHORT_SUMMARY_PROMPT));
    assert.equal(result.shortSummary, "I fixed it.");
  });

  it("a failed short summary is reported and the compaction goes on without one", async () => {
    const warnings: string[] = [];
    const summarizer = fakeSummarizer((r) => {
      if (r.purpose === "short") throw new Error("timeout");
      return "THE SUMMARY";
    });
    const result = await compact(cleanPreparation(), summarizer, { onWarning: (w) => warnings.push(w) });
    assert.ok(result.summary.startsWith("THE SUMMARY"));
    assert.equal(result.shortSummary, undefined);
    assert.deepEqual(warnings, ["Short summary failed: timeout"]);
  });

  it("a short summary returned with the history summary (remote endpoint) is used without another call", async () => {
    const summarizer = fakeSummarizer(() => ({ text: "THE SUMMARY", shortSummary: "Remote short." }));
    const result = await compact(cleanPreparation(), summarizer);
    assert.equal(result.shortSummary, "Remote short.");
    assert.deepEqual(summarizer.requests.map((r) => r.purpose), ["history"]);
  });

  it("can be switched off", async () => {
    const summarizer = fakeSummarizer();
    const result = await compact(cleanPreparation(), summarizer, { shortSummary: false });
    assert.deepEqual(summarizer.requests.map((r) => r.purpose), ["history"]);
    assert.equal("shortSummary" in result, false);
  });
});

describe("compact: cancellation", () => {
  it("an abort during the history call rejects with SummarizationAbortedError", async () => {
    const controller = new AbortController();
    const summarizer = fakeSummarizer((r) => {
      setTimeout(() => controller.abort(), 5);
      return hangUntilAborted(r);
    });
    await assert.rejects(compact(cleanPreparation(), summarizer, { signal: controller.signal }), SummarizationAbortedError);
  });

  it("an abort during the short summary cancels the compaction too", async () => {
    const controller = new AbortController();
    const summarizer = fakeSummarizer((r) => {
      if (r.purpose === "history") return "S";
      controller.abort();
      throw new Error("request aborted");
    });
    await assert.rejects(compact(cleanPreparation(), summarizer, { signal: controller.signal }), SummarizationAbortedError);
  });

  it("an already aborted signal makes no call", async () => {
    const summarizer = fakeSummarizer();
    await assert.rejects(compact(cleanPreparation(), summarizer, { signal: AbortSignal.abort() }), SummarizationAbortedError);
    assert.equal(summarizer.requests.length, 0);
  });
});

describe("compact: input bounded by the summarizer's window (decision 10)", () => {
  const bigSession = () => {
    const specs = [];
    for (let i = 0; i < 12; i++) specs.push(u(`question ${i} ${text(3000, "q")}`), a(`answer ${i} ${text(3000, "a")}`));
    specs.push(u("last"), a("done"));
    return prepareCompaction(path(...specs), settings(2))!;
  };

  it("an unknown window (0) sends everything at once", async () => {
    const summarizer = fakeSummarizer();
    await compact(bigSession(), summarizer, { shortSummary: false });
    assert.equal(summarizer.requests.length, 1);
  });

  it("a span larger than the window is summarized in chunks that fit, in order, then merged", async () => {
    const window = 8000;
    const summarizer = fakeSummarizer((r, n) => (r.purpose === "merge" ? "MERGED" : `PART ${n}`), { contextWindow: window });
    const prep = { ...bigSession(), previousSummary: "EARLIER" };
    const result = await compact(prep, summarizer, { shortSummary: false, customInstructions: "focus" });
    const chunks = summarizer.requests.filter((r) => r.purpose === "history");
    const merges = summarizer.requests.filter((r) => r.purpose === "merge");
    assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
    for (const r of summarizer.requests) {
      assert.ok(estimateTextTokens(r.prompt) <= promptBudget(window, r.maxTokens, r.systemPrompt) + 1, "every prompt fits");
      assert.ok(r.maxTokens <= window / 4);
    }
    // every question reaches exactly one chunk, in order
    const order = chunks.flatMap((r) => [...r.prompt.matchAll(/question (\d+)/g)].map((m) => Number(m[1])));
    assert.deepEqual(order, Array.from({ length: 12 }, (_, i) => i));
    const finalMerge = merges[merges.length - 1];
    assert.ok(finalMerge.prompt.startsWith("<previous-summary>\nEARLIER\n</previous-summary>\n\n<partial-summary>\nPART"));
    assert.ok(finalMerge.prompt.includes(MERGE_SUMMARIES_PROMPT));
    assert.ok(finalMerge.prompt.endsWith("Additional focus: focus"));
    assert.ok(result.summary.startsWith("MERGED"));
  });

  it("packChunks keeps order, respects the budget and cuts a part that is too large alone", () => {
    const parts = ["a".repeat(100), "b".repeat(100), "c".repeat(5000), "d".repeat(100)];
    const chunks = packChunks(parts, 300); // 900 characters
    assert.deepEqual(chunks.map((c) => c.map((p) => p[0]).join("")), ["ab", "c", "d"]);
    for (const chunk of chunks) assert.ok(chunk.join("\n\n").length <= 900);
    assert.match(chunks[1][0], /characters omitted/);
  });

  it("a window too small for any conversation is refused with a clear error", async () => {
    const summarizer = fakeSummarizer(undefined, { contextWindow: 1200, name: "tiny/model" });
    await assert.rejects(compact(bigSession(), summarizer, { shortSummary: false }), /Summarization failed: tiny\/model: a context window of 1200 tokens/);
    assert.equal(summarizer.requests.length, 0);
  });
});

describe("serializeParts", () => {
  it("joins to the same text as serializeConversation and bounds tool results", () => {
    const messages: AgentMessage[] = path(u("hi"), a("", { calls: [{ name: "bash", args: { command: "ls" } }] }), tr(text(10_000)))
      .map((e) => (e as { message: AgentMessage }).message);
    const parts = serializeParts(messages, 1000);
    assert.equal(parts.length, 3);
    assert.equal(parts[1], '[Assistant tool calls]: bash(command="ls")');
    assert.ok(parts[2].length < 1100);
    assert.match(parts[2], /\[\.\.\. 9000 characters omitted \.\.\.\]/);
  });
});

describe("compaction through SessionManager", () => {
  it("three rounds: each carries the previous summary and the growing file lists; the context starts with the summary", async () => {
    const session = SessionManager.inMemory("/project");
    const summarizer = fakeSummarizer((r, n) => (r.purpose === "history" ? `ROUND SUMMARY ${n}` : r.purpose));
    const rounds = [
      { file: "one.ts", read: "a.md" },
      { file: "two.ts", read: "b.md" },
      { file: "three.ts", read: "one.ts" },
    ];
    const previousSummaries: (string | undefined)[] = [];
    for (const [round, files] of rounds.entries()) {
      for (let turn = 0; turn < 3; turn++) {
        session.appendMessage({ role: "user", content: `round ${round} turn ${turn} ${text(400)}`, timestamp: 0 });
        session.appendMessage(
          messageOf(
            a(text(400), {
              calls: [
                { name: "edit", args: { path: files.file } },
                { name: "read", args: { path: files.read } },
              ],
            }),
          ),
        );
      }
      const before = session.buildSessionContext().messages.length;
      // about 110 tokens per message: 200 keeps the last turn, a clean cut
      const prep = prepareCompaction(session.getBranch(), settings(200));
      assert.ok(prep, `round ${round} is compactable`);
      assert.equal(prep.isSplitTurn, false);
      previousSummaries.push(prep.previousSummary);
      const result = await compact(prep, summarizer, REFERENCE_LAYOUT);
      const id = session.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, result.details, undefined, {
        shortSummary: result.shortSummary,
      });
      const entry = session.getEntry(id) as CompactionEntry;
      assert.equal(entry.summary, result.summary);
      const context = session.buildSessionContext().messages;
      assert.equal(context[0].role, "compactionSummary");
      assert.equal((context[0] as { summary: string }).summary, result.summary);
      assert.ok(context.length < before, `round ${round}: ${context.length} < ${before}`);
      const keptFrom = session.getBranch().findIndex((e) => e.id === result.firstKeptEntryId);
      const kept = session.getBranch().slice(keptFrom).filter((e) => e.type === "message").length;
      assert.equal(context.length, 1 + kept, "the summary, then the kept entries");
    }
    assert.equal(previousSummaries[0], undefined);
    assert.match(previousSummaries[1] ?? "", /^ROUND SUMMARY 0\n\n<read-files>/);
    assert.match(previousSummaries[2] ?? "", /^ROUND SUMMARY 2\n\n<read-files>/);
    const last = session.getLeafEntry() as CompactionEntry;
    assert.deepEqual(last.details, { readFiles: ["a.md", "b.md"], modifiedFiles: ["one.ts", "three.ts", "two.ts"] });
    const updatePrompts = summarizer.requests.filter((r) => r.purpose === "history").slice(1);
    for (const r of updatePrompts) {
      assert.ok(r.prompt.endsWith(UPDATE_SUMMARY_PROMPT));
      assert.ok(!r.prompt.includes("<read-files>"), "file tags never reach the model");
    }
  });
});

describe("compaction of the real fixture with the extractive summarizer", () => {
  it("fills every section and lists every modified file", async () => {
    const session = SessionManager.open(REAL_SESSION, { readOnly: true });
    const prep = prepareCompaction(session.getBranch(), DEFAULT_COMPACTION_SETTINGS);
    assert.ok(prep);
    const result = await compact(prep, extractiveSummarizer());
    assert.ok(result.summary.length > 100);
    assert.equal(result.firstKeptEntryId, prep.firstKeptEntryId);
    assert.ok(result.tokensBefore > 0);
    const [body] = result.summary.split("\n\n<read-files>\n");
    for (const section of SUMMARY_SECTIONS) assert.ok(body.includes(`## ${section}\n`), `section ${section}`);
    for (const sub of ["### Done", "### In Progress", "### Blocked"]) assert.ok(body.includes(`${sub}\n`), sub);
    assert.ok(result.details.modifiedFiles.length >= 10, `${result.details.modifiedFiles.length} modified files`);
    for (const file of result.details.modifiedFiles) assert.ok(body.includes(file), `summary names ${file}`);
    const tags = result.summary.slice(body.length);
    assert.equal(tags, `\n\n<read-files>\n${result.details.readFiles.join("\n")}\n</read-files>\n\n<modified-files>\n${result.details.modifiedFiles.join("\n")}\n</modified-files>`);
    assert.ok(result.shortSummary && result.shortSummary.length > 0);
  });
});
