/**
 * Issue 24: oh-my-pi 18 sends the transcript in the summarizing model's own markup, one of ten
 * forms (test/fixtures/omp-transcripts/, made by omp itself). Each must read into the parts pi's
 * layout of the same conversation reads into, so `bonsai serve --extractive` and the coverage
 * check summarize it the same: a Goal that is the user's request, no markup, the same sections.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { convertToLlm } from "../../src/messages/convert.js";
import { serializeConversation } from "../../src/messages/serialize.js";
import { loadTextIndex } from "../../src/storage/load.js";
import { TreeIndex } from "../../src/session/tree.js";
import { parseTranscript } from "../../src/summarizer/extractive-parse.js";
import { FORMS as TRANSCRIPT_FORMS } from "../../src/summarizer/transcript-forms.js";
import { extractiveSummary } from "../../src/summarizer/extractive.js";
import { oracleCases } from "../../oracle/cases.js";

const DIR = join(import.meta.dirname, "../fixtures/omp-transcripts");
const FORMS = readdirSync(DIR).filter((f) => f.endsWith(".txt"));

/** The omp-summary case in pi's layout, as bonsai serializes it. */
function piLayout(): string {
  const c = oracleCases().find((x) => x.name === "omp-summary")!;
  const { index } = loadTextIndex(`${c.lines.join("\n")}\n`, "omp-summary", new TreeIndex());
  return serializeConversation(convertToLlm(index.context(undefined).messages));
}

const summary = (conversation: string) => extractiveSummary(`<conversation>\n${conversation}\n</conversation>\n\nSummarize.`, "history");

describe("oh-my-pi's ten transcript forms", () => {
  const expected = piLayout();
  it("all ten are here", () => {
    assert.deepEqual(FORMS.map((f) => f.replace(".txt", "")).sort(), ["anthropic", "deepseek", "gemini", "gemma", "glm", "harmony", "kimi", "minimax", "qwen3", "xml"]);
  });
  for (const form of FORMS) {
    it(`${form.replace(".txt", "")}: the same parts and the same summary as pi's layout`, () => {
      const text = readFileSync(join(DIR, form), "utf8");
      const parts = parseTranscript(text);
      assert.deepEqual(parts.map((p) => p.role), parseTranscript(expected).map((p) => p.role));
      assert.equal(parts[0].text, "Add rate limiting to the login endpoint: at most 5 attempts per minute per IP.");
      assert.equal(summary(text), summary(expected));
    });
  }
  it("pi's own layout and omp's older one are still read as before", () => {
    assert.deepEqual(parseTranscript("[User]: hi\n\n[Assistant tool calls]: read(path=\"a.ts\")\n\n[Tool result]: x").map((p) => p.role), ["user", "toolCalls", "toolResult"]);
    assert.deepEqual(parseTranscript("[User]: hi\n\n[Think]: hm\n\n[Tool Call]: read(path=\"a.ts\")\n\n[Tool Result]: x").map((p) => p.role), ["user", "thinking", "toolCalls", "toolResult"]);
  });

  it("omp's older layout is recognized exactly where one of its markers starts a part", () => {
    const pattern = /(?:^|\n\n)\[(?:Think|Tool Call|Tool Result)\]: /;
    const pieces = ["[Think]: ", "[Tool Call]: ", "[Tool Result]: ", "\n", "\n\n", "x", " ", "[Think]:", "[Tool Result]", "[User]: "];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    let recognized = 0;
    for (let n = 0; n < 3000; n++) {
      let text = "";
      for (let k = next() % 6; k >= 0; k--) text += pieces[next() % pieces.length];
      const expected = pattern.test(text);
      if (expected) recognized++;
      assert.equal(TRANSCRIPT_FORMS.ompLegacy.signature.test(text), expected, JSON.stringify(text));
    }
    assert.ok(recognized > 300 && recognized < 2700, `${recognized} of 3000 recognized: the cases should go both ways`);
  });
});
