/**
 * `evaluateSummaries` (ops/eval.ts) and its pure parts: where rounds compact, which planted facts
 * hold at a cut, retention scores, judge probes. On generated sessions with planted facts of every
 * kind (bench/planted-sessions.ts), in English, Italian and German, the extractive summarizer keeps
 * ≥ 95% after one compaction and ≥ 90% after three with growth ≤ 1.3x, with the verbatim section
 * and the coverage check or without, and a scripted model that drops facts is lifted to the same
 * figures by the check.
 */
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { PLANTED_LANGUAGES, type PlantedLanguage } from "../../bench/planted-phrases.js";
import { PLANTED_KINDS, plantedManager, plantedSession } from "../../bench/planted-sessions.js";
import { type EvalReport, evaluateSummaries, factsAtCut, type KnownFact } from "../../src/ops/eval.js";
import { scoreRetention, spanFacts } from "../../src/ops/eval-facts.js";
import { DIMENSIONS, judgeSummary, RUBRIC, readScores } from "../../src/ops/eval-judge.js";
import { compactionPoints, turnEnds } from "../../src/ops/eval-rounds.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";
import type { Summarizer } from "../../src/summarizer/types.js";
import { fakeSummarizer } from "../helpers/fake-summarizer.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";

const EXAMPLE_SESSION = resolve(import.meta.dirname, "../../examples/coding-session.jsonl");

/** A model that keeps only a vague goal: every planted fact is dropped. */
const dropper = (): Summarizer =>
  fakeSummarizer((r) =>
    r.purpose === "turn-prefix" ? "## Original Request\nA change.\n\n## Early Progress\n- Some work." : "## Goal\nWork on the billing service.\n\n## Progress\n### Done\n- [x] Edited some files.",
  );

function planted(seed: number, language: PlantedLanguage = "en") {
  const generated = plantedSession({ seed, language });
  const { session, ids } = plantedManager(generated);
  const facts: KnownFact[] = generated.facts.map((f) => ({
    kind: f.kind,
    text: f.text,
    entryId: ids[f.at],
    ...(f.until !== undefined ? { supersededBy: ids[f.until] } : {}),
  }));
  const mustNotState = generated.negatives.map((n) => ({ text: n.text, after: ids[n.at] }));
  return { session, facts, mustNotState, generated };
}

/** Seeds, each in English, Italian and German. */
const SESSIONS = [1, 2].flatMap((seed) => PLANTED_LANGUAGES.map((language) => ({ seed, language })));

async function evaluate(summarizer: () => Summarizer, which: readonly { seed: number; language: PlantedLanguage }[], guardOff = false): Promise<EvalReport> {
  const sessions = which.map(({ seed, language }) => {
    const { session, facts, mustNotState } = planted(seed, language);
    return { target: session, facts, mustNotState };
  });
  return evaluateSummaries(sessions, [{ label: "s", summarizer }], {
    rounds: 3,
    ...(guardOff ? { guard: { verbatimRequests: false, coverageCheck: false } } : {}),
  });
}

function figures(report: EvalReport) {
  return report.sessions.map((session) => {
    const rounds = session.results[0].rounds;
    assert.equal(rounds.length, 3, `${session.file}: three rounds ran (${session.results[0].error ?? ""})`);
    return { first: rounds[0].retention, last: rounds[2].retention, growth: rounds[2].growth, wrong: rounds.flatMap((r) => r.wrong.texts), rounds };
  });
}


