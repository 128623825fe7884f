/**
 * The remembered context (TreeIndex.context): every build, incremental or not, must equal the
 * context worked out from scratch over the leaf's path, through appends, branches, compactions,
 * replaced messages, callers mutating what they got, and bodies read lazily from disk; and an
 * append followed by a build must convert only the new entries.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pruneSession } from "../../src/ops/prune.js";
import type { AgentMessage, ToolResultMessage } from "../../src/format/message-types.js";
import { contextFromPath } from "../../src/format/context.js";
import { SessionManager } from "../../src/session/manager.js";
import { TreeIndex } from "../../src/session/tree.js";
import type { SessionContext, SessionEntry } from "../../src/format/entry-types.js";
import { assistantMsg, entry, T0, tempDir, userEntry, userMsg } from "../helpers/session-builders.js";
import { seededRandom } from "../../src/util/seeded-random.js";

const { dir: DIR, cleanup } = tempDir();
after(cleanup);

const toolResult = (text: string, toolName = "bash"): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: `call_${text.length}`,
  toolName,
  content: [{ type: "text", text }],
  isError: false,
  timestamp: T0,
});

/** The context from scratch: the leaf's whole path, no index, nothing remembered. */
function oracle(session: SessionManager, leafId: string | null): SessionContext {
  if (leafId === null) return { messages: [], thinkingLevel: "off", model: null };
  return contextFromPath(session.getBranch(leafId));
}

/** Random session work: appends of every kind, leaf moves, compactions, replaced messages. */
class Driver {
  private readonly random: () => number;
  private n = 0;
  builds = 0;

  constructor(
    readonly session: SessionManager,
    seed: number,
  ) {
    this.random = seededRandom(seed);
  }

  private int(n: number): number {
    return Math.floor(this.random() * n);
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }

  private ids(): string[] {
    return this.session.getEntries().map((e) => e.id);
  }

  private message(): AgentMessage {
    const text = `m${++this.n} ${"x".repeat(this.int(40))}`;
    switch (this.int(3)) {
      case 0:
        return userMsg(text, T0 + this.n);
      case 1:
        return assistantMsg(text, { provider: this.pick(["anthropic", "openai"]), model: this.pick(["a", "b", "c"]) });
      default:
        return toolResult(text);
    }
  }

  /** One random step. */
  step(): void {
    const s = this.session;
    const roll = this.int(100);
    if (roll < 45 || s.getEntries().length < 3) s.appendMessage(this.message());
    else if (roll < 52) s.appendCustomMessageEntry(this.pick(["note", "hook"]), `custom ${++this.n}`, this.random() < 0.5, { n: this.n });
    else if (roll < 57) s.branchWithSummary(this.pick(this.ids()), this.random() < 0.8 ? `summary ${++this.n}` : "");
    else if (roll < 67) s.branch(this.pick(this.ids()));
    else if (roll < 69) s.resetLeaf();
    else if (roll < 75) {
      // a kept entry on the branch, one elsewhere in the session, or none at all
      const branch = s.getBranch();
      const kept = branch.length > 0 && this.random() < 0.7 ? this.pick(branch).id : this.random() < 0.5 ? this.pick(this.ids()) : "missing";
      s.appendCompaction(`compacted ${++this.n}`, kept, 1000 + this.n, undefined, undefined, this.random() < 0.5 ? { shortSummary: "short" } : {});
    } else if (roll < 79) s.appendModelChange(this.pick(["anthropic", "google"]), this.pick(["x", "y"]), this.pick([undefined, "default", "smol"]));
    else if (roll < 82) s.appendThinkingLevelChange(this.pick(["low", "medium", "high"]));
    else if (roll < 85) s.appendLabelChange(this.pick(this.ids()), this.random() < 0.7 ? "tag" : undefined);
    else if (roll < 87) s.appendCustomEntry("state", { n: ++this.n });
    else if (roll < 93) this.replaceOnBranch();
    else this.build(this.pick(this.ids()));
  }

  /** Replaces a message entry on the current branch: it is in the remembered context when one exists. */
  private replaceOnBranch(): void {
    const messages = this.session.getBranch().filter((e) => e.type === "message");
    if (messages.length === 0) return;
    this.session.replaceMessage(this.pick(messages).id, this.message());
  }

  /** Builds at `leafId` (default: the leaf), checks it against the oracle, then scribbles on it. */
  build(leafId?: string | null): void {
    const s = this.session;
    const target = leafId === undefined ? s.getLeafId() : leafId;
    const first = s.buildSessionContext(target);
    const second = s.buildSessionContext(target);
    assert.deepEqual(first, oracle(s, target), `context at ${target} after ${this.builds} builds`);
    assert.deepEqual(second, first);
    assert.notEqual(second, first, "each call returns its own context object");
    if (first.messages.length > 0) assert.notEqual(second.messages, first.messages, "each call returns its own array");
    this.builds++;
    // callers own what they get: none of this may show up in a later build
    first.messages.push(userMsg("scribbled"));
    second.messages.reverse();
    second.messages.length = Math.max(0, second.messages.length - 1);
    first.thinkingLevel = "scribbled";
  }
}

