/**
 * Finished work folds out of an extractive summary instead of piling up over chained compactions:
 * a request whose file was changed after it leaves the Goal (the first one stays: the work began
 * there), a correction is a constraint and not a goal, and the items of a previous summary are
 * taken as they stand after the span — an answered question is no longer awaited, a split turn's
 * failure is an error that a passing check clears, a check run again says the newer state, and
 * its file changes fold into one line (the compaction's file list names the files).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentMessage } from "../../src/format/message-types.js";
import { convertToLlm } from "../../src/messages/convert.js";
import { serializeConversation } from "../../src/messages/serialize.js";
import { extractiveSummary } from "../../src/summarizer/extractive.js";
import { actedOn, isCorrection, namedPaths } from "../../src/summarizer/folding.js";
import { sectionLines, user, say, result } from "../helpers/summary-text.js";

const conversation = (messages: AgentMessage[]) => serializeConversation(convertToLlm(messages));
const summarize = (messages: AgentMessage[], previous?: string) =>
  extractiveSummary(
    `<conversation>\n${conversation(messages)}\n</conversation>\n\n${previous ? `<previous-summary>\n${previous}\n</previous-summary>\n\n` : ""}Summarize.`,
    "history",
  );

const section = (summary: string, heading: string) => sectionLines(summary, heading);

const edit = (path: string) => [say("", [{ name: "edit", args: { path, oldText: "a", newText: "b" } }]), result(`Edited ${path}`, "edit")];

describe("what a request names and whether it was acted on", () => {
  it("finds paths with a folder or an extension, not words, URLs or numbers", () => {
    assert.deepEqual(namedPaths("Change `toCents` in src/money/cents.ts, then README.md. See https://x.dev/a.ts and version 1.2"), [
      "src/money/cents.ts",
      "README.md",
    ]);
  });

  it("counts a change to the same file, relative or absolute, not one that only shares its name", () => {
    assert.ok(actedOn("fix src/a.ts please", ["/repo/src/a.ts"]));
    assert.ok(!actedOn("fix src/a.ts please", ["src/b.ts"]));
    assert.ok(!actedOn("make it faster", ["src/a.ts"]));
    assert.ok(!actedOn("Add a script to packages/web/package.json", ["package.json"]));
  });

  it("tells a correction from a request that also corrects", () => {
    assert.ok(isCorrection("Correction: not 60, use 140 per batch."));
    assert.ok(isCorrection("No, not 8080, use 8443."));
    assert.ok(!isCorrection("Add paging to src/list.ts. Not 8080, use 8443."));
    assert.ok(!isCorrection("The login page does not load, fix it."));
    assert.ok(!isCorrection("Use pnpm instead of npm."));
  });
});

describe("the goal of an extractive summary", () => {
  const messages = [
    user("Add paging to the invoice list in src/invoices/list.ts."),
    ...edit("src/invoices/list.ts"),
    say("Paging is in."),
    user("Next, make src/tax/rates.ts read the rates from config."),
    ...edit("src/tax/rates.ts"),
    say("Done."),
    user("Correction: not 60, use 140 per batch."),
    say("Noted."),
    user("Also look into why exports are slow."),
    say("Looking."),
    user("Now add a CSV export to src/exports/csv.ts."),
  ];
  const goal = section(summarize(messages), "## Goal");

  it("keeps where the work started, what is still open and the latest request, not finished tasks or corrections", () => {
    assert.deepEqual(goal, [
      "- Add paging to the invoice list in src/invoices/list.ts.",
      "- Also look into why exports are slow.",
      "- Latest request: Now add a CSV export to src/exports/csv.ts.",
    ]);
  });

  it("says the correction under Constraints instead", () => {
    const summary = summarize(messages);
    assert.ok(section(summary, "## Constraints & Preferences").includes("- Correction: not 60, use 140 per batch."));
  });
});

describe("questions", () => {
  it("a question answered with a yes, a no or a short reply is settled; one asked and answered in passing waits for no one", () => {
    const summary = summarize([
      user("Add paging to src/list.ts."),
      say("Paging is in. Should I also update the README?"),
      user("yes please"),
      say("Done. Which page size?"),
      user("25"),
      say("Why did the import fail? The alias was missing in tsconfig, fixed now."),
      user("Great, now add sorting to src/list.ts and make it stable across pages."),
      say("Sorting is in."),
    ]);
    assert.deepEqual(section(summary, "## Critical Context"), []);
  });

  it("a question the user passed over for a new request is still open; one answered is not", () => {
    const summary = summarize([
      user("Add paging to src/list.ts."),
      say("Paging is in. Should the page size be configurable?"),
      user("Now add sorting to src/list.ts."),
      say("Sorting is in. Ascending by default?"),
      user("Yes. Then add filters."),
      say("Filters are in. Should they be saved per user?"),
    ]);
    assert.deepEqual(section(summary, "## Critical Context"), [
      "- Question not answered yet: Should the page size be configurable?",
      "- Question awaiting the user's answer: Should they be saved per user?",
    ]);
  });
});

describe("decisions in other languages", () => {
  it("a reversal with 'statt' is a decision, and an article after 'invece di' or 'statt' retires nothing", () => {
    const german = summarize([
      user("Die Sätze sollen zwischengespeichert werden."),
      say("Ich lege die Sätze in `rateCache0` ab, statt sie bei jedem Aufruf neu zu berechnen."),
      say("Ich wechsle zu `rateStore0` statt `rateCache0`: der Cache im Prozess wird bei jedem Deploy geleert."),
      user("Gut. Jede abgelehnte Zeile soll gemeldet werden, statt bei der ersten abzubrechen."),
      say("Statt jeden Aufrufer anzupassen, normalisiert toCents die Eingabe jetzt einmal."),
    ]);
    assert.deepEqual(section(german, "## Key Decisions"), [
      "- Ich wechsle zu `rateStore0` statt `rateCache0`: der Cache im Prozess wird bei jedem Deploy geleert.",
      "- Statt jeden Aufrufer anzupassen, normalisiert toCents die Eingabe jetzt einmal.",
    ]);
    const italian = summarize([
      user("Aggiungi le aliquote."),
      say("Ho scelto una tabella di lookup invece di uno switch perché le aliquote cambiano ogni trimestre."),
      say("Ho scelto un return anticipato invece di una condizione annidata, così il codice resta leggibile."),
    ]);
    assert.equal(section(italian, "## Key Decisions").length, 2, italian);
  });
});

describe("a previous summary's items, as they stand after the span", () => {
  const previous = [
    "## Goal",
    "- Add paging to the invoice list in src/invoices/list.ts.",
    "- Make src/tax/rates.ts read the rates from config.",
    "- Latest request: Add a CSV export to src/exports/csv.ts.",
    "",
    "## Progress",
    "### Done",
    "- [x] Edited `src/tax/rates.ts`",
    "- [x] Ran `npm test -- test/tax`",
    "",
    "## Critical Context",
    "- Question awaiting the user's answer: Should the CSV use semicolons?",
    "- Modified: `src/tax/rates.ts`",
    "- Constraint: Keep the header row in English.",
    "",
    "---",
    "",
    "## Original Request",
    "Add a CSV export to src/exports/csv.ts.",
    "",
    "## Early Progress",
    "- Failed: `npm run typecheck`: src/exports/csv.ts(3,1): error TS2304: Cannot find name 'row'.",
  ].join("\n");
  const span = [
    user("Yes, semicolons. Then add a PDF export to src/exports/pdf.ts."),
    ...edit("src/exports/csv.ts"),
    say("", [{ name: "bash", args: { command: "npm run typecheck" } }]),
    result(""),
    say("", [{ name: "bash", args: { command: "npm test -- test/exports" } }]),
    result("ok 3"),
    say("The CSV export works."),
  ];
  const summary = summarize(span, previous);

  it("folds the old latest request once its file was changed, keeps the other goals, and the latest request is latest no more", () => {
    // an earlier goal was weighed when its summary was made: what the earlier Done lists could
    // have been done before it, so only the old latest request folds by it
    assert.deepEqual(section(summary, "## Goal"), [
      "- Add paging to the invoice list in src/invoices/list.ts.",
      "- Make src/tax/rates.ts read the rates from config.",
      "- Yes, semicolons. Then add a PDF export to src/exports/pdf.ts.",
    ]);
  });

  it("no longer awaits the answered question, and says files and constraints where they belong", () => {
    const critical = section(summary, "## Critical Context");
    assert.ok(!critical.some((line) => /Question awaiting|Modified:|Constraint:/.test(line)), critical.join("\n"));
    assert.ok(section(summary, "## Constraints & Preferences").includes("- Keep the header row in English."));
  });

  it("clears the split turn's failure once the typecheck passed, and keeps one run per check", () => {
    assert.deepEqual(section(summary, "### Blocked"), []);
    const done = section(summary, "### Done");
    assert.ok(!done.some((line) => line.includes("Failed:")), done.join("\n"));
    assert.ok(done.includes("- [x] Ran `npm test -- test/exports`"), done.join("\n"));
    assert.ok(!done.includes("- [x] Ran `npm test -- test/tax`"), "the newer test run says the present state");
  });

  it("folds the earlier file changes into one line, and lists the span's own", () => {
    const done = section(summary, "### Done");
    assert.equal(done[0], "- [x] Changed 1 file in earlier work (the modified-files list names them)");
    assert.ok(done.includes("- [x] Edited `src/exports/csv.ts`"), done.join("\n"));
    const next = section(summarize([user("Now the PDF export."), ...edit("src/exports/pdf.ts"), say("Done.")], summary), "### Done");
    assert.equal(next[0], "- [x] Changed 2 files in earlier work (the modified-files list names them)", next.join("\n"));
  });

  it("still awaits the question when the span's first message passed it over, and takes a split turn's decisions", () => {
    const withDecision = previous.replace("## Early Progress", "## Context for Suffix\n- Decision: I chose semicolons because Excel in Germany expects them.\n\n## Early Progress");
    const next = summarize([user("Add a PDF export to src/exports/pdf.ts."), say("On it.")], withDecision);
    assert.ok(section(next, "## Critical Context").includes("- Question not answered yet: Should the CSV use semicolons?"), next);
    assert.ok(section(next, "## Key Decisions").includes("- I chose semicolons because Excel in Germany expects them."), next);
  });

  it("keeps a split turn's failure that nothing cleared, under Blocked", () => {
    const blocked = section(summarize([user("Then add a PDF export to src/exports/pdf.ts."), say("On it.")], previous), "### Blocked");
    assert.deepEqual(blocked, ["- `npm run typecheck`: src/exports/csv.ts(3,1): error TS2304: Cannot find name 'row'."]);
  });
});
