/**
 * The verbatim user-requests section (summarizer/user-requests.ts): which messages are the user's
 * requests, newest first within a budget, clipped with a marker, read back and merged without
 * duplicates.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateTextTokens } from "../../src/compaction/chunking.js";
import type { TranscriptPart } from "../../src/summarizer/extractive-parse.js";
import {
  mergeUserRequests,
  parseUserRequests,
  renderUserRequests,
  USER_REQUESTS_HEADING,
  userRequests,
} from "../../src/summarizer/user-requests.js";

const user = (text: string): TranscriptPart => ({ role: "user", text });

describe("userRequests", () => {
  it("keeps the user's requests verbatim and leaves out injected prompts, summaries, commands and fillers", () => {
    const parts: TranscriptPart[] = [
      user("You are Forge, a coding agent.\nTier: heavy\nTools: read, bash\nBe brief."),
      user("Add retries to the webhook sender.\n\nNever retry a 4xx response."),
      { role: "assistant", text: "On it." },
      user("Earlier parts were condensed.\n\n<summary>\n## Goal\nold\n</summary>"),
      user("Ran `npm test`\n```\nok\n```"),
      user("ok"),
      user("Also log each attempt with its delay."),
    ];
    assert.deepEqual(userRequests(parts), ["Add retries to the webhook sender.\n\nNever retry a 4xx response.", "Also log each attempt with its delay."]);
  });
});

describe("renderUserRequests and parseUserRequests", () => {
  it("quotes requests newest first, blank lines inside a request kept in the quote, and reads them back", () => {
    const requests = ["Newest: ship it.", "Older request\n\nwith a second paragraph."];
    const section = renderUserRequests(requests, 2000, estimateTextTokens);
    assert.equal(section.text, `${USER_REQUESTS_HEADING}\n\n> Newest: ship it.\n\n> Older request\n>\n> with a second paragraph.`);
    assert.equal(section.quoted, 2);
    assert.deepEqual(parseUserRequests(section.text), requests);
  });

  it("stays within the budget: the newest whole, an older one clipped with a marker, the rest counted", () => {
    const requests = Array.from({ length: 8 }, (_, i) => `Request ${i}: ${"make the parser faster and keep the API ".repeat(12)}`);
    const budget = 460;
    const section = renderUserRequests(requests, budget, estimateTextTokens);
    assert.ok(estimateTextTokens(section.text) <= budget + 20, `${estimateTextTokens(section.text)} tokens`);
    assert.ok(section.text.includes(`> ${requests[0]}`), "the newest request is quoted whole");
    assert.match(section.text, /\[… clipped\]/);
    assert.match(section.text, /_\(\d+ older requests left out to stay within 460 tokens\)_/);
    assert.ok(section.clipped > 0 && section.quoted < requests.length);
  });

  it("an empty list gives no section", () => {
    assert.equal(renderUserRequests([], 2000, estimateTextTokens).text, "");
  });
});

describe("mergeUserRequests", () => {
  it("puts the span's requests (newest first) ahead of the previous section's, each once", () => {
    const merged = mergeUserRequests(["Second request.", "Third request."], ["First request.", "second   REQUEST."]);
    assert.deepEqual(merged, ["Third request.", "Second request.", "First request."]);
  });
});
