/**
 * Compaction hooks on a real AgentSession (spec 12.9, decisions 8 and 11): order, cancel,
 * hook-supplied compactions and their validation, throwing hooks, the compacting hook's prompt,
 * context and preserved data, the entry handed to session_compact, and hook abort signals.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { CompactionError } from "../../src/agent/compaction-run.js";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import type { CompactionEntry } from "../../src/format/entry-types.js";
import { createHarness, type Harness, replies } from "../helpers/agent-harness.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

/** Two turns, ready for a manual compaction that keeps only the last answer. */
async function twoTurns(): Promise<Harness> {
  harness = await createHarness({ settings: { compaction: { keepRecentTokens: 1 } }, responses: replies(4) });
  await harness.session.prompt("What is 2+2?");
  await harness.session.prompt("And 3+3?");
  return harness;
}

describe("session_before_compact and session_compact (spec 12.9)", () => {
  test("fire once each with the preparation, the branch, and the stored entry", async () => {
    const h = await twoTurns();
    const before: unknown[] = [];
    const after: { compactionEntry: CompactionEntry; fromExtension: boolean }[] = [];
    h.session.on("session_before_compact", (e) => {
      before.push(e);
    });
    h.session.on("session_compact", (e) => {
      after.push(e);
      assert.ok(h.manager.getEntries().some((x) => x.type === "compaction"), "the entry is stored before the after-event");
    });
    await h.session.compact("be brief");
    assert.equal(before.length, 1);
    const event = before[0] as {
      reason: string;
      preparation: { messagesToSummarize: unknown[]; turnPrefixMessages: unknown[]; tokensBefore: number; isSplitTurn: boolean; firstKeptEntryId: string };
      branchEntries: { id: string }[];
      customInstructions?: string;
      signal: AbortSignal;
    };
    assert.equal(event.reason, "manual");
    assert.ok(Array.isArray(event.preparation.messagesToSummarize) && event.preparation.messagesToSummarize.length > 0);
    assert.ok(Array.isArray(event.preparation.turnPrefixMessages));
    assert.ok(event.preparation.tokensBefore >= 0);
    assert.equal(typeof event.preparation.isSplitTurn, "boolean");
    assert.ok(event.branchEntries.some((e) => e.id === event.preparation.firstKeptEntryId));
    assert.equal(event.customInstructions, "be brief");
    assert.ok(event.signal instanceof AbortSignal);
    assert.equal(after.length, 1);
    assert.equal(after[0].fromExtension, false);
    assert.equal(after[0].compactionEntry, h.manager.getLeafEntry());
  });

  test("cancel makes compact() reject with Compaction cancelled, and no after-event fires", async () => {
    const h = await twoTurns();
    let afterFired = false;
    h.session.on("session_before_compact", () => ({ cancel: true }));
    h.session.on("session_compact", () => {
      afterFired = true;
    });
    await assert.rejects(h.session.compact(), (e: unknown) => e instanceof CompactionError && e.message === "Compaction cancelled");
    assert.equal(afterFired, false);
    assert.equal(h.summarizer.requests.length, 0);
  });

  test("a hook's compaction is used as it is (fromExtension, tokensBefore 999)", async () => {
    const h = await twoTurns();
    const after: boolean[] = [];
    h.session.on("session_before_compact", ({ preparation }) => ({
      compaction: { summary: "From the hook", firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: 999, details: { mine: 1 } },
    }));
    h.session.on("session_compact", ({ fromExtension }) => {
      after.push(fromExtension);
    });
    const result = await h.session.compact();
    assert.equal(result.summary, "From the hook");
    assert.equal(result.tokensBefore, 999);
    assert.deepEqual(after, [true]);
    const entry = h.manager.getLeafEntry() as CompactionEntry;
    assert.equal(entry.fromExtension, true);
    assert.equal(entry.fromHook, true);
    assert.deepEqual(entry.details, { mine: 1 });
    assert.equal(h.summarizer.requests.length, 0, "the summarizer was not asked");
  });

  test("a throwing hook is reported and skipped; the default compaction goes on", async () => {
    const h = await twoTurns();
    h.session.on("session_before_compact", () => {
      throw new Error("hook exploded");
    });
    const result = await h.session.compact();
    assert.match(result.summary, /^Summary 1/);
    assert.equal((h.manager.getLeafEntry() as CompactionEntry).fromExtension, false);
    assert.deepEqual(
      h.events.filter((e) => e.type === "hook_error"),
      [{ type: "hook_error", event: "session_before_compact", index: 0, error: "hook exploded" }],
    );
  });

  test("two hooks run in registration order: before, before, after, after", async () => {
    const h = await twoTurns();
    const order: string[] = [];
    for (const name of ["h1", "h2"]) {
      h.session.on("session_before_compact", () => {
        order.push(`${name}-before`);
      });
    }
    for (const name of ["h1", "h2"]) {
      h.session.on("session_compact", () => {
        order.push(`${name}-after`);
      });
    }
    await h.session.compact();
    assert.deepEqual(order, ["h1-before", "h2-before", "h1-after", "h2-after"]);
  });
});

