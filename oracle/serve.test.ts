/**
 * `bonsai serve --extractive` behind oh-my-pi (issue 24): omp 18 sends the transcript in the
 * summarizing model's own markup, one of ten forms chosen by the model's id. omp's own
 * generateSummary posts each form to a real `bonsai serve`; every summary must name the user's
 * request in its Goal, hold no markup, and be the summary bonsai makes of the same conversation
 * in pi's layout, section for section.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { convertToLlm } from "../src/messages/convert.js";
import { serializeConversation } from "../src/messages/serialize.js";
import { SessionManager } from "../src/session/manager.js";
import { extractiveSummary } from "../src/summarizer/extractive.js";
import { BONSAI_ARGS } from "../test/helpers/bonsai-bin.js";
import { type ChildServer, spawnServer } from "../test/helpers/spawn-server.js";
import { AGENTS, askOmpSummaries, missing } from "./agents.js";
import { oracleCases } from "./cases.js";

/** A model id for each of the ten forms (omp picks the form by id: pi-catalog's preferredDialect). */
const MODELS: Record<string, string> = {
  anthropic: "claude-sonnet-4-5",
  harmony: "gpt-5",
  qwen3: "qwen3-coder-480b",
  glm: "glm-4.6",
  kimi: "kimi-k2",
  deepseek: "deepseek-v3.1",
  gemini: "gemini-2.5-pro",
  gemma: "gemma-3-27b",
  minimax: "minimax-m2",
  xml: "llama-3.3-70b",
};
const TOKEN = "oracle-token-0123456789";
/** Markers of the ten forms that must not reach a summary. */
const MARKUP = /<\\?\|[a-z_]+\\?\|>|<｜|<\/?(?:invoke|parameter|function_calls|tool_call|tool_response|think|start_of_turn|end_of_turn)\b|\[gMASK\]|^(?:Human|Assistant): /m;

const dir = mkdtempSync(join(tmpdir(), "bonsai-oracle-serve-"));
let server: ChildServer | undefined;
before(async () => {
  server = await spawnServer([...BONSAI_ARGS, "serve", "--port", "0", "--extractive"], { BONSAI_SERVER_TOKEN: TOKEN });
});
after(() => {
  server?.child.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

/** The sections of an extractive summary, by heading. */
const sections = (summary: string) => Object.fromEntries(summary.split(/\n(?=## )/).map((s) => [s.split("\n")[0], s.slice(s.indexOf("\n") + 1).trim()]));

describe("bonsai serve --extractive behind oh-my-pi 18.2.3", () => {
  it(`reads every transcript form omp sends (${Object.keys(MODELS).join(", ")})`, () => {
    const omp = AGENTS.find((a) => a.dialects.includes("omp"))!;
    const problem = missing(omp);
    assert.equal(problem, undefined, problem);
    const c = oracleCases().find((x) => x.name === "omp-summary")!;
    const file = join(dir, "omp-summary.jsonl");
    writeFileSync(file, `${c.lines.join("\n")}\n`);

    // the same conversation in pi's layout, summarized by bonsai itself
    const session = SessionManager.open(file, { readOnly: true });
    const piLayout = serializeConversation(convertToLlm(session.buildSessionContext().messages));
    void session.close();
    const expected = sections(extractiveSummary(`<conversation>\n${piLayout}\n</conversation>\n\nSummarize.`, "history"));
    assert.match(expected["## Key Decisions"], /sliding window/);
    assert.match(expected["## Next Steps"], /document the limiter/);

    const endpoint = `${server!.url.replace(/\/$/, "")}/t/${TOKEN}/summarize`;
    const answers = askOmpSummaries(file, endpoint, Object.values(MODELS));
    assert.deepEqual(answers.map((a) => a.dialect), Object.keys(MODELS), "omp chose the form expected for each model");
    const problems: string[] = [];
    for (const answer of answers) {
      if (!answer.summary) {
        problems.push(`${answer.dialect}: ${answer.error}`);
        continue;
      }
      const got = sections(answer.summary);
      if (!got["## Goal"]?.includes("Add rate limiting to the login endpoint")) problems.push(`${answer.dialect}: the Goal does not name the request: ${got["## Goal"]}`);
      if (MARKUP.test(answer.summary)) problems.push(`${answer.dialect}: markup in the summary: ${MARKUP.exec(answer.summary)?.[0]}`);
      for (const [heading, body] of Object.entries(expected)) {
        if (got[heading] !== body) problems.push(`${answer.dialect}: ${heading} differs from pi's layout:\n${got[heading]}\n---\n${body}`);
      }
    }
    assert.equal(problems.length, 0, problems.join("\n\n"));
  });
});
