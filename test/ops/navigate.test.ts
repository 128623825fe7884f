/**
 * Tree navigation without an agent (spec 8.5, the cases of spec 12.12 that need no live model):
 * where the leaf goes, what returns to the editor, where a summary hangs, that an abort leaves
 * the session untouched, and that a persisted move survives a reload.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Context, fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import type { AgentMessage, AssistantMessage } from "../../src/format/message-types.js";
import { BRANCH_SUMMARY_PREAMBLE } from "../../src/prompts/branch.js";
import { SessionManager } from "../../src/session/manager.js";
import { navigateTree, type TreePreparation } from "../../src/ops/navigate.js";
import { CHECKOUT_CUSTOM_TYPE } from "../../src/format/entry-types.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";
import { piAiSummarizer } from "../../src/summarizer/pi-ai.js";
import { SummarizationAbortedError, type SummarizeRequest, type Summarizer } from "../../src/summarizer/types.js";

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const user = (text: string): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
const assistant = (text: string, readPath?: string): AssistantMessage => ({
  role: "assistant",
  content: [
    { type: "text", text },
    ...(readPath ? [{ type: "toolCall" as const, id: "c1", name: "read", arguments: { path: readPath } }] : []),
  ],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage: ZERO_USAGE,
  stopReason: "stop",
  timestamp: 1,
});

function fakeSummarizer(
  respond: (request: SummarizeRequest) => Promise<string> = async () => "## Goal\nExplore the side idea.",
): Summarizer & { requests: SummarizeRequest[] } {
  const requests: SummarizeRequest[] = [];
  return {
    name: "fake",
    contextWindow: 100_000,
    reasoning: false,
    requests,
    async summarize(request) {
      requests.push(request);
      return { text: await respond(request) };
    },
  };
}

/** Waits for the signal, like a model call that is still streaming; throws when aborted. */
const hangingSummarizer = () =>
  fakeSummarizer(
    (request) =>
      new Promise((_, reject) => request.signal?.addEventListener("abort", () => reject(new SummarizationAbortedError()))),
  );

/**
 *   u1 - a1 - u2 - a2           (main; leaf a2 unless `side`)
 *          \- u3 - a3           (side branch off a1; the leaf when `side`)
 */
function build(session: SessionManager, side = false) {
  const u1 = session.appendMessage(user("first question"));
  const a1 = session.appendMessage(assistant("first answer", "src/a.ts"));
  const u2 = session.appendMessage(user("second question"));
  const a2 = session.appendMessage(assistant("second answer", "src/main-only.ts"));
  let u3 = "";
  let a3 = "";
  if (side) {
    session.branch(a1);
    u3 = session.appendMessage(user("side question"));
    a3 = session.appendMessage(assistant("side answer", "src/side.ts"));
  }
  return { u1, a1, u2, a2, u3, a3 };
}

const memory = (side = false) => {
  const session = SessionManager.inMemory("/tmp/project");
  return { session, ...build(session, side) };
};

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function onDisk(side = false) {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  dirs.push(dir);
  const file = join(dir, "session.jsonl");
  const session = SessionManager.open(file);
  return { file, session, ...build(session, side) };
}

