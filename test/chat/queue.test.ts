/** What `bonsai chat` does with lines typed while it is busy: queue, order, restore, notice. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseChatInput } from "../../src/chat/commands.js";
import { groupQueued, InputQueue, nextGroup, type QueuedStep, queueNotice, runsWhileBusy } from "../../src/chat/queue.js";

test("lines are queued in the order typed, commands kept with their text; blank lines are not", () => {
  const queue = new InputQueue();
  assert.equal(queue.push("  "), false);
  assert.equal(queue.push("first"), true);
  assert.equal(queue.push("/compact keep the API"), true);
  assert.equal(queue.push("second"), true);
  assert.equal(queue.size, 3);
  assert.deepEqual(queue.lines(), ["first", "/compact keep the API", "second"]);
  assert.deepEqual(queue.shift(), { kind: "message", text: "first" });
  assert.deepEqual(queue.shift(), { kind: "command", input: { kind: "compact", instructions: "keep the API" }, text: "/compact keep the API" });
  assert.equal(queue.size, 1);
});

test("a step that could not run goes back in front, before what was queued after it", () => {
  const queue = new InputQueue();
  queue.push("a");
  queue.push("b");
  const a = queue.shift()!;
  queue.push("c");
  queue.restore([a]);
  assert.deepEqual(queue.lines(), ["a", "b", "c"]);
  assert.equal(queue.clear().length, 3);
  assert.equal(queue.size, 0);
});

test("only commands that read or leave run while busy", () => {
  for (const line of ["/quit", "/session", "/help", "/nonsense"]) assert.equal(runsWhileBusy(parseChatInput(line)), true, line);
  for (const line of ["hello", "/compact", "/tree", "/label x", "/fork"]) assert.equal(runsWhileBusy(parseChatInput(line)), false, line);
});

const queued = (...lines: string[]): QueuedStep[] => {
  const queue = new InputQueue();
  for (const line of lines) queue.push(line);
  return queue.clear();
};

test("lines typed in a row go as one message; each command runs alone, at its place", () => {
  const compact = { kind: "command", input: { kind: "compact" }, text: "/compact" };
  assert.deepEqual(groupQueued(queued("a", "b", "/compact", "c")), [{ kind: "message", text: "a\n\nb" }, compact, { kind: "message", text: "c" }]);
  assert.deepEqual(groupQueued(queued("/compact", "/tree", "x", "y", "z")), [
    compact,
    { kind: "command", input: { kind: "tree" }, text: "/tree" },
    { kind: "message", text: "x\n\ny\n\nz" },
  ]);
  assert.deepEqual(groupQueued(queued("only")), [{ kind: "message", text: "only" }]);
  assert.deepEqual(groupQueued([]), []);
  assert.equal(nextGroup([]), undefined);
  assert.deepEqual(nextGroup(queued("a", "b", "/fork", "c")), { step: { kind: "message", text: "a\n\nb" }, taken: 2 });
  assert.deepEqual(nextGroup(queued("/fork", "c")), { step: { kind: "command", input: { kind: "fork" }, text: "/fork" }, taken: 1 });
});

test("takeNext takes one group at a time; lines queued after a command join the message that follows it", () => {
  const queue = new InputQueue();
  for (const line of ["a", "b", "/compact", "c"]) queue.push(line);
  assert.deepEqual(queue.takeNext(), { kind: "message", text: "a\n\nb" });
  assert.deepEqual(queue.lines(), ["/compact", "c"]);
  assert.equal(queue.takeNext()?.kind, "command");
  queue.push("d"); // typed while the compaction ran
  assert.deepEqual(queue.takeNext(), { kind: "message", text: "c\n\nd" });
  assert.equal(queue.size, 0);
  assert.equal(queue.takeNext(), undefined);
});

test("the notice says what waits, for what, and how it will run", () => {
  assert.equal(queueNotice([], "compacting"), undefined);
  assert.equal(queueNotice(["  "], "compacting"), undefined);
  assert.equal(queueNotice(["x"], "summarizing"), "Queued (1, sent after the branch summary): x");
  assert.equal(queueNotice(["x"], "answering"), "Queued (1, sent when the answer ends): x");
  assert.equal(queueNotice(["/tree"], "compacting"), "Queued (1, run after the compaction): /tree");
  assert.equal(queueNotice(["fix it", "and test it"], "answering"), "Queued (2, sent as one message when the answer ends): fix it + and test it");
  assert.equal(queueNotice(["a", "b", "/compact", "c"], "answering"), "Queued (4, run in 3 steps when the answer ends): a + b | /compact | c");
  assert.equal(queueNotice(["fix it", "/tree"], "compacting"), "Queued (2, run in 2 steps after the compaction): fix it | /tree");
  const long = queueNotice(["y".repeat(100)], "answering")!;
  assert.ok(long.endsWith(`${"y".repeat(59)}…`));
});
