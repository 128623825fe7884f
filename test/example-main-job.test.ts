/**
 * `npm start` (examples/main-job.mjs, run from the built dist/): it ends with what happened, the
 * copy compacted from N to M tokens and examples/ unchanged, where the terminal leaves it in view.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "./helpers/cli.js";

test("npm start ends with the tokens before and after the compaction, and examples/ unchanged", () => {
  const example = join(ROOT, "examples/coding-session.jsonl");
  const bytes = readFileSync(example);
  const run = spawnSync(process.execPath, [join(ROOT, "examples/main-job.mjs")], { cwd: ROOT, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  assert.equal(run.status, 0, run.stderr);
  const last = run.stdout.trimEnd().split("\n").at(-1) ?? "";
  const match = /^Done: compacted with the offline extractive summarizer: the copy's context went from ([\d,]+) to ([\d,]+) tokens \((\d+) → (\d+) messages\); examples\/coding-session\.jsonl is unchanged\.$/.exec(last);
  assert.ok(match, `the last line says what happened: ${last}`);
  const [before, after] = [match[1], match[2]].map((n) => Number(n.replaceAll(",", "")));
  assert.ok(after < before, `${after} < ${before}`);
  assert.ok(readFileSync(example).equals(bytes));
});