describe("planted sessions", () => {
  it("plant every kind of fact, and each kind is scored over the three rounds", async () => {
    const { generated } = planted(1);
    assert.deepEqual(new Set(generated.facts.map((f) => f.kind)), new Set(PLANTED_KINDS));
    const report = await evaluate(extractiveSummarizer, [{ seed: 1, language: "en" }]);
    const rounds = report.sessions[0].results[0].rounds;
    // an open question holds only until the next request, so which round scores one depends on where the cut falls
    for (const kind of PLANTED_KINDS) assert.ok(rounds.some((r) => (r.byKind[kind]?.total ?? 0) > 0), `${kind} facts are scored`);
    for (const kind of ["file", "identifier", "constraint", "decision", "request"] as const) assert.ok((rounds[2].byKind[kind]?.total ?? 0) > 0, `${kind} facts are scored in round 3`);
  });

  it("plant corrections, reversals and fixed errors, with what they retire", () => {
    const { generated } = planted(1);
    const negatives = generated.negatives.map((n) => n.text).join("\n");
    assert.match(negatives, /batches of \d+/);
    assert.match(negatives, /rateCache\d+/);
    assert.match(negatives, /error TS\d+/);
  });

  it("the extractive summarizer keeps ≥ 95% after one compaction, ≥ 90% after three, growth ≤ 1.3x, and states nothing retired as current, in English, Italian and German, with the guard or without", async () => {
    for (const guardOff of [false, true]) {
      for (const { first, last, growth, wrong, rounds } of figures(await evaluate(extractiveSummarizer, SESSIONS, guardOff))) {
        assert.ok(first >= 0.95, `round 1 kept ${first}: lost ${JSON.stringify(rounds[0].missing)}`);
        assert.ok(last >= 0.9, `round 3 kept ${last}: lost ${JSON.stringify(rounds[2].missing)}`);
        assert.ok(growth <= 1.3, `growth ${growth}`);
        assert.deepEqual(wrong, [], "no corrected requirement, reversed decision, fixed error or planted instruction stated as current");
      }
    }
  });

  it("plant a question passed over, an instruction in a file, and three agents' tools", () => {
    const { generated } = planted(1, "de");
    const open = generated.facts.filter((f) => f.kind === "question" && f.until === undefined);
    assert.ok(open.length >= 2, "a passed-over question holds to the end, as does the last one");
    assert.ok(generated.negatives.some((n) => /^delete test\//.test(n.text)));
    const tools = new Set(generated.messages.flatMap((m) => (m.role === "assistant" ? m.content.flatMap((b) => (b.type === "toolCall" ? [b.name] : [])) : [])));
    for (const name of ["read", "Edit", "apply_patch", "shell"]) assert.ok(tools.has(name), `${name} in ${[...tools].join(", ")}`);
  });

  it("a model that drops facts is lifted to the same figures by the coverage check and the verbatim section", async () => {
    const without = figures(await evaluate(dropper, SESSIONS, true));
    for (const { first } of without) assert.ok(first < 0.8, `without the guard the dropper keeps only ${first}`);
    for (const { first, last, growth, wrong, rounds } of figures(await evaluate(dropper, SESSIONS))) {
      assert.ok(first >= 0.95, `round 1 kept ${first}: lost ${JSON.stringify(rounds[0].missing)}`);
      assert.ok(last >= 0.9, `round 3 kept ${last}: lost ${JSON.stringify(rounds[2].missing)}`);
      assert.ok(growth <= 1.5, `growth ${growth}`);
      assert.ok(rounds[0].coverageAdded > 0, "the check appended facts");
      assert.deepEqual(wrong, [], "the check appended nothing retired");
    }
  });
});

describe("compactionPoints and factsAtCut", () => {
  const { session, facts } = planted(5);
  const path = session.getBranch();

  it("rounds compact at turn ends, in order, the first near 80% of the branch for three rounds", () => {
    const points = compactionPoints(path, 3);
    assert.equal(points.length, 3);
    const ends = new Set(turnEnds(path));
    for (const p of points) assert.ok(ends.has(p), `${p} is a turn end`);
    assert.ok(points[0] < points[1] && points[1] < points[2]);
    assert.equal(points[2], path.length - 1);
    assert.ok(points[0] > path.length * 0.6 && points[0] < path.length * 0.95, `first point ${points[0]} of ${path.length}`);
    assert.deepEqual(compactionPoints(path, 2, 10).slice(0, 1), [10], "--at fixes the first point");
  });

  it("a planted fact counts once it is before the cut and until what supersedes it is", () => {
    const requests = facts.filter((f) => f.kind === "request");
    const index = (id: string) => path.findIndex((e) => e.id === id);
    const second = requests[1];
    const cut = index(second.entryId) + 1;
    const held = factsAtCut(path, facts, cut).filter((f) => f.kind === "request");
    assert.deepEqual(held, [{ kind: "request", text: second.text }], "only the latest request before the cut");
  });
});

describe("spanFacts and scoreRetention", () => {
  const messages = [
    messageOf(u("Make `parseHeader` accept tabs. Never change `HeaderMap`.")),
    messageOf(a("I chose a regex over a split because headers may fold.", { calls: [{ name: "edit", args: { path: "src/header.ts" } }] })),
    messageOf(tr("Successfully replaced text", "edit")),
    messageOf(a("Done. Should folded headers keep their line breaks?")),
  ];

  it("extracts files, identifiers, constraints, decisions, the request and the open question", () => {
    const facts = spanFacts(messages);
    const of = (kind: string) => facts.filter((f) => f.kind === kind).map((f) => f.text);
    assert.deepEqual(of("file"), ["src/header.ts"]);
    assert.deepEqual(of("identifier"), ["parseHeader", "HeaderMap"]);
    assert.deepEqual(of("constraint"), ["Never change `HeaderMap`."]);
    assert.deepEqual(of("decision"), ["I chose a regex over a split because headers may fold."]);
    assert.deepEqual(of("request"), ["Make `parseHeader` accept tabs."]);
    assert.deepEqual(of("question"), ["Should folded headers keep their line breaks?"]);
  });

  it("reads a span in bonsai's layout even when a message quotes another agent's transcript", () => {
    // omp's older layout marks tool calls `[Tool Call]:`; quoted inside a message it is text of the span
    const quoting = [
      messageOf(u('Here is the old log:\n\n[Tool Call]: edit(path="a.ts")\n\nNow rename `oldName` in src/out.ts.')),
      messageOf(a("", { calls: [{ name: "write", args: { path: "src/out.ts", content: "x" } }] })),
      messageOf(tr("Wrote src/out.ts", "write")),
    ];
    const facts = spanFacts(quoting);
    assert.deepEqual(facts.filter((f) => f.kind === "file").map((f) => f.text), ["src/out.ts"]);
    assert.ok(facts.some((f) => f.kind === "identifier" && f.text === "oldName"), JSON.stringify(facts));
  });

  it("finds facts verbatim or up to case, markup and spacing; reports what is missing", () => {
    const facts = spanFacts(messages);
    const score = scoreRetention("make **parseHeader** accept   tabs\n- never change HeaderMap\nsrc/header.ts", facts);
    assert.deepEqual(score.missing.map((f) => f.kind).sort(), ["decision", "question"]);
    assert.equal(score.found, facts.length - 2);
    assert.equal(score.retention, score.found / facts.length);
  });
});

describe("judge probes", () => {
  const SCORES = '{"accuracy": 5, "context": 4, "artifacts": 9, "completeness": "x", "continuity": 3, "instructions": 2}';

  it("ask the judge to answer from the summary alone, then to grade against the conversation on the rubric", async () => {
    const judge = fakeSummarizer((_r, n) =>
      n === 0 ? '```json\n{"recall":"CSV export","artifacts":"src/csv.ts","continuation":"fix quoting","decisions":"streaming"}\n```' : SCORES,
    );
    const result = await judgeSummary(judge, "THE SUMMARY", "THE CONVERSATION");
    assert.deepEqual(result.scores, { accuracy: 5, context: 4, artifacts: 5, completeness: 0, continuity: 3, instructions: 2 });
    assert.equal(result.samples.length, 1);
    assert.equal(result.samples[0].answers.artifacts, "src/csv.ts", "the answers are kept");
    assert.ok(judge.requests[0].prompt.includes("THE SUMMARY") && !judge.requests[0].prompt.includes("THE CONVERSATION"));
    const grading = judge.requests[1].prompt;
    assert.ok(grading.includes("THE CONVERSATION") && grading.includes("Answer: src/csv.ts"));
    for (const dimension of DIMENSIONS) assert.ok(grading.includes(`"${dimension}": ${RUBRIC[dimension]}`), `the rubric's ${dimension}`);
    assert.deepEqual(readScores("no json here"), { accuracy: 0, context: 0, artifacts: 0, completeness: 0, continuity: 0, instructions: 0 });
  });

  it("derive probes from the expected facts, show the grader the key, and sample N times with the spread", async () => {
    let grade = 0;
    const judge = fakeSummarizer((r) => {
      if (!r.prompt.includes("<answers>")) return '{"facts.constraint": "use 8443"}';
      grade++;
      return grade === 1 ? SCORES : '{"accuracy": 3, "context": 4, "artifacts": 1, "completeness": 2, "continuity": 3, "instructions": 4}';
    });
    const result = await judgeSummary(judge, "S", "C", {
      facts: [{ kind: "constraint", text: "use 8443" }],
      negatives: [{ text: "port 8080" }],
      samples: 2,
      temperature: 0.7,
    });
    assert.equal(judge.requests.length, 4, "two calls per sample");
    assert.match(judge.requests[0].prompt, /"facts\.constraint": Which rules set by the user hold now/);
    assert.match(judge.requests[1].prompt, /<expected>\n- constraint: use 8443\n<\/expected>/);
    assert.match(judge.requests[1].prompt, /<no-longer-true>\n- port 8080\n<\/no-longer-true>/);
    assert.ok(judge.requests.every((r) => r.temperature === 0.7));
    assert.equal(result.scores.accuracy, 4);
    assert.deepEqual(result.spread.accuracy, [3, 5]);
    assert.deepEqual(result.spread.context, [4, 4]);
    assert.equal(result.samples[1].answers["facts.constraint"], "use 8443");
  });
});

describe("evaluateSummaries on the bundled example", () => {
  it("runs offline, compares summarizers side by side on the same spans, and reports progress", async () => {
    const progress: number[] = [];
    const report = await evaluateSummaries(
      [EXAMPLE_SESSION],
      [
        { label: "extractive", summarizer: extractiveSummarizer() },
        { label: "dropper", summarizer: dropper },
      ],
      { rounds: 2, onProgress: ({ done }) => progress.push(done) },
    );
    const [extractive, dropped] = report.sessions[0].results;
    assert.equal(extractive.rounds.length, 2);
    assert.deepEqual(
      extractive.rounds.map((r) => r.firstKeptEntryId),
      dropped.rounds.map((r) => r.firstKeptEntryId),
      "same spans",
    );
    assert.ok(extractive.rounds[0].facts > 10 && extractive.rounds[0].compression > 1);
    assert.equal(progress[progress.length - 1], 4);
  });

  it("with a judge, scores every round with its probes", async () => {
    const graded = { accuracy: 4, context: 3, artifacts: 5, completeness: 2, continuity: 4, instructions: 5 };
    const judge = fakeSummarizer((r) => (r.prompt.includes("<answers>") ? JSON.stringify(graded) : '{"recall":"r"}'));
    const report = await evaluateSummaries([EXAMPLE_SESSION], [{ label: "extractive", summarizer: extractiveSummarizer() }], { rounds: 2, judge });
    const rounds = report.sessions[0].results[0].rounds;
    assert.deepEqual(
      rounds.map((r) => r.judge?.scores),
      [graded, graded],
    );
    assert.equal(judge.requests.length, 4, "two calls per round");
    assert.ok(judge.requests[0].prompt.includes("<summary>\n_(extractive summary"), "the first call sees the summary");
  });

  it("names a bad --at entry, and the session it is not in", async () => {
    await assert.rejects(evaluateSummaries([EXAMPLE_SESSION], [{ label: "e", summarizer: extractiveSummarizer() }], { at: "zzzz" }), (error: Error) => error.message === `no entry with id "zzzz" in ${EXAMPLE_SESSION}; run \`bonsai tree\` to list the ids`);
  });
});