describe("remembered context equals the context from scratch", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`random in-memory session, seed ${seed}`, () => {
      const driver = new Driver(SessionManager.inMemory("/w"), seed);
      for (let i = 0; i < 400; i++) {
        driver.step();
        if (i % 2 === 0) driver.build();
      }
      // null and an unknown leaf (the last entry in file order) too
      driver.build(null);
      const s = driver.session;
      const entries = s.getEntries();
      assert.deepEqual(s.buildSessionContext("no-such-entry"), oracle(s, entries[entries.length - 1].id));
      assert.ok(driver.builds > 200);
    });
  }

  for (const bodies of ["checked", "trusted"] as const) {
    it(`session file reopened with ${bodies} bodies: lazily read paths, then more work`, async () => {
      const writer = new Driver(SessionManager.create("/w", join(DIR, bodies)), 11);
      for (let i = 0; i < 300; i++) writer.step();
      const file = writer.session.getSessionFile()!;
      const leaves = writer.session.getEntries().map((e) => e.id).filter((_, i) => i % 17 === 0);
      await writer.session.close();

      // the context first, while every body is still on disk; the oracle reads them afterwards
      const reader = SessionManager.open(file, { readOnly: true, bodies });
      for (const id of [reader.getLeafId(), ...leaves]) {
        const context = reader.buildSessionContext(id);
        assert.deepEqual(context, oracle(reader, id), `context at ${id}`);
      }
      reader.close();

      const session = SessionManager.open(file, { bodies });
      const driver = new Driver(session, 12);
      driver.build();
      for (let i = 0; i < 200; i++) {
        driver.step();
        driver.build();
      }
      // close() forgets the remembered context; a build after it reads again and still agrees
      const leaf = session.getLeafId();
      const before = session.buildSessionContext();
      await session.close();
      assert.deepEqual(session.buildSessionContext(leaf), before);
    });
  }
});

describe("what invalidates or must not leak into the remembered context", () => {
  it("replaceMessage on an entry inside the remembered context shows in the next build", () => {
    const s = SessionManager.inMemory("/w");
    s.appendMessage(userMsg("question"));
    const resultId = s.appendMessage(toolResult("long output"));
    s.appendMessage(assistantMsg("answer"));
    const before = s.buildSessionContext();
    s.replaceMessage(resultId, toolResult("pruned"));
    assert.deepEqual(s.buildSessionContext().messages[1], toolResult("pruned"));
    // and after an append, which would otherwise extend the stale messages
    s.appendMessage(userMsg("next"));
    assert.deepEqual(s.buildSessionContext().messages.map((m) => (m as ToolResultMessage).content), [
      "question",
      [{ type: "text", text: "pruned" }],
      [{ type: "text", text: "answer" }],
      "next",
    ]);
    assert.deepEqual(before.messages[1], toolResult("long output"), "an earlier result keeps what it showed");
  });

  it("pruning the session shows in the next build", () => {
    const s = SessionManager.inMemory("/w");
    s.appendMessage(userMsg("run it"));
    s.appendMessage(toolResult("y".repeat(4000)));
    s.appendMessage(userMsg("again"));
    s.appendMessage(toolResult("z".repeat(4000)));
    assert.equal(s.buildSessionContext().messages.length, 4);
    const result = pruneSession(s, { config: { protectTokens: 500, minimumSavings: 0 }, now: T0 });
    assert.equal(result.prunedCount, 1);
    const pruned = s.buildSessionContext().messages[1] as ToolResultMessage;
    assert.equal(pruned.prunedAt, T0);
    assert.deepEqual(s.buildSessionContext(), oracle(s, s.getLeafId()));
  });

  it("replacing an assistant message by another role moves the model back (the path is walked)", () => {
    const s = SessionManager.inMemory("/w");
    s.appendModelChange("google", "g1");
    const answer = s.appendMessage(assistantMsg("a", { provider: "openai", model: "o1" }));
    s.appendMessage(userMsg("q"));
    assert.deepEqual(s.buildSessionContext().model, { provider: "openai", modelId: "o1" });
    s.replaceMessage(answer, userMsg("now a user message"));
    const context = s.buildSessionContext();
    assert.deepEqual(context.model, { provider: "google", modelId: "g1" });
    assert.deepEqual(context, oracle(s, s.getLeafId()));
  });

  it("replacing a message by an assistant message makes its model the one below it, on every branch", () => {
    const s = SessionManager.inMemory("/w");
    s.appendModelChange("google", "g1");
    const question = s.appendMessage(userMsg("q"));
    const left = s.appendMessage(userMsg("left"));
    s.branch(question);
    const right = s.appendMessage(userMsg("right"));
    assert.deepEqual(s.buildSessionContext(left).model, { provider: "google", modelId: "g1" });
    s.replaceMessage(question, assistantMsg("now an answer", { provider: "openai", model: "o3" }));
    for (const leaf of [question, left, right]) {
      const context = s.buildSessionContext(leaf);
      assert.deepEqual(context.model, { provider: "openai", modelId: "o3" }, `model at ${leaf}`);
      assert.deepEqual(context, oracle(s, leaf));
    }
  });

  it("a message array a caller mutated does not change the next build", () => {
    const s = SessionManager.inMemory("/w");
    s.appendMessage(userMsg("one"));
    s.appendMessage(userMsg("two"));
    const got = s.buildSessionContext();
    got.messages.splice(0, 2, userMsg("intruder"));
    s.appendMessage(userMsg("three"));
    assert.deepEqual(
      s.buildSessionContext().messages.map((m) => (m as { content: string }).content),
      ["one", "two", "three"],
    );
  });
});

