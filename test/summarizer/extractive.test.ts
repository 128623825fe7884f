import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { computeFileLists, createFileOps, extractFileOpsFromMessage } from "../../src/compaction/file-ops.js";
import { convertToLlm } from "../../src/messages/convert.js";
import { serializeConversation } from "../../src/messages/serialize.js";
import type { LlmMessage } from "../../src/format/message-types.js";
import { SessionManager } from "../../src/session/manager.js";
import { EXTRACTIVE_LABEL, extractiveSummarizer, extractiveSummary } from "../../src/summarizer/extractive.js";
import { parsePrompt, parseToolCalls, parseTranscript } from "../../src/summarizer/extractive-parse.js";
import { MAX_ITEM_CHARS } from "../../src/summarizer/extractive-sections.js";
import { SummarizationAbortedError } from "../../src/summarizer/types.js";
import { BRANCH_SUMMARY_PROMPT } from "../../src/prompts/branch.js";
import { INITIAL_SUMMARY_PROMPT, TURN_PREFIX_PROMPT } from "../../src/prompts/compaction.js";
import { REAL_SESSION } from "../helpers/fixtures.js";
import { sectionLines } from "../helpers/summary-text.js";

const HISTORY_HEADINGS = [
  "## Goal",
  "## Constraints & Preferences",
  "## Progress",
  "### Done",
  "### In Progress",
  "### Blocked",
  "## Key Decisions",
  "## Next Steps",
  "## Critical Context",
];

const wrap = (conversation: string, after = "") => `<conversation>\n${conversation}\n</conversation>\n\n${after}Summarize the conversation.`;

function realConversation(): { llm: LlmMessage[]; text: string } {
  const session = SessionManager.open(REAL_SESSION, { readOnly: true });
  const llm = convertToLlm(session.buildSessionContext().messages);
  return { llm, text: serializeConversation(llm) };
}