describe("navigateTree without a summary", () => {
  it("is a no-op when the target is the current leaf", async () => {
    const { session, a2 } = memory();
    const count = session.getEntries().length;
    const result = await navigateTree(session, a2, { summarize: true, summarizer: fakeSummarizer() });
    assert.deepEqual(result, { cancelled: false, newLeafId: a2, oldLeafId: a2 });
    assert.equal(session.getEntries().length, count);
  });

  it("re-opens the root user message: its text to the editor, the leaf before the first entry", async () => {
    const { session, u1, a2 } = memory();
    const count = session.getEntries().length;
    const result = await navigateTree(session, u1);
    assert.equal(result.editorText, "first question");
    assert.equal(result.cancelled, false);
    assert.equal(result.oldLeafId, a2);
    assert.equal(result.newLeafId, null);
    assert.equal(session.getLeafId(), null);
    assert.equal(session.getEntries().length, count);
    assert.equal(session.getTree().length, 1);
    assert.deepEqual(session.buildSessionContext().messages, []);
  });

  it("makes an assistant target the leaf, with no editor text", async () => {
    const { session, a1 } = memory();
    const result = await navigateTree(session, a1);
    assert.equal(result.editorText, undefined);
    assert.equal(result.newLeafId, a1);
    assert.equal(session.getLeafId(), a1);
    assert.equal(session.buildSessionContext().messages.length, 2);
  });

  it("re-opens a custom message like a user message", async () => {
    const { session, a2 } = memory();
    const custom = session.appendCustomMessageEntry("note", [{ type: "text", text: "do it " }, { type: "text", text: "again" }], true);
    session.appendMessage(assistant("ok"));
    const result = await navigateTree(session, custom);
    assert.equal(result.editorText, "do it again");
    assert.equal(session.getLeafId(), a2);
  });

  it("throws for an unknown target and leaves the leaf alone", async () => {
    const { session, a2 } = memory();
    await assert.rejects(navigateTree(session, "nope"), /Entry nope not found/);
    assert.equal(session.getLeafId(), a2);
  });

  it("asks for a summarizer only when one is needed", async () => {
    const { session, a2, a1 } = memory();
    await assert.rejects(navigateTree(session, a1, { summarize: true }), /No summarizer/);
    assert.equal(session.getLeafId(), a2);
    // moving down the same branch abandons nothing: no summary, no summarizer needed
    session.branch(a1);
    const result = await navigateTree(session, a2, { summarize: true });
    assert.equal(result.summaryEntry, undefined);
    assert.equal(session.getLeafId(), a2);
  });
});