describe("validation of hook compactions (decision 8)", () => {
  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ["an id not on the branch", { summary: "s", firstKeptEntryId: "nope", tokensBefore: 1 }, /firstKeptEntryId "nope" is not on the current branch/],
    ["an empty summary", { summary: "  ", firstKeptEntryId: "", tokensBefore: 1 }, /summary must be a non-empty string/],
    ["a missing tokensBefore", { summary: "s", firstKeptEntryId: "" }, /tokensBefore must be a non-negative number/],
  ];
  for (const [name, compaction, message] of invalid) {
    test(`rejects ${name} with a clear error and stores nothing`, async () => {
      const h = await twoTurns();
      const firstId = h.manager.getEntries()[0].id;
      h.session.on("session_before_compact", () => ({
        compaction: { ...compaction, firstKeptEntryId: compaction.firstKeptEntryId === "" ? firstId : compaction.firstKeptEntryId } as never,
      }));
      await assert.rejects(
        h.session.compact(),
        (e: unknown) => e instanceof CompactionError && e.code === "invalid-hook-result" && message.test(e.message),
      );
      assert.equal(h.manager.getEntries().some((e) => e.type === "compaction"), false);
    });
  }

  test("an automatic compaction reports the invalid result as its failure", async () => {
    harness = await createHarness({ responses: replies(5) });
    const h = harness;
    h.session.on("session_before_compact", () => ({ compaction: { summary: "s", firstKeptEntryId: "ghost", tokensBefore: 1 } }));
    for (let i = 0; i < 4; i++) await h.session.prompt(`q${i} ${"y".repeat(1600)}`);
    const end = h.events.find((e) => e.type === "auto_compaction_end") as Extract<AgentSessionEvent, { type: "auto_compaction_end" }>;
    assert.match(end.errorMessage ?? "", /^Auto-compaction failed: session_before_compact hook returned an invalid compaction: firstKeptEntryId "ghost"/);
    assert.equal(h.manager.getEntries().some((e) => e.type === "compaction"), false);
  });

  test("session_compact gets the new entry by id even when an older one has the same summary", async () => {
    harness = await createHarness({ settings: { compaction: { keepRecentTokens: 1 } }, responses: replies(6) });
    const h = harness;
    h.session.on("session_before_compact", ({ preparation }) => ({
      compaction: { summary: "No prior history.", firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: 5 },
    }));
    const seen: string[] = [];
    h.session.on("session_compact", ({ compactionEntry }) => {
      seen.push(compactionEntry.id);
    });
    await h.session.prompt("one");
    await h.session.prompt("two");
    await h.session.compact();
    await h.session.prompt("three");
    await h.session.compact();
    const ids = h.manager.getEntries().filter((e) => e.type === "compaction").map((e) => e.id);
    assert.equal(ids.length, 2);
    assert.deepEqual(seen, ids);
  });
});

describe("session.compacting", () => {
  test("prompt override and context lines reach the summarizer; preserveData is merged and stored", async () => {
    const h = await twoTurns();
    h.session.on("session.compacting", ({ messages, sessionId }) => {
      assert.ok(messages.length > 0);
      assert.equal(sessionId, h.manager.getSessionId());
      return { context: ["first hook line"], preserveData: { a: 1, shared: "first" } };
    });
    h.session.on("session.compacting", () => ({
      prompt: "SUMMARIZE IN THE HOOK'S OWN WAY",
      context: ["second hook line"],
      preserveData: { b: 2, shared: "second" },
    }));
    const result = await h.session.compact();
    const history = h.summarizer.requests.find((r) => r.purpose === "history");
    assert.ok(history);
    assert.match(history.prompt, /SUMMARIZE IN THE HOOK'S OWN WAY/);
    assert.match(history.prompt, /first hook line[\s\S]*second hook line/);
    assert.deepEqual(result.preserveData, { a: 1, shared: "second", b: 2 });
    assert.deepEqual((h.manager.getLeafEntry() as CompactionEntry).preserveData, { a: 1, shared: "second", b: 2 });
  });

  test("not emitted when a before-hook supplied the compaction", async () => {
    const h = await twoTurns();
    let compactingRan = false;
    h.session.on("session_before_compact", ({ preparation }) => ({
      compaction: { summary: "hook", firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: 1, preserveData: { kept: true } },
    }));
    h.session.on("session.compacting", () => {
      compactingRan = true;
    });
    await h.session.compact();
    assert.equal(compactingRan, false);
    assert.deepEqual((h.manager.getLeafEntry() as CompactionEntry).preserveData, { kept: true });
  });
});

describe("hook signals", () => {
  test("abortCompaction aborts the signal a running hook holds, and the compaction is cancelled", async () => {
    const h = await twoTurns();
    let aborted = false;
    h.session.on("session_before_compact", ({ signal }) => {
      return new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          aborted = true;
          resolve(undefined);
        });
      });
    });
    const compaction = h.session.compact();
    await new Promise((r) => setTimeout(r, 10));
    h.session.abortCompaction();
    await assert.rejects(compaction, (e: unknown) => e instanceof CompactionError && e.code === "cancelled");
    assert.equal(aborted, true);
    assert.equal(h.summarizer.requests.length, 0);
  });

  test("hooks run for automatic compactions too, with the reason", async () => {
    harness = await createHarness({ responses: replies(5) });
    const h = harness;
    const reasons: string[] = [];
    h.session.on("session_before_compact", ({ reason }) => {
      reasons.push(reason);
    });
    h.session.on("session_compact", ({ reason }) => {
      reasons.push(`after:${reason}`);
    });
    for (let i = 0; i < 4; i++) await h.session.prompt(`q${i} ${"y".repeat(1600)}`);
    assert.deepEqual(reasons, ["threshold", "after:threshold"]);
  });
});
