/**
 * Issue 25, item 5: a scoreboard that cannot be fooled. Facts written independently of the
 * summarizer (`--facts`), the summarizer's raw text scored apart from what the guard appends,
 * negative facts stated as current counted, and a judge reached through any OpenAI-compatible URL.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { evaluateSummaries } from "../../src/ops/eval.js";
import { parseFactsFile, rawSummary, wronglyStated } from "../../src/ops/eval-truth.js";
import { SessionManager } from "../../src/session/manager.js";
import type { Summarizer } from "../../src/summarizer/types.js";
import { runBonsai } from "../helpers/cli.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";
import { startScriptedServer } from "../helpers/sse-server.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-eval-truth-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A session with planted facts: a port corrected, a decision reversed, an identifier, long tool output between. */
function plantedSession(file: string): { ids: Record<string, string> } {
  const session = SessionManager.open(file);
  const ids: Record<string, string> = {};
  const say = (key: string, spec: ReturnType<typeof u>) => {
    ids[key] = session.appendMessage(messageOf(spec));
  };
  say("port", u("Build the status endpoint in `statusRoute`. Serve it on port 8080."));
  for (let i = 0; i < 6; i++) {
    say(`call${i}`, a("", { calls: [{ name: "bash", args: { command: `cat src/part${i}.ts` } }] }));
    say(`out${i}`, tr(`// part ${i}\n${"const x = 1;\n".repeat(400)}`));
  }
  say("fix", u("No, not 8080, use 8443: 8080 is taken on staging."));
  say("decision", a("Switching to SQLite instead of Redis: the hosts have no Redis."));
  for (let i = 6; i < 12; i++) {
    say(`call${i}`, a("", { calls: [{ name: "bash", args: { command: `cat src/part${i}.ts` } }] }));
    say(`out${i}`, tr(`// part ${i}\n${"const y = 2;\n".repeat(400)}`));
  }
  say("last", u("Now add the uptime field."));
  say("answer", a("Added `uptimeSeconds` to the status response."));
  session.close();
  return { ids };
}

const scripted = (text: string): Summarizer => ({ name: "scripted", contextWindow: 0, reasoning: false, summarize: async () => ({ text }) });

describe("the parts of the score", () => {
  it("the raw text leaves out the file lists and the guard's sections", () => {
    const summary = "## Goal\nShip it.\n\n## Also in the conversation (coverage check)\n\n- Constraint: port 8443\n\n## User requests (verbatim, newest first)\n\n> use 8443\n\n<modified-files>\nsrc/a.ts\n</modified-files>";
    assert.equal(rawSummary(summary), "## Goal\nShip it.");
  });

  it("a negative fact is wrong when a line states it, not when a line tells it as history or quotes the user", () => {
    const negatives = [{ text: "port 8080" }];
    assert.equal(wronglyStated("## Constraints\n- Serve on port 8080.", negatives).length, 1);
    assert.equal(wronglyStated("## Constraints\n- Port 8443 (port 8080 was replaced).", negatives).length, 0);
    assert.equal(wronglyStated("## Goal\nx\n\n## User requests (verbatim, newest first)\n\n> Serve it on port 8080.", negatives).length, 0);
    // told as history in the conversation's own language
    const cache = [{ text: "rateCache0" }];
    assert.equal(wronglyStated("- Passo a `rateStore0` invece di `rateCache0`.", cache).length, 0);
    assert.equal(wronglyStated("- Ich wechsle zu `rateStore0` statt `rateCache0`.", cache).length, 0);
    assert.equal(wronglyStated("- Le aliquote restano in `rateCache0`.", cache).length, 1);
    // English words that look like another language's history words do not excuse a stale line
    assert.equal(wronglyStated("- Keep `rateCache0` non-null, plus the era tag.", cache).length, 1);
  });

  it("a facts file that is wrong is one line naming the field", () => {
    assert.throws(() => parseFactsFile("{", "f.json"), /^Error: f\.json: not JSON/);
    assert.throws(() => parseFactsFile('{"facts": [{"kind": "vibe", "text": "x", "entryId": "e"}]}', "f.json"), /f\.json: facts\[0\]\.kind must be one of file, identifier/);
    assert.throws(() => parseFactsFile('{"mustNotState": [{"text": ""}]}', "f.json"), /f\.json: mustNotState\[0\]\.text must be a non-empty string/);
    assert.deepEqual(parseFactsFile('{"facts": [], "mustNotState": [{"text": "8080", "after": "e1"}]}', "f.json"), { facts: [], mustNotState: [{ text: "8080", after: "e1" }] });
  });
});

