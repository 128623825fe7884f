/**
 * Issue 19, item 9: long work shows a spinner with elapsed seconds on any terminal, also one that
 * reports no width, and nothing when stderr is piped.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startSpinner } from "../../src/cli/spinner.js";

const stream = (isTTY: boolean) => {
  const written: string[] = [];
  return { isTTY, columns: 0, written, write: (s: string) => written.push(s) > 0 };
};

test("a terminal without a width gets frames, the elapsed seconds and a last line", async () => {
  const tty = stream(true);
  const stop = await startSpinner("summarizing with x…", tty, { intervalMs: 20, now: fakeClock([0, 0, 1200, 2500, 3100]) });
  await new Promise((resolve) => setTimeout(resolve, 90));
  stop(true);
  stop(true);
  const out = tty.written.join("");
  assert.match(out, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] summarizing with x… \d+s/);
  assert.match(out, /\r\x1b\[2K✔ summarizing with x… \d+\.\ds\n$/);
  assert.equal(out.match(/✔/g)?.length, 1, "stopping twice prints once");
});

test("piped, it writes nothing", async () => {
  const piped = stream(false);
  const stop = await startSpinner("working…", piped, { intervalMs: 10 });
  await new Promise((resolve) => setTimeout(resolve, 40));
  stop(true);
  assert.deepEqual(piped.written, []);
});

/** A clock that returns the given times, then the last one. */
function fakeClock(times: number[]): () => number {
  let i = 0;
  return () => times[Math.min(i++, times.length - 1)];
}
