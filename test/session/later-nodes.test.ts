/**
 * An open through the open index links no entry until something needs them all (session/
 * later-nodes.ts): the leaf's context is built from the few nodes it needs. Whatever is asked
 * first (the context, then anything else; or an append), every answer is the one a read of every
 * line gives, and a session the columns cannot tell (a parent after its child, a compaction
 * keeping an entry not above it) is linked whole before its context is built.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { SessionManager } from "../../src/index.js";
import { openIndexPath } from "../../src/storage/open-index-file.js";
import type { TreeIndex } from "../../src/session/tree.js";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "bonsai-later-nodes-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const T = "2026-12-01T00:00:00.000Z";
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 };
const assistant = (text: string, model = "m1") => ({ role: "assistant", content: [{ type: "text", text }], api: "x", provider: "p", model, usage: USAGE, stopReason: "stop", timestamp: 1 });
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });

/** Lines built entry by entry; each entry hangs off the previous one unless told otherwise. */
class Lines {
  readonly out: string[] = [JSON.stringify({ type: "session", version: 3, id: "s-later", timestamp: T, cwd: "/w" })];
  private parent: string | null = null;
  private n = 0;

  add(entry: Record<string, unknown>, parentId: string | null = this.parent, id = `e${this.n++}`): string {
    this.out.push(JSON.stringify({ ...entry, id, parentId, timestamp: T }));
    this.parent = id;
    return id;
  }

  turns(count: number, from = 0): string {
    let first = "";
    for (let t = from; t < from + count; t++) {
      const id = this.add({ type: "message", message: user(`request ${t}`) });
      first ||= id;
      this.add({ type: "message", message: assistant(`answer ${t}`) });
    }
    return first;
  }

  text(titleSlot = false): string {
    const slot = JSON.stringify({ type: "title", v: 1, title: "later", updatedAt: T, pad: "" });
    return `${titleSlot ? `${slot.padEnd(255)}\n` : ""}${this.out.join("\n")}\n`;
  }
}

/** Sessions of the shapes a walk up the columns meets, each with whether that walk can tell its context. */
function shapes(): { name: string; text: string; early: boolean }[] {
  const compacted = new Lines();
  compacted.add({ type: "thinking_level_change", thinkingLevel: "high" });
  compacted.add({ type: "model_change", provider: "p", modelId: "m0" });
  compacted.turns(3);
  const kept = compacted.turns(2, 3);
  compacted.add({ type: "compaction", summary: "the first turns", firstKeptEntryId: kept, tokensBefore: 500 });
  compacted.add({ type: "message", message: user("after the compaction") }); // a deferred entry under a parsed one
  compacted.add({ type: "label", targetId: kept, label: "kept" });
  compacted.add({ type: "session_info", name: "the later session" });
  compacted.add({ type: "custom_message", customType: "note", content: "injected", display: true });
  compacted.turns(2, 5);

  const branched = new Lines();
  const fork = branched.turns(2);
  branched.add({ type: "thinking_level_change", thinkingLevel: "medium" }); // on the other branch: not the leaf's
  branched.turns(2, 2);
  branched.add({ type: "model_change", provider: "p", modelId: "m9" }, fork);
  const side = branched.add({ type: "message", message: assistant("on the side branch", "m9") });
  branched.add({ type: "compaction", summary: "side", firstKeptEntryId: side, tokensBefore: 9 });
  branched.add({ type: "message", message: user("last, under the compaction") });

  const twoCompactions = new Lines();
  twoCompactions.turns(2);
  const keptOnce = twoCompactions.turns(1, 2);
  twoCompactions.add({ type: "compaction", summary: "one", firstKeptEntryId: keptOnce, tokensBefore: 9 });
  const keptTwice = twoCompactions.turns(2, 3);
  twoCompactions.add({ type: "compaction", summary: "two", firstKeptEntryId: keptTwice, tokensBefore: 9 });

  const checkout = new Lines();
  const back = checkout.turns(3);
  checkout.add({ type: "custom", customType: "bonsai.checkout", data: { leafId: back } }, back);

  const uncompacted = new Lines();
  uncompacted.turns(6);

  const keptElsewhere = new Lines();
  keptElsewhere.turns(2);
  keptElsewhere.add({ type: "compaction", summary: "keeps what is not above it", firstKeptEntryId: "nowhere", tokensBefore: 9 });
  keptElsewhere.turns(1, 2);

  // the leaf's parent was written before its own parent: only a link of every entry tells its path
  const parentAfterChild = new Lines();
  parentAfterChild.turns(1);
  parentAfterChild.add({ type: "message", message: user("written before its parent") }, "late", "early");
  parentAfterChild.add({ type: "message", message: assistant("the parent") }, "e1", "late");
  parentAfterChild.add({ type: "message", message: assistant("the leaf") }, "early");

  // a missing parent far above the compaction: the eager read warns of it, so must this one
  const missingParent = new Lines();
  missingParent.add({ type: "message", message: user("under a parent that is not there") }, "missing");
  missingParent.add({ type: "thinking_level_change", thinkingLevel: "high" });
  const keptUnderMissing = missingParent.turns(2);
  missingParent.add({ type: "compaction", summary: "one", firstKeptEntryId: keptUnderMissing, tokensBefore: 9 });
  missingParent.turns(1, 2);

  return [
    { name: "compacted, settings at the root, a deferred entry under a compaction", text: compacted.text(), early: true },
    { name: "branched, the last entry on a side branch", text: branched.text(), early: true },
    { name: "two compactions", text: twoCompactions.text(), early: true },
    { name: "oh-my-pi's title slot", text: compacted.text(true), early: true },
    { name: "a checkout marker last", text: checkout.text(), early: false },
    { name: "never compacted", text: uncompacted.text(), early: true },
    { name: "a compaction keeping no entry above it", text: keptElsewhere.text(), early: false },
    { name: "a parent after its child", text: parentAfterChild.text(), early: false },
    { name: "a missing parent far above the leaf's compaction", text: missingParent.text(), early: false },
  ];
}

