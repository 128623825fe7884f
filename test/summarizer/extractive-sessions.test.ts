/**
 * The extractive summarizer on realistic sessions written for these tests (not copies of anyone's
 * conversation): an injected system prompt is not a goal, a pasted CI log is not a constraint, an
 * error is Blocked only until a later run of the same check passes (whatever is chained after
 * it), a statement of intent is a next step and not a decision, the last open question is kept,
 * and OpenClaw / Claude-Code-style tools (`Read`, `Edit` with `file_path`) give file lists.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentMessage } from "../../src/format/message-types.js";
import { convertToLlm } from "../../src/messages/convert.js";
import { serializeConversation } from "../../src/messages/serialize.js";
import { extractiveSummary } from "../../src/summarizer/extractive.js";
import { sectionLines, user, say, result } from "../helpers/summary-text.js";

const summarize = (...messages: AgentMessage[]) =>
  extractiveSummary(`<conversation>\n${serializeConversation(convertToLlm(messages))}\n</conversation>\n\nSummarize.`, "history");

const section = (summary: string, heading: string) => sectionLines(summary, heading);


const INJECTED =
  "You are Atlas, an autonomous software engineer working for the platform team.\nTier: heavy\nTools: read, edit, bash\nYou must never push to main.\nAlways reply in English.";

describe("extractive summary of a session with an injected prompt and a pasted CI log", () => {
  const summary = summarize(
    user(INJECTED),
    user(
      "The nightly build broke, here is the log:\n\nsrc/report/pdf.ts(88,14): error TS2554: Expected 2 arguments, but got 1.\nnpm ERR! code 2\nnpm ERR! Must be fixed before release\n\nThe release checklist says: \"Always tag the release after the build.\"\nPlease fix the call in `renderInvoicePdf`. Don't change the public `PdfOptions` type.",
    ),
    say("Let me look at the call site.", [{ name: "read", args: { path: "src/report/pdf.ts" } }]),
    result("export function renderInvoicePdf(doc: Invoice) { return layout(doc); }", "read"),
  );

  it("takes the user's request, not the injected prompt, for the goal", () => {
    const goal = section(summary, "## Goal").join("\n");
    assert.doesNotMatch(goal, /You are Atlas|Tier: heavy/);
    assert.match(goal, /The nightly build broke/);
    assert.doesNotMatch(goal, /error TS2554/, "the pasted error is not the goal");
  });

  it("takes the user's rule, not the injected prompt's, the log's or a quoted document's lines, for the constraints", () => {
    const constraints = section(summary, "## Constraints & Preferences");
    assert.deepEqual(constraints, ["- Don't change the public `PdfOptions` type."]);
  });
});

describe("Blocked: only while no later run of the same check passed", () => {
  const failing = "src/api/users.ts(14,3): error TS2322: Type 'string' is not assignable to type 'UserId'.\nFound 1 error.\n\nCommand exited with code 2";

  it("a later `npm run typecheck && npm run lint` that passes clears a failing `npm run typecheck`", () => {
    const summary = summarize(
      user("Rename the user id type and make everything compile."),
      say("", [{ name: "bash", args: { command: "npm run typecheck" } }]),
      result(failing),
      say("Fixing the cast.", [{ name: "edit", args: { path: "src/api/users.ts" } }]),
      result("Successfully replaced text in src/api/users.ts", "edit"),
      say("", [{ name: "bash", args: { command: "npm run typecheck && npm run lint" } }]),
      result("Found 0 errors.\nChecked 120 files in 210ms. No fixes applied."),
    );
    assert.deepEqual(section(summary, "### Blocked"), []);
  });

  it("a passing run of another check does not clear it", () => {
    const summary = summarize(
      user("Rename the user id type and make everything compile."),
      say("", [{ name: "bash", args: { command: "npm run typecheck" } }]),
      result(failing),
      say("", [{ name: "bash", args: { command: "npm run lint" } }]),
      result("Checked 120 files in 190ms. No fixes applied."),
    );
    const blocked = section(summary, "### Blocked");
    assert.equal(blocked.length, 1);
    assert.match(blocked[0], /`npm run typecheck`: src\/api\/users\.ts\(14,3\): error TS2322/);
  });
});

describe("decisions, next steps and the open question", () => {
  const summary = summarize(
    user("The export job times out for large tenants. Find out why and fix it."),
    say("I'll fetch one extra task to decide whether batching helps.", [{ name: "bash", args: { command: "node scripts/probe.js" } }]),
    result("batch=1: 41s\nbatch=500: 3s"),
    say("I decided to stream rows in batches of 500 because one query per row is what makes it slow."),
    say("Batching is in place and the job finishes in 3 s. Should I also add a progress bar to the admin page? I can do that next."),
  );

  it("a statement of intent is not a decision; a reported choice is", () => {
    const decisions = section(summary, "## Key Decisions").join("\n");
    assert.doesNotMatch(decisions, /I'll fetch one extra task/);
    assert.match(decisions, /I decided to stream rows in batches of 500/);
  });

  it("a check runs once under Done, as last run; a commit that names tests is no test run, and other commands stay", () => {
    const done = section(
      summarize(
        user("Add the export and commit it."),
        say("", [{ name: "bash", args: { command: "npm test -- test/a.test.ts" } }]),
        result("ok"),
        say("", [{ name: "bash", args: { command: "npm install lodash" } }]),
        result("added 1 package"),
        say("", [{ name: "bash", args: { command: "npm test" } }]),
        result("ok"),
        say("", [{ name: "bash", args: { command: 'git commit -m "add tests"' } }]),
        result("1 file changed"),
        say("Committed."),
      ),
      "### Done",
    );
    assert.deepEqual(done, ["- [x] Ran `npm install lodash`", "- [x] Ran `npm test`", '- [x] Ran `git commit -m "add tests"`']);
  });

  it("a report of finished work is progress, not a decision, though it repeats the request's 'instead of'", () => {
    const decisions = section(
      summarize(
        user("Make the importer report every rejected row instead of stopping at the first."),
        say("Done: the importer now reports every rejected row instead of stopping at the first, and the tests pass. I chose a list over a counter because the rows are shown."),
      ),
      "## Key Decisions",
    );
    assert.deepEqual(decisions, ["- I chose a list over a counter because the rows are shown."]);
  });

  it("a choice phrased as intent, one way against another, is a decision (issue 25: dropped since 5462ea6)", () => {
    const decisions = section(
      summarize(user("Add a --verbose flag to the CLI."), say("I'll use commander's option API rather than parsing argv by hand. I'll read the entry point first.")),
      "## Key Decisions",
    ).join("\n");
    assert.match(decisions, /I'll use commander's option API rather than parsing argv by hand/);
    assert.doesNotMatch(decisions, /read the entry point first/);
  });

  it("keeps the last question, even when the answer goes on after it", () => {
    assert.ok(section(summary, "## Critical Context").includes("- Question awaiting the user's answer: Should I also add a progress bar to the admin page?"));
  });
});

describe("file lists from other agents' tools", () => {
  it("reads OpenClaw / Claude-Code-style `Read`, `Edit`, `Write` with `file_path`", () => {
    const summary = summarize(
      user("Add a health check endpoint to the gateway."),
      say("", [{ name: "Read", args: { file_path: "/srv/gateway/src/routes.ts" } }]),
      result("export const routes = [];", "Read"),
      say("", [{ name: "Edit", args: { file_path: "/srv/gateway/src/routes.ts", old_string: "[]", new_string: "[health]" } }]),
      result("The file /srv/gateway/src/routes.ts has been updated.", "Edit"),
      say("", [{ name: "Write", args: { file_path: "/srv/gateway/src/health.ts", content: "export const health = {};" } }]),
      result("File created successfully at: /srv/gateway/src/health.ts", "Write"),
    );
    const done = section(summary, "### Done");
    assert.ok(done.some((line) => line.includes("Edited `/srv/gateway/src/routes.ts`")), done.join("\n"));
    assert.ok(done.some((line) => line.includes("Wrote `/srv/gateway/src/health.ts`")), done.join("\n"));
  });
});

describe("the beginning of a split turn", () => {
  it("keeps the request's rules whole, though the request itself is condensed", () => {
    const messages = [
      user(`Port the CSV importer to streams. ${"It has to handle files of several gigabytes without loading them. ".repeat(6)}Never buffer a whole file in memory.`),
      say("", [{ name: "read", args: { path: "src/import/csv.ts" } }]),
      result("export function importCsv(text: string) {}", "read"),
    ];
    const summary = extractiveSummary(`<conversation>\n${serializeConversation(convertToLlm(messages))}\n</conversation>\n\nSummarize.`, "turn-prefix");
    assert.ok(section(summary, "## Context for Suffix").includes("- Constraint: Never buffer a whole file in memory."));
  });
});
