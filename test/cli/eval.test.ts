/**
 * `bonsai eval` end to end, as a user runs it: offline on the bundled example, the table on
 * stdout with nothing animated when stderr is not a terminal, `--json`, bad summarizer names, and
 * the session file left byte for byte as it was.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { lostFactLines, progressBar } from "../../src/cli/eval-table.js";
import { ROOT, runBonsai } from "../helpers/cli.js";

const EXAMPLE = join(ROOT, "examples/coding-session.jsonl");

describe("bonsai eval", () => {
  it("runs offline on the example and prints the table; writes nothing", async () => {
    const before = readFileSync(EXAMPLE);
    const run = await runBonsai(["eval", "examples/coding-session.jsonl"]);
    assert.equal(run.code, 0, run.stderr);
    const [header, row] = run.stdout.split("\n");
    assert.match(header, /^session\s+summarizer\s+kept r1\s+kept r3\s+raw r3\s+facts\s+wrong\s+tokens\s+growth\s+compression\s+coverage\+\s+time\s+cost\s+judge$/);
    assert.match(row, /coding-session\.jsonl\s+extractive\s+\d+\.\d%\s+\d+\.\d%\s+\d+\.\d%\s+\d+\/\d+\s+0 \(0\)\s+\d+→\d+\s+\d\.\d\dx/);
    assert.equal(run.stderr, "", "no progress bar and no notice when stderr is not a terminal");
    assert.deepEqual(readFileSync(EXAMPLE), before);
  });

  it("--json prints the report, one result per --summarizer, rounds as asked", async () => {
    const run = await runBonsai(["eval", "examples/coding-session.jsonl", "--summarizer", "extractive", "--rounds", "2", "--no-coverage", "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.rounds, 2);
    const [result] = report.sessions[0].results;
    assert.equal(result.summarizer, "extractive");
    assert.equal(result.rounds.length, 2);
    assert.equal(result.rounds[0].coverageAdded, 0, "--no-coverage");
    assert.ok(result.rounds[1].growth > 0 && result.rounds[0].facts > 0);
  });

  it("rejects an unknown summarizer with one line that lists the accepted forms", async () => {
    const run = await runBonsai(["eval", "examples/coding-session.jsonl", "--summarizer", "gpt-5"]);
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim().split("\n").length, 1);
    assert.match(run.stderr, /unknown summarizer "gpt-5": use extractive, model:provider\/id, base-url:URL\[#model-id\] or remote:URL/);
  });

  it("--at takes an entry id as every other id option does: an empty, short or ambiguous prefix is refused", async () => {
    for (const [at, message] of [
      ["1", /^bonsai: entry id "1" is too short: give at least 4 characters/],
      ["", /^bonsai: no entry with id "" in /],
    ] as const) {
      const run = await runBonsai(["eval", "examples/coding-session.jsonl", "--at", at]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, message);
    }
  });
});

describe("progressBar", () => {
  const stream = (isTTY: boolean) => {
    const written: string[] = [];
    return { written, stream: { isTTY, columns: 60, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream };
  };

  it("draws one line in place on a terminal, and clears it when done", () => {
    const { written, stream: tty } = stream(true);
    const bar = progressBar(tty);
    bar.update(1, 4, "extractive on a.jsonl");
    bar.update(4, 4, "extractive on a.jsonl");
    bar.done();
    assert.equal(written.length, 3);
    assert.ok(written[0].startsWith("\r\x1b[2K[######------------------] 1/4 extractive on a.jsonl"));
    assert.ok(written[1].includes("[########################] 4/4"));
    assert.equal(written[2], "\r\x1b[2K");
  });

  it("writes nothing when the stream is not a terminal", () => {
    const { written, stream: pipe } = stream(false);
    const bar = progressBar(pipe);
    bar.update(1, 2, "x");
    bar.done();
    assert.deepEqual(written, []);
  });
});

describe("lostFactLines", () => {
  it("shows three lost facts and says how many more there are", () => {
    const lost = ["a", "b", "c", "d", "e"].map((text) => ({ kind: "identifier", text }));
    assert.deepEqual(lostFactLines("extractive", lost), [
      "extractive lost identifier: a",
      "extractive lost identifier: b",
      "extractive lost identifier: c",
      "extractive lost 2 more (see --json)",
    ]);
    assert.deepEqual(lostFactLines("m", lost.slice(0, 3)).length, 3, "no 'more' line when all are shown");
  });
});
