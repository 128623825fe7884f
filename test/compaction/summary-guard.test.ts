/**
 * The verbatim requests section and the coverage check in compact() (summarizer/summary-guard.ts):
 * a summarizer that drops facts gets them appended and reported in `details.coverage`; over
 * iterative updates the sections are read back, merged, never duplicated, never handed to the
 * summarizer, and stay within their budgets; turned off, the summary is the reference's layout.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateTextTokens } from "../../src/compaction/chunking.js";
import { compact } from "../../src/compaction/compact.js";
import { prepareCompaction } from "../../src/compaction/prepare.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../../src/compaction/settings.js";
import { estimateMessagesTokens } from "../../src/compaction/tokens.js";
import { SessionManager } from "../../src/session/manager.js";
import { COVERAGE_HEADING } from "../../src/summarizer/coverage.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";
import { USER_REQUESTS_HEADING } from "../../src/summarizer/user-requests.js";
import { fakeSummarizer } from "../helpers/fake-summarizer.js";
import { a, messageOf, path, tr, u } from "../helpers/paths.js";

const settings = (keepRecentTokens: number) => ({ ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens });
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** A span with a request, a constraint, a failing check, a decision and a closing question (about 600 tokens, so no share caps bind). */
function preparation() {
  const entries = path(
    u("Add an export to CSV for the invoices page. Never include the customer's tax id in the file."),
    a("I chose a streaming writer because exports can have a million rows.", { calls: [{ name: "write", args: { path: "src/export/csv.ts" } }] }),
    tr(`Wrote 40 lines to src/export/csv.ts\n${"const row = format(line);\n".repeat(60)}`, "write"),
    a("", { calls: [{ name: "bash", args: { command: "npm test" } }] }),
    tr("not ok 3 - escapes quotes in names\nCommand exited with code 1"),
    a("The quoting test fails; the rest passes. Should the export use semicolons for German locales?"),
    u("Use commas everywhere, and fix the quoting."),
    a("x".repeat(400)),
  );
  const prep = prepareCompaction(entries, settings(110));
  assert.ok(prep && !prep.isSplitTurn);
  return prep;
}

describe("compact() with a summarizer that drops facts", () => {
  it("appends what is missing under the coverage heading, then the user's requests verbatim, then the file tags", async () => {
    const dropper = fakeSummarizer((r) => (r.purpose === "history" ? "## Goal\nWork on exports." : "short"));
    const result = await compact(preparation(), dropper);
    const [body, rest] = result.summary.split(`\n\n${COVERAGE_HEADING}\n\n`);
    assert.equal(body, "## Goal\nWork on exports.");
    const [appendix, tail] = rest.split(`\n\n${USER_REQUESTS_HEADING}\n\n`);
    // The request and its constraint are quoted in the requests section: not appended twice.
    assert.deepEqual(appendix.split("\n"), [
      "- Open question: Should the export use semicolons for German locales?",
      "- Unresolved error: `npm test`: not ok 3 - escapes quotes in names",
      "- Decision: I chose a streaming writer because exports can have a million rows.",
    ]);
    assert.ok(tail.startsWith("> Add an export to CSV for the invoices page. Never include the customer's tax id in the file."));
    assert.ok(tail.endsWith("<modified-files>\nsrc/export/csv.ts\n</modified-files>"));
    const coverage = result.details.coverage;
    assert.ok(coverage);
    assert.deepEqual(
      coverage.added.map((item) => item.kind),
      ["question", "error", "decision"],
    );
    assert.deepEqual(result.coverage, coverage, "the result (and so the compaction event) carries the same report");
    assert.equal(coverage.omitted, 0);
  });

  it("adds nothing when the summary already says it all", async () => {
    const complete = [
      "Add an export to CSV for the invoices page. Never include the customer's tax id in the file.",
      "Should the export use semicolons for German locales?",
      "not ok 3 - escapes quotes in names",
      "I chose a streaming writer because exports can have a million rows.",
    ].join("\n");
    const result = await compact(preparation(), fakeSummarizer((r) => (r.purpose === "history" ? complete : "short")));
    assert.ok(!result.summary.includes(COVERAGE_HEADING));
    assert.deepEqual(result.details.coverage?.added, []);
  });

  it("turned off, gives the reference's layout: summary, then file tags", async () => {
    const result = await compact(preparation(), fakeSummarizer((r) => (r.purpose === "history" ? "S" : "short")), {
      guard: { verbatimRequests: false, coverageCheck: false },
    });
    assert.equal(result.summary, "S\n\n<modified-files>\nsrc/export/csv.ts\n</modified-files>");
    assert.deepEqual(result.details, { readFiles: [], modifiedFiles: ["src/export/csv.ts"] });
  });
});