describe("scores on a planted session", () => {
  const file = join(dir, "planted.jsonl");
  const { ids } = plantedSession(file);
  const facts = [
    { kind: "constraint" as const, text: "8443", entryId: ids.fix },
    { kind: "decision" as const, text: "SQLite", entryId: ids.decision },
    { kind: "identifier" as const, text: "statusRoute", entryId: ids.port },
  ];
  const mustNotState = [{ text: "port 8080", after: ids.fix }, { text: "Redis", after: ids.decision }];
  const evaluate = (text: string, guard = {}) =>
    evaluateSummaries([{ target: file, facts, mustNotState }], [{ label: "scripted", summarizer: scripted(text) }], { rounds: 1, at: ids.last, keepRecentTokens: 100, guard });

  it("a fact-free summary scores near 0 raw, with the guard or without; a correct one near 100", async () => {
    const empty = (await evaluate("## Goal\n(none)")).sessions[0].results[0].rounds[0];
    assert.equal(empty.raw.retention, 0);
    const bare = (await evaluate("## Goal\n(none)", { verbatimRequests: false, coverageCheck: false })).sessions[0].results[0].rounds[0];
    assert.equal(bare.retention, 0);
    const correct = (await evaluate("## Goal\nThe status endpoint `statusRoute` on port 8443, counts in SQLite.")).sessions[0].results[0].rounds[0];
    assert.equal(correct.raw.retention, 1);
    assert.equal(correct.retention, 1);
    assert.deepEqual(correct.wrong, { count: 0, raw: 0, texts: [] });
  });

  it("a summary that states the corrected port or the reversed decision as current is counted wrong", async () => {
    const stale = (await evaluate("## Goal\nThe status endpoint `statusRoute` on port 8080, counts in Redis.")).sessions[0].results[0].rounds[0];
    assert.deepEqual(stale.wrong, { count: 2, raw: 2, texts: ["port 8080", "Redis"] });
  });

  it("bonsai eval --facts FILE, with a judge on an OpenAI-compatible server given by URL", async () => {
    const server = await startScriptedServer((request, index) => {
      const prompt = JSON.stringify(request.messages);
      if (prompt.includes("Answer each question using only the summary")) return { text: '{"recall": "8443", "artifacts": "none", "continuation": "uptime", "decisions": "SQLite"}' };
      if (prompt.includes("Grade how well")) {
        const accuracy = index < 2 ? 5 : 3;
        return { text: `{"accuracy": ${accuracy}, "context": 4, "artifacts": 4, "completeness": 5, "continuity": 3, "instructions": 5}` };
      }
      return { text: `unexpected request ${index}` };
    });
    try {
      const factsFile = join(dir, "facts.json");
      writeFileSync(factsFile, JSON.stringify({ facts, mustNotState }));
      const run = await runBonsai([
        ...["eval", file, "--facts", factsFile, "--rounds", "1", "--at", ids.last, "--keep-recent", "100"],
        ...["--judge", `base-url:${server.baseUrl}#judge`, "--judge-samples", "2", "--judge-temperature", "0.4", "--json"],
      ]);
      assert.equal(run.code, 0, run.stderr);
      const report = JSON.parse(run.stdout);
      const round = report.sessions[0].results[0].rounds[0];
      assert.equal(round.facts, 3, "the file's facts, not extracted ones");
      assert.deepEqual(round.judge.scores, { accuracy: 4, context: 4, artifacts: 4, completeness: 5, continuity: 3, instructions: 5 });
      assert.deepEqual(round.judge.spread.accuracy, [3, 5]);
      assert.equal(round.judge.samples[0].answers.recall, "8443", "the judge's answers are kept");
      assert.equal(server.requests.length, 4, "the judge asked the server twice per sample");
      assert.ok(server.requests.every((r) => r.temperature === 0.4), "at the temperature asked for");
      assert.ok(JSON.stringify(server.requests[1].messages).includes("<expected>"), "the grader sees the facts");
      // what the run is pinned to
      assert.match(report.pins.promptHash, /^[0-9a-f]{64}$/);
      assert.match(report.pins.datasetHash, /^[0-9a-f]{64}$/);
      assert.match(report.pins.bonsai.version, /^\d+\.\d+\.\d+/);
      assert.deepEqual(report.pins.judge, { model: "openai-compatible/judge", samples: 2, temperature: 0.4 });
      assert.deepEqual(report.pins.summarizers, [{ label: "extractive", model: "extractive" }]);
      assert.equal(round.wrong.count, 0, "the extractive summary states neither the old port nor Redis as current");
    } finally {
      await server.close();
    }
  });
});
