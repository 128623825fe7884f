/**
 * The coverage check (summarizer/coverage.ts): which facts a summary must hold, what is appended
 * when it does not, within a budget, and which items an update checks again.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateTextTokens } from "../../src/compaction/chunking.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { convertToLlm } from "../../src/messages/convert.js";
import { serializeConversation } from "../../src/messages/serialize.js";
import { checkCoverage, COVERAGE_HEADING, mentions, parseCoverage, requiredFacts } from "../../src/summarizer/coverage.js";
import { parseTranscript } from "../../src/summarizer/extractive-parse.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";

const transcript = (...messages: AgentMessage[]) => parseTranscript(serializeConversation(convertToLlm(messages)));
const user = (text: string) => messageOf(u(text));
const say = (text: string, calls?: { name: string; args?: Record<string, unknown> }[]) => messageOf(a(text, calls ? { calls } : {}));
const result = (text: string, tool = "bash") => messageOf(tr(text, tool));

const SPAN = transcript(
  user("Migrate the session store to SQLite. Never drop the old JSON files. Bitte immer die bestehenden Tests behalten."),
  say("I chose WAL mode because readers must not block the writer.", [{ name: "edit", args: { path: "src/store.ts" } }]),
  result("Successfully replaced text in src/store.ts", "edit"),
  say("", [{ name: "bash", args: { command: "npm test" } }]),
  result("✖ migrates old files (3.2ms)\nnot ok 4 - migrates old files\nCommand exited with code 1"),
  say("", [{ name: "bash", args: { command: "npm run lint" } }]),
  result("error: Unexpected any. Specify a different type.\nCommand exited with code 1"),
  say("", [{ name: "bash", args: { command: "npm run lint -- --fix" } }]),
  result("Checked 40 files. Fixed 1 file."),
  user("Also keep a backup of the JSON files in .bonsai/backup."),
  say("The backup is written before the migration starts. Do you want the backup compressed?"),
);

describe("requiredFacts", () => {
  const facts = requiredFacts({ conversation: SPAN, modifiedFiles: ["src/store.ts"] });
  const of = (kind: string) => facts.filter((f) => f.kind === kind).map((f) => f.text);

  it("asks for the latest request, the open question, the errors still open, constraints in any handled language, decisions and files", () => {
    assert.deepEqual(of("request"), ["Also keep a backup of the JSON files in .bonsai/backup."]);
    assert.deepEqual(of("question"), ["Do you want the backup compressed?"]);
    assert.deepEqual(of("error"), ["`npm test`: ✖ migrates old files (3.2ms)"], "the lint error was cleared by a later lint run");
    assert.deepEqual(of("constraint"), ["Never drop the old JSON files.", "Bitte immer die bestehenden Tests behalten."]);
    assert.deepEqual(of("decision"), ["I chose WAL mode because readers must not block the writer."]);
    assert.deepEqual(of("file"), ["`src/store.ts`"]);
  });

  it("also checks the constraints of requests quoted by earlier summaries, and carried items", () => {
    const more = requiredFacts({
      conversation: SPAN,
      modifiedFiles: [],
      olderRequests: ["Start with the read path. Don't touch the HTTP layer."],
      carried: [{ kind: "decision", text: "Sessions are keyed by their file path." }],
    });
    assert.ok(more.some((f) => f.kind === "constraint" && f.text === "Don't touch the HTTP layer."));
    assert.ok(more.some((f) => f.kind === "decision" && f.text === "Sessions are keyed by their file path."));
  });
});

describe("checkCoverage", () => {
  const facts = requiredFacts({ conversation: SPAN, modifiedFiles: ["src/store.ts"] });

  it("appends exactly what the summary misses, verbatim, under its heading", () => {
    const summary = "## Goal\nMigrate the store.\n\n## Constraints\n- **never** drop the old JSON files\n\nTouched `src/store.ts`.";
    const checked = checkCoverage(summary, facts, 1000, estimateTextTokens);
    const kinds = checked.report.added.map((item) => item.kind);
    assert.deepEqual(kinds, ["request", "question", "error", "constraint", "decision"]);
    assert.ok(checked.text.startsWith(`${COVERAGE_HEADING}\n\n- Latest request: Also keep a backup of the JSON files in .bonsai/backup.`));
    assert.ok(checked.text.includes("- Constraint: Bitte immer die bestehenden Tests behalten."));
    assert.ok(!checked.text.includes("Never drop"), "a constraint present up to case and markup is not repeated");
    assert.equal(checked.report.checked, facts.length);
    assert.equal(checked.report.omitted, 0);
    for (const item of checked.report.added) assert.ok(mentions(`${summary}\n${checked.text}`, item.text));
  });

  it("adds nothing to a summary that has everything", () => {
    const everything = facts.map((f) => f.text).join("\n");
    const checked = checkCoverage(everything, facts, 1000, estimateTextTokens);
    assert.equal(checked.text, "");
    assert.deepEqual(checked.report.added, []);
  });

  it("stays within its budget and counts what it left out", () => {
    const checked = checkCoverage("nothing", facts, 40, estimateTextTokens);
    assert.ok(checked.text.length > 0);
    assert.ok(estimateTextTokens(checked.text) <= 40, `${estimateTextTokens(checked.text)} tokens`);
    assert.ok(checked.report.omitted > 0);
    assert.equal(checked.report.added.length + checked.report.omitted, facts.length, "every fact is missing from \"nothing\"");
  });
});

describe("parseCoverage", () => {
  it("carries constraints, decisions and questions to the next update, not requests or errors of an older span", () => {
    const section =
      "\n\n- Latest request: do X\n- Open question: Y?\n- Unresolved error: `npm test`: boom\n- Constraint: Never drop tables.\n- Decision: Use WAL.\n- Question not answered yet: Z?\n";
    assert.deepEqual(parseCoverage(section), [
      { kind: "question", text: "Y?" },
      { kind: "constraint", text: "Never drop tables." },
      { kind: "decision", text: "Use WAL." },
      { kind: "unanswered", text: "Z?" },
    ]);
  });

  it("a carried question is settled by an answer and still open when the next message passes it over", () => {
    const carried = [
      { kind: "question" as const, text: "Should the CSV use semicolons?" },
      { kind: "unanswered" as const, text: "Backfill last quarter too?" },
    ];
    const facts = (first: string) =>
      requiredFacts({ conversation: parseTranscript(`[User]: ${first}\n\n[Assistant]: On it.`), modifiedFiles: [], carried }).filter((f) =>
        ["question", "unanswered"].includes(f.kind),
      );
    assert.deepEqual(
      facts("Yes, semicolons. Then add the PDF export.").map((f) => [f.kind, f.text]),
      [["unanswered", "Backfill last quarter too?"]],
    );
    assert.deepEqual(
      facts("Add the PDF export to src/pdf.ts next.").map((f) => [f.kind, f.text]),
      [
        ["unanswered", "Should the CSV use semicolons?"],
        ["unanswered", "Backfill last quarter too?"],
      ],
    );
  });

  it("requires a question the user passed over, with the one the span ends on", () => {
    const conversation = parseTranscript(
      "[User]: Add paging.\n\n[Assistant]: Paging is in. Should the page size be configurable?\n\n[User]: Now add sorting to src/list.ts, newest first.\n\n[Assistant]: Sorting is in. Ascending by default?",
    );
    const questions = requiredFacts({ conversation, modifiedFiles: [] }).filter((f) => ["question", "unanswered"].includes(f.kind));
    assert.deepEqual(
      questions.map((f) => [f.kind, f.text]),
      [
        ["question", "Ascending by default?"],
        ["unanswered", "Should the page size be configurable?"],
      ],
    );
  });
});