describe("budgets of the sections", () => {
  const chatty = () => {
    const specs = [];
    for (let i = 0; i < 8; i++) {
      specs.push(u(`Request ${i}: ${"please keep the parser fast and never allocate per token. ".repeat(5)}`), a(`ok ${i}`));
    }
    return specs;
  };
  const sections = (summary: string) => summary.slice(summary.indexOf("\n\n") + 2).replace(/\n\n<(?:read|modified)-files>[\s\S]*$/, "");

  it("take at most 60% of what the summary replaces, when the span is mostly the user's own words", async () => {
    const prep = prepareCompaction(path(...chatty()), settings(60));
    assert.ok(prep);
    const replaced = estimateMessagesTokens([...prep.messagesToSummarize, ...prep.turnPrefixMessages]);
    const result = await compact(prep, fakeSummarizer((r) => (r.purpose === "history" ? "S" : "short")), { shortSummary: false });
    assert.ok(result.summary.includes(USER_REQUESTS_HEADING));
    assert.ok(estimateTextTokens(sections(result.summary)) <= replaced * 0.6 + 10, `${estimateTextTokens(sections(result.summary))} of ${replaced}`);
  });

  it("scale with the summary budget a small reserve gives", async () => {
    const big = [];
    for (let i = 0; i < 6; i++) big.push(...chatty(), a("x".repeat(4000)));
    const prep = prepareCompaction(path(...big), { ...settings(60), reserveTokens: 800 });
    assert.ok(prep);
    const result = await compact(prep, fakeSummarizer((r) => (r.purpose === "history" ? "S" : "short")), { shortSummary: false });
    const requests = result.summary.slice(result.summary.indexOf(USER_REQUESTS_HEADING)).replace(/\n\n<(?:read|modified)-files>[\s\S]*$/, "");
    assert.ok(estimateTextTokens(requests) <= Math.floor(0.8 * 800 * 0.16) + 10, `${estimateTextTokens(requests)} tokens`);
  });
});

describe("iterative updates", () => {
  async function rounds(summarizer: ReturnType<typeof fakeSummarizer> | ReturnType<typeof extractiveSummarizer>, requestTokens?: number) {
    const session = SessionManager.inMemory("/project");
    const summaries: string[] = [];
    for (let round = 0; round < 4; round++) {
      session.appendMessage(messageOf(u(`Round ${round}: rename \`oldName${round}\` to \`newName${round}\`. Don't break the public API of module ${round}.`)));
      session.appendMessage(messageOf(a("x".repeat(600), { calls: [{ name: "edit", args: { path: `src/m${round}.ts` } }] })));
      session.appendMessage(messageOf(tr(`Successfully replaced text in src/m${round}.ts`, "edit")));
      session.appendMessage(messageOf(u(`Round ${round}: now run the tests.`)));
      session.appendMessage(messageOf(a("y".repeat(600))));
      const prep = prepareCompaction(session.getBranch(), settings(150));
      assert.ok(prep, `round ${round} compacts`);
      const result = await compact(prep, summarizer, { shortSummary: false, ...(requestTokens ? { guard: { requestTokens } } : {}) });
      session.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, result.details);
      summaries.push(result.summary);
    }
    return summaries;
  }

  it("the summarizer never sees the sections; each summary has them once, with the older requests merged in", async () => {
    const summarizer = fakeSummarizer((r, n) => (r.purpose === "history" ? `SUMMARY ${n}` : "short"));
    const summaries = await rounds(summarizer);
    for (const request of summarizer.requests) {
      assert.ok(!request.prompt.includes(USER_REQUESTS_HEADING) && !request.prompt.includes(COVERAGE_HEADING), "no section in any prompt");
    }
    for (const summary of summaries) {
      assert.equal(count(summary, USER_REQUESTS_HEADING), 1);
      assert.ok(count(summary, COVERAGE_HEADING) <= 1);
      assert.equal(count(summary, "> Round 0: rename `oldName0`"), 1, "the first request is quoted once, every round");
    }
    const last = summaries[summaries.length - 1];
    const quoted = last.slice(last.indexOf(USER_REQUESTS_HEADING));
    assert.ok(quoted.indexOf("> Round 3: rename") < quoted.indexOf("> Round 0: rename"), "newest first");
  });

  it("the section stays within its budget however many rounds add requests", async () => {
    const summaries = await rounds(fakeSummarizer((r) => (r.purpose === "history" ? "S" : "short")), 120);
    for (const summary of summaries) {
      const section = summary.slice(summary.indexOf(USER_REQUESTS_HEADING), summary.indexOf("\n\n<modified-files>"));
      assert.ok(estimateTextTokens(section) <= 120 + 10, `${estimateTextTokens(section)} tokens`);
    }
    assert.match(summaries[3], /older requests? left out to stay within 120 tokens|\[… clipped\]/);
  });

  it("with the extractive summarizer too: no section is duplicated and old constraints survive", async () => {
    const summaries = await rounds(extractiveSummarizer());
    const last = summaries[summaries.length - 1];
    assert.equal(count(last, USER_REQUESTS_HEADING), 1);
    assert.ok(count(last, COVERAGE_HEADING) <= 1);
    assert.ok(last.includes("Don't break the public API of module 0."));
  });
});