describe("navigateTree with a summary", () => {
  it("hangs the summary off null for the root user message, making it the leaf", async () => {
    const { session, u1 } = memory();
    const summarizer = fakeSummarizer();
    const result = await navigateTree(session, u1, { summarize: true, summarizer });
    assert.equal(result.editorText, "first question");
    const summary = result.summaryEntry;
    assert.ok(summary);
    assert.equal(summary.parentId, null);
    assert.equal(summary.fromId, "root");
    assert.equal(session.getLeafId(), summary.id);
    assert.equal(result.newLeafId, summary.id);
    assert.equal(result.fromExtension, false);
    assert.equal(session.getTree().length, 2);
    assert.ok(summary.summary.startsWith(`${BRANCH_SUMMARY_PREAMBLE}\n\n## Goal`));
    assert.deepEqual(summary.details, { readFiles: ["src/a.ts", "src/main-only.ts"], modifiedFiles: [] });
    // everything after u1 was abandoned and summarized, u1 itself goes back to the editor
    assert.ok(summarizer.requests[0].prompt.includes("first answer"));
    assert.ok(!summarizer.requests[0].prompt.includes("first question"));
  });

  it("hangs the summary off the parent of a nested user target (a1 then has two children)", async () => {
    const { session, a1, u2 } = memory();
    const result = await navigateTree(session, u2, { summarize: true, summarizer: fakeSummarizer() });
    assert.equal(result.editorText, "second question");
    assert.equal(result.summaryEntry?.parentId, a1);
    assert.equal(session.getLeafId(), result.summaryEntry?.id);
    assert.deepEqual(
      session
        .getChildren(a1)
        .map((e) => e.id)
        .sort(),
      [u2, result.summaryEntry?.id].sort(),
    );
  });

  it("hangs the summary off an assistant target, which the context then ends with", async () => {
    const { session, a1 } = memory();
    const result = await navigateTree(session, a1, { summarize: true, summarizer: fakeSummarizer() });
    assert.equal(result.editorText, undefined);
    assert.equal(result.summaryEntry?.parentId, a1);
    assert.equal(session.getLeafId(), result.summaryEntry?.id);
    const roles = session.buildSessionContext().messages.map((m) => m.role);
    assert.deepEqual(roles, ["user", "assistant", "branchSummary"]);
  });

  it("summarizes the side branch when going back across branches", async () => {
    const { session, a1, u2 } = memory(true);
    const summarizer = fakeSummarizer();
    const result = await navigateTree(session, u2, { summarize: true, summarizer });
    assert.equal(result.editorText, "second question");
    assert.ok(result.summaryEntry && result.summaryEntry.summary.length > BRANCH_SUMMARY_PREAMBLE.length);
    assert.equal(result.summaryEntry.parentId, a1);
    const prompt = summarizer.requests[0].prompt;
    assert.ok(prompt.includes("side question") && prompt.includes("side answer"));
    assert.ok(!prompt.includes("second question") && !prompt.includes("first answer"));
    assert.deepEqual(result.summaryEntry.details, { readFiles: ["src/side.ts"], modifiedFiles: [] });
  });

  it("passes custom instructions to the summarizer", async () => {
    const { session, a1 } = memory();
    const summarizer = fakeSummarizer();
    await navigateTree(session, a1, { summarize: true, summarizer, customInstructions: "3 words" });
    assert.ok(summarizer.requests[0].prompt.endsWith("Additional focus: 3 words"));
    const replacing = fakeSummarizer();
    const { session: other, a1: otherA1 } = memory();
    await navigateTree(other, otherA1, {
      summarize: true,
      summarizer: replacing,
      customInstructions: "3 words",
      replaceInstructions: true,
    });
    assert.ok(replacing.requests[0].prompt.endsWith("</conversation>\n\n3 words"));
  });

  it("aborted in the middle of the summary: cancelled, no entry, leaf unchanged", async () => {
    const { session, u1, a2 } = memory();
    const count = session.getEntries().length;
    const controller = new AbortController();
    const pending = navigateTree(session, u1, { summarize: true, summarizer: hangingSummarizer(), signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    assert.deepEqual(await pending, { cancelled: true, aborted: true, newLeafId: a2, oldLeafId: a2 });
    assert.equal(session.getEntries().length, count);
    assert.equal(session.getLeafId(), a2);
  });

  it("throws when the summarizer fails, leaving the session as it was", async () => {
    const { session, a1, a2 } = memory();
    const count = session.getEntries().length;
    const failing = fakeSummarizer(async () => {
      throw new Error("upstream 500");
    });
    await assert.rejects(navigateTree(session, a1, { summarize: true, summarizer: failing }), /upstream 500/);
    assert.equal(session.getEntries().length, count);
    assert.equal(session.getLeafId(), a2);
  });
});

describe("navigateTree hooks", () => {
  it("shows the hook the preparation and lets it cancel", async () => {
    const { session, a1, u2, a2 } = memory();
    const count = session.getEntries().length;
    let seen: TreePreparation | undefined;
    const result = await navigateTree(session, a1, {
      summarize: true,
      summarizer: fakeSummarizer(),
      customInstructions: "focus",
      hooks: {
        beforeTree(preparation, signal) {
          seen = preparation;
          assert.equal(signal.aborted, false);
          return { cancel: true };
        },
      },
    });
    assert.deepEqual(result, { cancelled: true, newLeafId: a2, oldLeafId: a2 });
    assert.equal(seen?.targetId, a1);
    assert.equal(seen?.oldLeafId, a2);
    assert.equal(seen?.commonAncestorId, a1);
    assert.deepEqual(
      seen?.entriesToSummarize.map((e) => e.id),
      [u2, a2],
    );
    assert.equal(seen?.userWantsSummary, true);
    assert.equal(seen?.customInstructions, "focus");
    assert.equal(session.getEntries().length, count);
  });

  it("uses a hook's summary instead of the summarizer, marked as from an extension", async () => {
    const { session, a1 } = memory();
    const summarizer = fakeSummarizer();
    const result = await navigateTree(session, a1, {
      summarize: true,
      summarizer,
      hooks: { beforeTree: async () => ({ summary: { summary: "hook words", details: { custom: 1 } } }) },
    });
    assert.equal(summarizer.requests.length, 0);
    assert.equal(result.fromExtension, true);
    assert.equal(result.summaryEntry?.summary, "hook words");
    assert.deepEqual(result.summaryEntry?.details, { custom: 1 });
    assert.equal(result.summaryEntry?.fromHook, true);
    assert.equal(result.summaryEntry?.fromExtension, true);
  });

  it("ignores a hook's summary when no summary was asked for, and uses it even when nothing was abandoned", async () => {
    const { session, a1, a2 } = memory();
    const count = session.getEntries().length;
    const hooks = { beforeTree: () => ({ summary: { summary: "unwanted" } }) };
    const plain = await navigateTree(session, a1, { hooks });
    assert.equal(plain.summaryEntry, undefined);
    assert.equal(session.getEntries().length, count);
    const down = await navigateTree(session, a2, { summarize: true, hooks });
    assert.equal(down.summaryEntry?.summary, "unwanted");
    assert.equal(down.summaryEntry?.parentId, a2);
  });

  it("lets a hook change the instructions", async () => {
    const { session, a1 } = memory();
    const summarizer = fakeSummarizer();
    await navigateTree(session, a1, {
      summarize: true,
      summarizer,
      customInstructions: "ignored",
      hooks: { beforeTree: () => ({ customInstructions: "from the hook", replaceInstructions: true }) },
    });
    assert.ok(summarizer.requests[0].prompt.endsWith("\n\nfrom the hook"));
  });

  it("returns aborted when the signal fires while the hook runs", async () => {
    const { session, a1, a2 } = memory();
    const controller = new AbortController();
    const result = await navigateTree(session, a1, {
      signal: controller.signal,
      hooks: {
        beforeTree: () => {
          controller.abort();
          return undefined;
        },
      },
    });
    assert.equal(result.aborted, true);
    assert.equal(session.getLeafId(), a2);
  });
});

describe("navigateTree on a session file", () => {
  it("persists a move without summary: reopening finds the leaf where it was left", async () => {
    const { file, session, a1 } = onDisk();
    const count = session.getEntries().length;
    await navigateTree(session, a1);
    // the only new entry is the checkout marker, which never reaches the model
    assert.equal(session.getEntries().length, count + 1);
    const marker = session.getEntries()[count];
    assert.equal(marker.type === "custom" && marker.customType, CHECKOUT_CUSTOM_TYPE);
    assert.deepEqual(session.buildSessionContext().messages.length, 2);
    session.close();
    const reopened = SessionManager.open(file, { readOnly: true });
    assert.equal(reopened.getLeafId(), a1);
    assert.equal(reopened.buildSessionContext().messages.length, 2);
  });

  it("persists a move to the root: reopening finds an empty context", async () => {
    const { file, session, u1 } = onDisk();
    const result = await navigateTree(session, u1);
    assert.equal(result.newLeafId, null);
    session.close();
    const reopened = SessionManager.open(file, { readOnly: true });
    assert.equal(reopened.getLeafId(), null);
    assert.deepEqual(reopened.buildSessionContext().messages, []);
  });

  it("persists a summary: reopening finds it as the leaf, with its details", async () => {
    const { file, session, a1 } = onDisk(true);
    const result = await navigateTree(session, a1, { summarize: true, summarizer: fakeSummarizer() });
    session.close();
    const reopened = SessionManager.open(file, { readOnly: true });
    assert.equal(reopened.getLeafId(), result.summaryEntry?.id);
    const stored = reopened.getLeafEntry();
    assert.equal(stored?.type, "branch_summary");
    assert.deepEqual(stored?.type === "branch_summary" && stored.details, { readFiles: ["src/side.ts"], modifiedFiles: [] });
    assert.equal(stored?.type === "branch_summary" && stored.fromHook, false);
  });

  it("aborted summary leaves the file byte for byte as it was", async () => {
    const { file, session, u2, a3 } = onDisk(true);
    session.flush();
    const before = readFileSync(file);
    const controller = new AbortController();
    const pending = navigateTree(session, u2, { summarize: true, summarizer: hangingSummarizer(), signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const result = await pending;
    assert.equal(result.aborted, true);
    assert.equal(session.getLeafId(), a3);
    session.close();
    assert.deepEqual(readFileSync(file), before);
  });
});

describe("navigateTree with the faux provider and the extractive summarizer standing in for a model", () => {
  const promptOf = (context: Context) => {
    const content = context.messages[0]?.content;
    return typeof content === "string" ? content : "";
  };
  /** The summary text between the preamble and the file tags. */
  const body = (summary: string) => summary.slice(BRANCH_SUMMARY_PREAMBLE.length).split("\n\n<")[0].trim();

  it("custom instructions reach the model: '3 words' gives a summary of fewer than 20 words", async () => {
    const faux = registerFauxProvider({ models: [{ id: "faux-branch", contextWindow: 64_000 }] });
    try {
      // The stand-in obeys a word limit only when the instructions carry one.
      faux.setResponses([
        (context) =>
          fauxAssistantMessage(
            promptOf(context).includes("Additional focus: 3 words")
              ? "Explored second question."
              : `## Goal\n${"Answer the second question thoroughly and record every detail. ".repeat(5)}`,
          ),
      ]);
      const { session, a1 } = memory();
      const result = await navigateTree(session, a1, {
        summarize: true,
        summarizer: piAiSummarizer(faux.getModel()),
        customInstructions: "3 words",
      });
      const words = body(result.summaryEntry?.summary ?? "").split(/\s+/).filter(Boolean);
      assert.ok(words.length > 0 && words.length < 20, `${words.length} words`);
      assert.equal(faux.state.callCount, 1);
    } finally {
      faux.unregister();
    }
  });

  it("aborting a streaming model after 100 ms cancels with no entry and the leaf unchanged", async () => {
    const faux = registerFauxProvider({ models: [{ id: "faux-slow" }], tokensPerSecond: 20 });
    try {
      faux.setResponses([fauxAssistantMessage("## Goal\n" + "slowly streamed words ".repeat(200))]);
      const { session, u1, a2 } = memory();
      const count = session.getEntries().length;
      const controller = new AbortController();
      const started = Date.now();
      const pending = navigateTree(session, u1, {
        summarize: true,
        summarizer: piAiSummarizer(faux.getModel()),
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 100);
      const result = await pending;
      assert.deepEqual(result, { cancelled: true, aborted: true, newLeafId: a2, oldLeafId: a2 });
      assert.ok(Date.now() - started < 5000, "the abort ended the stream early");
      assert.equal(session.getEntries().length, count);
      assert.equal(session.getLeafId(), a2);
    } finally {
      faux.unregister();
    }
  });

  it("across branches with the extractive summarizer: the side branch's request and files in the summary", async () => {
    const { session, a1, u2 } = memory(true);
    const result = await navigateTree(session, u2, { summarize: true, summarizer: extractiveSummarizer() });
    assert.equal(result.editorText, "second question");
    const summary = result.summaryEntry;
    assert.ok(summary);
    assert.equal(summary.parentId, a1);
    assert.ok(summary.summary.startsWith(`${BRANCH_SUMMARY_PREAMBLE}\n\n`));
    assert.match(body(summary.summary), /## Goal[\s\S]*side question/);
    assert.ok(!summary.summary.includes("second question"));
    assert.ok(summary.summary.endsWith("<read-files>\nsrc/side.ts\n</read-files>"));
  });
});