describe("the remembered context is used", () => {
  const linear = (count: number): SessionEntry[] => {
    const out: SessionEntry[] = [];
    for (let i = 0; i < count; i++) out.push(userEntry(`e${i}`, i === 0 ? null : `e${i - 1}`, `text ${i}`, i));
    return out;
  };

  it("an append converts only the new entry; the same leaf converts none", () => {
    const index = new TreeIndex(linear(2000));
    assert.equal(index.context("e1999").messages.length, 2000);
    const full = index.contextConversions;
    assert.equal(full, 2000);

    index.add(userEntry("n1", "e1999", "new", 3000));
    const grown = index.context("n1");
    assert.equal(index.contextConversions - full, 1, "one new entry, one conversion");
    assert.equal(grown.messages.length, 2001);
    assert.deepEqual(grown, contextFromPath(index.branch("n1")));

    index.context("n1");
    assert.equal(index.contextConversions - full, 1, "the same leaf again converts nothing");

    // two appends at once, then a leaf that does not descend from the remembered one: rebuilt
    index.add(userEntry("n2", "n1", "two", 3001));
    index.add(userEntry("n3", "n2", "three", 3002));
    index.context("n3");
    assert.equal(index.contextConversions - full, 3);
    index.add(userEntry("side", "e999", "side", 3003));
    assert.deepEqual(index.context("side"), contextFromPath(index.branch("side")));
    assert.equal(index.contextConversions - full, 3 + 1001, "another branch is built in full");
  });

  it("a compaction below the remembered leaf starts over from the compaction", () => {
    const index = new TreeIndex(linear(500));
    index.context("e499");
    const before = index.contextConversions;
    index.add(entry("compaction", "c1", "e499", { summary: "s", firstKeptEntryId: "e490", tokensBefore: 9 }, 600));
    index.add(userEntry("a1", "c1", "after", 601));
    const context = index.context("a1");
    assert.deepEqual(context, contextFromPath(index.branch("a1")));
    assert.equal(context.messages.length, 1 + 10 + 1, "summary, kept entries, the new one");
    assert.equal(index.contextConversions - before, 10 + 1, "the kept entries and the one after the compaction");
    index.add(userEntry("a2", "a1", "more", 602));
    index.context("a2");
    assert.equal(index.contextConversions - before, 12, "then incremental again under the compaction");
  });

  it("a session reuses the message objects it converted last time", () => {
    const s = SessionManager.inMemory("/w");
    for (let i = 0; i < 50; i++) s.appendCustomMessageEntry("note", `note ${i}`, true);
    const first = s.buildSessionContext();
    s.appendMessage(userMsg("next"));
    const second = s.buildSessionContext();
    assert.equal(second.messages.length, 51);
    // custom messages are made afresh by every conversion: the same objects mean no reconversion
    for (let i = 0; i < 50; i++) assert.equal(second.messages[i], first.messages[i], `message ${i}`);
    assert.deepEqual(second, oracle(s, s.getLeafId()));
  });

  it("a session file opened lazily reuses the messages it read from disk", async () => {
    const writer = SessionManager.create("/w", join(DIR, "once"));
    for (let i = 0; i < 30; i++) writer.appendCustomMessageEntry("note", `note ${i}`, true);
    const file = writer.getSessionFile()!;
    await writer.close();
    const s = SessionManager.open(file, { bodies: "checked" });
    const first = s.buildSessionContext();
    s.appendMessage(userMsg("appended"));
    const second = s.buildSessionContext();
    for (let i = 0; i < 30; i++) assert.equal(second.messages[i], first.messages[i], `message ${i}`);
    assert.deepEqual(second, oracle(s, s.getLeafId()));
    await s.close();
  });
});
