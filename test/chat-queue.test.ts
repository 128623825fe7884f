/** What `bonsai chat` does with lines typed while it is busy: queue, order, restore, notice. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseChatInput } from "../src/chat/commands.js";
import { InputQueue, queueNotice, runsWhileBusy } from "../src/chat/queue.js";

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

test("the notice says what waits and for what", () => {
  assert.equal(queueNotice([], "compacting"), undefined);
  assert.equal(queueNotice(["fix it", "/tree"], "compacting"), "Queued (2, sent after the compaction): fix it | /tree");
  assert.equal(queueNotice(["x"], "summarizing"), "Queued (1, sent after the branch summary): x");
  assert.equal(queueNotice(["x"], "answering"), "Queued (1, sent when the answer ends): x");
  const long = queueNotice(["y".repeat(100)], "answering")!;
  assert.ok(long.endsWith(`${"y".repeat(59)}…`));
});