function withIndex<T>(run: () => T): T {
  const saved = { ...process.env };
  Object.assign(process.env, { BONSAI_INDEX: "", BONSAI_INDEX_DIR: join(dir, "index"), BONSAI_INDEX_MIN_BYTES: "1" });
  try {
    return run();
  } finally {
    for (const key of ["BONSAI_INDEX", "BONSAI_INDEX_DIR", "BONSAI_INDEX_MIN_BYTES"]) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  }
}

const withoutIndex = <T>(run: () => T): T => {
  const saved = process.env.BONSAI_INDEX;
  process.env.BONSAI_INDEX = "off";
  try {
    return run();
  } finally {
    if (saved === undefined) delete process.env.BONSAI_INDEX;
    else process.env.BONSAI_INDEX = saved;
  }
};

const indexOf = (session: SessionManager) => (session as unknown as { index: TreeIndex }).index;

/** What a session shows, the context asked for first. */
function shown(session: SessionManager) {
  const context = session.buildSessionContext();
  const linkedAfterContext = indexOf(session).linkedCount;
  return {
    linkedAfterContext,
    seen: {
      context,
      leaf: session.getLeafId(),
      name: session.getSessionName(),
      size: indexOf(session).size,
      dialect: session.getDialect().name,
      entries: session.getEntries(),
      tree: JSON.parse(JSON.stringify(session.getTree())),
      branch: session.getBranch(),
      contextAgain: session.buildSessionContext(),
    },
  };
}

/** Runs `run` on the session at `path`; the warnings it heard. */
function read(path: string, run: (session: SessionManager) => void, readOnly = true): string[] {
  const warnings: string[] = [];
  const session = SessionManager.open(path, { readOnly, onWarning: (w) => warnings.push(w) });
  try {
    run(session);
  } finally {
    session.close();
  }
  return warnings;
}

describe("an open through the index links entries when they are needed", () => {
  for (const [i, shape] of shapes().entries()) {
    test(shape.name, () => {
      const path = join(dir, `shape-${i}.jsonl`);
      writeFileSync(path, shape.text);
      let full: ReturnType<typeof shown> | undefined;
      const fullWarnings = withoutIndex(() => read(path, (s) => (full = shown(s))));
      withIndex(() => read(path, () => undefined)); // writes the index
      assert.ok(withIndex(() => existsSync(openIndexPath(path)!.where)), "the first open wrote an index");
      let replayed: ReturnType<typeof shown> | undefined;
      const replayedWarnings = withIndex(() => read(path, (s) => (replayed = shown(s))));
      assert.deepEqual(replayed!.seen, full!.seen);
      assert.deepEqual(replayedWarnings, fullWarnings);
      const size = full!.seen.size;
      // the context came from the few nodes it needs, or from every entry linked when the columns cannot tell it
      assert.equal(replayed!.linkedAfterContext, shape.early ? 0 : size);
    });
  }

  test("an append after the context links everything first and gives what a full read of the file gives", () => {
    const [shape] = shapes();
    const path = join(dir, "append.jsonl");
    writeFileSync(path, shape.text);
    withIndex(() => read(path, () => undefined));
    let before: unknown;
    let after: unknown;
    withIndex(() =>
      read(
        path,
        (s) => {
          before = s.buildSessionContext();
          assert.equal(indexOf(s).linkedCount, 0);
          s.appendMessage(user("one more") as never);
          after = s.buildSessionContext();
        },
        false,
      ),
    );
    let fullBefore: unknown;
    withoutIndex(() => read(path, (s) => (fullBefore = s.buildSessionContext(s.getBranch().at(-2)!.id))));
    let fullAfter: unknown;
    withoutIndex(() => read(path, (s) => (fullAfter = s.buildSessionContext())));
    assert.deepEqual(before, fullBefore);
    assert.deepEqual(after, fullAfter);
  });
});
