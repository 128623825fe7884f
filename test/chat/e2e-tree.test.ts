/**
 * `/tree`, `/label` and `/fork` in `bonsai chat`, end to end in a pseudo-terminal against a scripted
 * OpenAI-compatible server: moving without a summary (branchSummary disabled), and with one
 * (enabled in the project's .bonsai/settings.json), including Escape during a slow summary and
 * a summary with custom instructions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { chatWorld, lastText } from "../helpers/chat-e2e.js";

const answer = (said: string) => `Answer: ${/"text":"([^"]*)"/.exec(said)?.[1] ?? said}`;

test("/tree moves back without a summary, the next message forks, /label and /fork", async () => {
  const world = await chatWorld((request) => ({ text: answer(lastText(request)) }));
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    chat.submit("first question");
    await chat.waitFor("Answer: first question");
    chat.submit("second question");
    await chat.waitFor("Answer: second question");
    chat.submit("/label milestone");
    await chat.waitFor(/Labeled \w+ "milestone"/);

    chat.submit("/tree");
    const tree = await chat.waitFor("Conversation tree");
    assert.match(tree, /user: first question/);
    assert.match(tree, /→ assistant: Answer: second question \[milestone\] ← current/);
    chat.keys("Up");
    await chat.waitFor(/→ user: second question/);
    chat.keys("Enter");
    const moved = await chat.waitFor(/✓ Moved back before the message "second question"/);
    assert.match(moved, /^second question\s*$/m, "the message is back in the editor");
    assert.doesNotMatch(moved, /Summarize the branch/, "branchSummary is off: no question");
    const last = world.entries().at(-1)!;
    assert.equal(last.type, "custom");
    assert.equal(last.customType, "bonsai.checkout", "the move is persisted");

    chat.keys("C-c");
    chat.submit("another second");
    await chat.waitFor("Answer: another second");
    chat.submit("/tree");
    const forked = await chat.waitFor("Conversation tree");
    assert.match(forked, /├─ user: second question/);
    assert.match(forked, /└─ user: another second/);
    assert.match(forked, /→ {4}assistant: Answer: another second ← current/);
    chat.keys("Escape");
    await chat.waitFor((s: string) => !s.includes("Conversation tree"));

    chat.submit("/fork");
    await chat.waitFor("Forked: now writing to");
    const files = world.sessionFiles();
    assert.equal(files.length, 2);
    const forkedFile = files.find((f) => world.entries(f).length < world.entries(files.find((g) => g !== f)!).length)!;
    const text = JSON.stringify(world.entries(forkedFile));
    assert.match(text, /another second/);
    assert.doesNotMatch(text, /"second question"/, "the fork holds only the current path");
  } finally {
    await world.cleanup();
  }
});

test("/tree with branch summaries: Escape backs out of the question and cancels a slow summary; custom instructions reach the summarizer", async () => {
  let branchRequests = 0;
  const world = await chatWorld(
    (request, kind) => {
      if (kind === "branch") {
        branchRequests++;
        return branchRequests === 1 ? { text: "## Goal\ntoo slow", delayMs: 8000 } : { text: "## Goal\nTry the other approach." };
      }
      return { text: answer(lastText(request)) };
    },
    { branchSummary: { enabled: true } },
  );
  try {
    const chat = world.start();
    await chat.waitFor(/tokens/);
    chat.submit("first question");
    await chat.waitFor("Answer: first question");
    chat.submit("second question");
    await chat.waitFor("Answer: second question");
    const entriesBefore = world.entries().length;

    chat.submit("/tree");
    await chat.waitFor("Conversation tree");
    chat.keys("Up");
    await chat.waitFor(/→ user: second question/);
    chat.keys("Enter");
    await chat.waitFor("Summarize the branch you are leaving?");
    chat.keys("Escape");
    await chat.waitFor("Conversation tree");

    chat.keys("Up");
    await chat.waitFor(/→ user: second question/);
    chat.keys("Enter");
    await chat.waitFor("Summarize the branch you are leaving?");
    chat.keys("Down");
    await chat.waitFor(/→ Summarize\s*$/m);
    chat.keys("Enter");
    await chat.waitFor("Summarizing the branch… (esc to cancel)");
    chat.keys("Escape");
    const cancelled = await chat.waitFor("Branch summary cancelled; nothing was changed.");
    assert.match(cancelled, /Conversation tree/, "an aborted summary re-opens the tree");
    assert.equal(world.entries().length, entriesBefore, "nothing was written");
    assert.equal(branchRequests, 1);

    chat.keys("Up");
    await chat.waitFor(/→ user: second question/);
    chat.keys("Enter");
    await chat.waitFor("Summarize the branch you are leaving?");
    chat.keys("Down", "Down");
    await chat.waitFor(/→ Summarize with custom prompt/);
    chat.keys("Enter");
    await chat.waitFor("What should the branch summary focus on?");
    chat.submit("the abandoned idea");
    await chat.waitFor(/summarized in entry \w+\./);
    const screen = chat.screen(true);
    assert.match(screen, /✓ Moved back before the message "second question"/);
    assert.match(screen, /\[branch summary\] what happened on the branch left behind:/);
    assert.match(screen, /Try the other approach\./);

    const summaries = world.entries().filter((e) => e.type === "branch_summary");
    assert.equal(summaries.length, 1);
    assert.match(String(summaries[0].summary), /Try the other approach\./);
    const request = world.server.requests.filter((r) => JSON.stringify(r.messages).includes("Additional focus")).at(-1);
    assert.ok(request && JSON.stringify(request.messages).includes("the abandoned idea"), "the custom instructions reached the summarizer");
  } finally {
    await world.cleanup();
  }
});