const headings = (summary: string) => summary.split("\n").filter((line) => /^#{2,3} /.test(line));
const section = (summary: string, heading: string) => sectionLines(summary, heading, false);

describe("extractive summary of the real session fixture", () => {
  const { llm, text } = realConversation();
  const summary = extractiveSummary(wrap(text), "history");

  it("labels itself and has every section of the LLM prompt, in order", () => {
    assert.equal(summary.split("\n")[0], EXTRACTIVE_LABEL);
    assert.deepEqual(headings(summary), HISTORY_HEADINGS);
    for (const heading of ["## Goal", "### Done", "## Critical Context"]) {
      assert.notDeepEqual(section(summary, heading), ["(none)"], `${heading} has content`);
    }
  });

  it("names every file the conversation modified with write or edit under Done, once", () => {
    const ops = createFileOps();
    for (const message of llm) extractFileOpsFromMessage(message, ops);
    const { modifiedFiles } = computeFileLists(ops);
    assert.ok(modifiedFiles.length > 10, "the fixture edits many files");
    const done = section(summary, "### Done").join("\n");
    for (const path of modifiedFiles) assert.match(done, new RegExp(`(?:Wrote|Edited|Wrote and edited) \`${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\``), `missing ${path}`);
    // the compaction's <modified-files> list is the other place they are said
    assert.ok(!section(summary, "## Critical Context").some((line) => line.startsWith("- Modified: ")));
  });

  it("copies the user's first request verbatim into the goal", () => {
    const userTexts = llm
      .filter((m) => m.role === "user")
      .map((m) => (typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("")));
    const firstRequest = userTexts.find((t) => t.startsWith("read "));
    assert.ok(firstRequest);
    assert.ok(section(summary, "## Goal")[0].includes(firstRequest.slice(0, 60)));
  });

  it("records commands that were run and failures that stayed unresolved", () => {
    const critical = section(summary, "## Critical Context");
    assert.ok(critical.some((line) => line.startsWith("- Command")));
    const blocked = section(summary, "### Blocked");
    assert.ok(blocked.some((line) => /error TS\d+/.test(line)), blocked.join("\n"));
  });

  it("is bounded and deterministic", async () => {
    for (const line of summary.split("\n")) assert.ok(line.length <= MAX_ITEM_CHARS + 12, `long line: ${line.slice(0, 80)}`);
    for (const heading of HISTORY_HEADINGS.filter((h) => h !== "## Critical Context")) {
      assert.ok(section(summary, heading).length <= 40, heading);
    }
    assert.ok(summary.length < text.length / 10, `summary ${summary.length} chars for ${text.length}`);
    assert.equal(extractiveSummary(wrap(text), "history"), summary);
    const result = await extractiveSummarizer().summarize({ systemPrompt: "s", prompt: wrap(text), maxTokens: 1000, purpose: "history" });
    assert.equal(result.text, summary);
    assert.equal(result.model, "extractive");
  });
});

describe("extractive headings", () => {
  it("are the headings the LLM prompts ask for", () => {
    const sample = wrap('[User]: Fix it now.\n\n[Assistant tool calls]: edit(path="a.ts", oldText="x", newText="y")');
    assert.deepEqual(headings(extractiveSummary(sample, "history")), headings(INITIAL_SUMMARY_PROMPT));
    assert.deepEqual(headings(extractiveSummary(sample, "branch")), headings(BRANCH_SUMMARY_PROMPT));
    assert.deepEqual(headings(extractiveSummary(sample, "turn-prefix")), headings(TURN_PREFIX_PROMPT));
  });
});

describe("extractive summary rules", () => {
  const conversation = [
    "[User]: Add a --json flag to the info command. Output must stay stable across versions.",
    "[Assistant]: I'll read the command first.",
    '[Assistant tool calls]: read(path="src/cli/info.ts"); bash(command="npm test")',
    "[Tool result]: export function info() {\n  // error handling here\n}",
    "[Tool result]: src/cli/info.ts(3,1): error TS2304: Cannot find name 'x'.\n\nCommand exited with code 2",
    "[Assistant]: I decided to print JSON with two-space indentation because diffs stay readable.",
    '[Assistant tool calls]: edit(path="src/cli/info.ts", oldText="a(\\"x\\"); b", newText="c"); write(path="test/info.test.ts", content="it(\\"works\\", () => {});\\n")',
    "[Tool result]: Successfully replaced text in src/cli/info.ts.",
    "[Tool result]: Successfully wrote 40 bytes to test/info.test.ts",
    '[Assistant tool calls]: bash(command="npm test")',
    "[Tool result]: 12 passing, 0 failed",
    "[Assistant]: Done. Next steps:\n- Document the flag in README.md\n- Release 0.2.0\n\nShould I also add --json to tree?",
  ].join("\n\n");

  it("fills sections from facts: done work, decisions, plan, open question, read files", () => {
    const summary = extractiveSummary(wrap(conversation), "history");
    assert.deepEqual(section(summary, "## Goal"), ["- Add a --json flag to the info command. Output must stay stable across versions."]);
    assert.deepEqual(section(summary, "## Constraints & Preferences"), ["- Output must stay stable across versions."]);
    assert.deepEqual(section(summary, "### Done"), [
      "- [x] Edited `src/cli/info.ts`",
      "- [x] Wrote `test/info.test.ts`",
      "- [x] Ran `npm test`",
    ]);
    // the compile error was fixed by the later successful run of the same command
    assert.deepEqual(section(summary, "### Blocked"), ["(none)"]);
    assert.deepEqual(section(summary, "### In Progress"), ["(none)"]);
    assert.deepEqual(section(summary, "## Key Decisions"), [
      "- I decided to print JSON with two-space indentation because diffs stay readable.",
    ]);
    assert.deepEqual(section(summary, "## Next Steps"), ["1. Document the flag in README.md", "2. Release 0.2.0"]);
    const critical = section(summary, "## Critical Context");
    assert.ok(critical.includes("- Question awaiting the user's answer: Should I also add --json to tree?"), critical.join("\n"));
    // files and the commands that changed or checked something are said once, under Done
    assert.ok(!critical.some((line) => /^- (?:Modified|Read|Command)/.test(line)), critical.join("\n"));
  });

  it("keeps an unresolved failure under Blocked and marks the turn in progress when it stops mid-work", () => {
    const stuck = [
      "[User]: Fix the failing build please",
      '[Assistant tool calls]: bash(command="npm run build")',
      "[Tool result]: npm error code ELIFECYCLE\nCommand exited with code 1",
      '[Assistant tool calls]: grep(pattern="x", path="src"); bash(command="grep -n foo src/a.ts")',
      "[Tool result]: src/error.ts: export class FatalError",
      "[Tool result]: Command exited with code 1",
    ].join("\n\n");
    const summary = extractiveSummary(wrap(stuck), "history");
    assert.deepEqual(section(summary, "### Blocked"), ["- `npm run build`: npm error code ELIFECYCLE"]);
    assert.deepEqual(section(summary, "### In Progress"), ["- [ ] Fix the failing build please"]);
    assert.deepEqual(section(summary, "## Next Steps"), ["1. Continue: Fix the failing build please"]);
    // the failure is said under Blocked; what the agent looked at is context
    assert.deepEqual(section(summary, "## Critical Context"), ["- Command: `grep -n foo src/a.ts`"]);
  });

  it("merges a previous summary: its items first, new ones added, duplicates once, plans refreshed", () => {
    const previous = [
      "## Goal",
      "Port the theme system to the TUI package.",
      "",
      "## Constraints & Preferences",
      "- Output must stay stable across versions.",
      "",
      "## Progress",
      "### Done",
      "- [x] Ported `src/theme.ts`",
      "### In Progress",
      "- [ ] Selector colors",
      "",
      "## Next Steps",
      "1. Old plan that is obsolete now",
      "",
      "## Additional Notes",
      "- The user works on macOS",
      "",
      "<read-files>",
      "docs/theme.md",
      "</read-files>",
      "",
      "<modified-files>",
      "src/theme.ts",
      "</modified-files>",
    ].join("\n");
    const prompt = `<conversation>\n${conversation}\n</conversation>\n\n<previous-summary>\n${previous}\n</previous-summary>\n\nUpdate the summary.`;
    const summary = extractiveSummary(prompt, "history");
    const goal = section(summary, "## Goal");
    assert.equal(goal[0], "- Port the theme system to the TUI package.");
    assert.equal(goal[1], "- Add a --json flag to the info command. Output must stay stable across versions.");
    assert.deepEqual(section(summary, "## Constraints & Preferences"), ["- Output must stay stable across versions."]);
    assert.deepEqual(section(summary, "### Done").slice(0, 2), ["- [x] Ported `src/theme.ts`", "- [x] Edited `src/cli/info.ts`"]);
    assert.deepEqual(section(summary, "## Next Steps"), ["1. Document the flag in README.md", "2. Release 0.2.0"]);
    assert.deepEqual(section(summary, "### In Progress"), ["- [ ] Selector colors"], "kept while nothing newer replaces it");
    const critical = section(summary, "## Critical Context");
    assert.ok(!critical.some((line) => /^- (?:Read|Modified):/.test(line)), "the file lists the compaction appends say them, not twice");
    assert.deepEqual(section(summary, "## Additional Notes"), ["- The user works on macOS"]);
    assert.equal(summary.match(/^## Goal$/gm)?.length, 1);
  });

  it("keeps the conversation's language: sentences are copied, not translated", () => {
    const italian = [
      "[User]: Aggiungi il supporto per le etichette nel comando tree. Non usare librerie esterne.",
      "[Assistant]: Ho deciso di usare una mappa invece di un array, perché le ricerche sono più veloci.",
      '[Assistant tool calls]: edit(path="src/cli/tree.ts", oldText="a", newText="b")',
      "[Tool result]: Successfully replaced text in src/cli/tree.ts.",
      "[Assistant]: Fatto. Prossimi passi:\n- Aggiornare la documentazione\n- Scrivere i test per le etichette",
    ].join("\n\n");
    const summary = extractiveSummary(wrap(italian), "history");
    assert.deepEqual(section(summary, "## Goal"), ["- Aggiungi il supporto per le etichette nel comando tree. Non usare librerie esterne."]);
    assert.deepEqual(section(summary, "## Constraints & Preferences"), ["- Non usare librerie esterne."]);
    assert.deepEqual(section(summary, "## Key Decisions"), [
      "- Ho deciso di usare una mappa invece di un array, perché le ricerche sono più veloci.",
    ]);
    assert.deepEqual(section(summary, "## Next Steps"), ["1. Aggiornare la documentazione", "2. Scrivere i test per le etichette"]);
  });

  it("writes turn-prefix notes, branch summaries, short summaries and merges with their own sections", () => {
    const prefix = extractiveSummary(wrap(conversation), "turn-prefix");
    assert.deepEqual(headings(prefix), ["## Original Request", "## Early Progress", "## Context for Suffix"]);
    assert.ok(prefix.includes("Add a --json flag to the info command."));

    const branch = extractiveSummary(wrap(conversation), "branch");
    assert.deepEqual(headings(branch), [
      "## Goal",
      "## Constraints",
      "## Progress",
      "### Done",
      "### In Progress",
      "### Blocked",
      "## Key Decisions",
      "## Next Steps",
    ]);
    assert.deepEqual(section(branch, "## Constraints"), ["- Output must stay stable across versions."]);

    const short = extractiveSummary(wrap(conversation), "short");
    assert.ok(!short.includes("\n"), "one paragraph");
    const sentences = short.split(/(?<=\.)\s+(?=[A-Z])/);
    assert.ok(sentences.length >= 2 && sentences.length <= 3, short);
    assert.ok(short.startsWith("Changed `src/cli/info.ts` and `test/info.test.ts`."), short);

    const partA = extractiveSummary(wrap(conversation), "history");
    const partB = "## Goal\n- Release 0.2.0\n\n## Progress\n### Done\n- [x] Published 0.2.0\n\n## Next Steps\n1. Announce it";
    const merged = extractiveSummary(
      `<partial-summary>\n${partA}\n</partial-summary>\n\n<partial-summary>\n${partB}\n</partial-summary>\n\nMerge them.\n\n## Goal\n[template text that is not content]`,
      "merge",
    );
    assert.deepEqual(headings(merged), HISTORY_HEADINGS);
    assert.ok(section(merged, "### Done").includes("- [x] Published 0.2.0"));
    assert.ok(section(merged, "### Done").includes("- [x] Edited `src/cli/info.ts`"));
    assert.deepEqual(section(merged, "## Next Steps"), ["1. Announce it"], "the latest part's plan wins");
    assert.ok(!merged.includes("template text"));

    const prefixA = "## Original Request\nDo X\n\n## Early Progress\n- read a.ts\n\n## Context for Suffix\n- a.ts exports f";
    const prefixB = "## Original Request\nDo X\n\n## Early Progress\n- edited a.ts\n\n## Context for Suffix\n- f is async";
    const mergedPrefix = extractiveSummary(`<partial-summary>\n${prefixA}\n</partial-summary>\n\n<partial-summary>\n${prefixB}\n</partial-summary>\n\nMerge.`, "merge");
    assert.deepEqual(headings(mergedPrefix), ["## Original Request", "## Early Progress", "## Context for Suffix"]);
    assert.deepEqual(section(mergedPrefix, "## Early Progress"), ["- read a.ts", "- edited a.ts"]);
  });

  it("puts the user's focus and the additional context under Critical Context", () => {
    const prompt = `<conversation>\n${conversation}\n</conversation>\n\n<additional-context>\n- Ticket BON-42 tracks this\n</additional-context>\n\nSummarize.\n\nAdditional focus: the JSON schema`;
    const critical = section(extractiveSummary(prompt, "history"), "## Critical Context");
    assert.equal(critical[0], "- Focus requested: the JSON schema");
    assert.equal(critical[1], "- Ticket BON-42 tracks this");
  });

  it("honours an aborted signal", async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(
      extractiveSummarizer().summarize({ systemPrompt: "", prompt: wrap(conversation), maxTokens: 1, purpose: "history", signal: controller.signal }),
      SummarizationAbortedError,
    );
  });
});

describe("prompt parsing", () => {
  it("reads tool calls whose JSON arguments contain separators", () => {
    const calls = parseToolCalls('edit(path="a.ts", oldText="f(x); g(y)", newText="h(\\"), \\")"); bash(command="ls -la", timeout=30); noargs()');
    assert.deepEqual(calls, [
      { name: "edit", args: { path: "a.ts", oldText: "f(x); g(y)", newText: 'h("), ")' } },
      { name: "bash", args: { command: "ls -la", timeout: 30 } },
      { name: "noargs", args: {} },
    ]);
    assert.deepEqual(parseToolCalls('write(path="x", content={"a":[1,{"b":")"}]})'), [
      { name: "write", args: { path: "x", content: { a: [1, { b: ")" }] } } },
    ]);
  });

  it("splits parts only at a blank line followed by a role marker", () => {
    const parts = parseTranscript("[User]: first\n\nstill first\n\n[Tool result]: out\n[User]: not a part\n\n[Assistant]: reply");
    assert.deepEqual(parts, [
      { role: "user", text: "first\n\nstill first" },
      { role: "toolResult", text: "out\n[User]: not a part" },
      { role: "assistant", text: "reply" },
    ]);
  });

  it("finds the conversation even when it quotes a closing tag", () => {
    const parsed = parsePrompt("<conversation>\n[User]: see </conversation> in a file\n</conversation>\n\n<previous-summary>\nold\n</previous-summary>\n\nGo.");
    assert.deepEqual(parsed.conversation, [{ role: "user", text: "see </conversation> in a file" }]);
    assert.equal(parsed.previousSummary, "old");
  });
});
