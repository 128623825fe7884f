import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { contextSegments, messageFromEntry } from "../../src/format/context.js";
import { SessionManager } from "../../src/session/manager.js";
import { pathFinder, type ViewModel } from "../../src/view/model.js";
import { nativeLine } from "../../src/summarizer/native-lane.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { readViewModel } from "../../src/view/source.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";
import { compactedExample, EXAMPLE } from "../helpers/view-sessions.js";

const { dir, cleanup } = tempDir();
after(cleanup);

/** The ancestors of every node, from parent links. */
function ancestors(model: ViewModel, id: string): Set<string> {
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  const out = new Set<string>();
  for (let n = byId.get(id); n?.parentId; n = byId.get(n.parentId)) out.add(n.parentId);
  return out;
}

describe("buildViewModel", () => {
  it("flattens the example's tree depth first: subtrees are runs, forks indent, labels and the leaf are kept", async () => {
    const model = await readViewModel(EXAMPLE, { contextWindow: 200_000, reserveTokens: 16_384 });
    const session = SessionManager.open(EXAMPLE, { readOnly: true });
    try {
      assert.equal(model.nodes.length, session.getEntries().length);
      assert.equal(model.leafId, session.getLeafId());
      assert.deepEqual(model.activePath, session.getBranch().map((e) => e.id));
      const labelled = new Map(model.nodes.filter((n) => n.label).map((n) => [n.id, n.label]));
      assert.ok(labelled.size > 0);
      assert.deepEqual(labelled, new Map(session.getEntries().filter((e) => session.getLabel(e.id)).map((e) => [e.id, session.getLabel(e.id)])));
      model.nodes.forEach((node, i) => {
        for (let j = i + 1; j < node.end; j++) assert.ok(ancestors(model, model.nodes[j].id).has(node.id), `${model.nodes[j].id} is under ${node.id}`);
        if (node.end < model.nodes.length) assert.ok(!ancestors(model, model.nodes[node.end].id).has(node.id));
      });
      const fork = model.nodes.find((n) => n.children > 1)!;
      assert.ok(fork, "the example branches");
      const kids = model.nodes.filter((n) => n.parentId === fork.id);
      assert.ok(kids.every((k) => k.indent === fork.indent + 1));
      assert.ok(model.nodes.some((n) => n.flags.error), "the example has failed tool calls");
      // the branch summary describes the branch beside it, which points back to it
      const summary = model.nodes.find((n) => n.type === "branch_summary")!;
      assert.equal(summary.fromId, summary.parentId);
      const siblings = model.nodes.filter((n) => n.parentId === summary.parentId && n !== summary);
      assert.ok(siblings.length > 0);
      assert.deepEqual(summary.describes, siblings.map((n) => n.id));
      assert.ok(siblings.every((n) => n.branchSummaryId === summary.id));
      assert.equal(model.threshold?.tokens, 200_000 - 16_384);
      assert.equal(model.bodies, undefined, "no bodies unless asked");
    } finally {
      await session.close();
    }
  });

  it("describes a compaction: tokens before and after, first kept entry, what it summarized, who made it", async () => {
    const { file, compactionId } = await compactedExample(dir);
    const model = await readViewModel(file, { withBodies: true, contextWindow: 200_000 });
    const session = SessionManager.open(file, { readOnly: true });
    try {
      const node = model.nodes.find((n) => n.id === compactionId)!;
      const entry = session.getEntry(compactionId)!;
      assert.equal(entry.type, "compaction");
      const path = session.getBranch(compactionId);
      const { kept } = contextSegments(path);
      // an iterative compaction stands for what came after the previous one's first kept entry
      const previous = path.slice(0, -1).findLast((e) => e.type === "compaction") as { firstKeptEntryId: string } | undefined;
      const start = previous ? path.findIndex((e) => e.id === previous.firstKeptEntryId) : 0;
      const summarized = path.slice(start, kept).filter((e) => messageFromEntry(e) !== undefined);
      assert.equal(node.compaction?.firstKeptEntryId, path[kept].id);
      assert.equal(node.compaction?.summarizedCount, summarized.length);
      assert.equal(node.compaction?.summarizedFrom, summarized[0].id);
      assert.equal(node.compaction?.tokensBefore, (entry as { tokensBefore: number }).tokensBefore);
      assert.ok(node.compaction!.tokensAfter < node.compaction!.tokensBefore);
      assert.ok(node.compaction!.modifiedFiles.length > 0);
      // the pruned results carry their archived originals
      const pruned = model.nodes.filter((n) => n.flags.pruned);
      assert.ok(pruned.length > 0);
      for (const n of pruned) {
        const [block] = model.bodies![n.id];
        assert.equal(block.kind, "pruned");
        assert.ok(block.kind === "pruned" && block.original && block.original.length > 0, `${n.id} has its original`);
      }
    } finally {
      await session.close();
    }
  });

  it("says what a native compaction cost against what it saved, in one line", () => {
    const native = { lane: "anthropic", cacheReadShare: 0.968, tokensShed: 4100, tokensWritten: 900, netTokens: 3200 };
    assert.equal(nativeLine(native), "anthropic: 96.8% of the request read from the provider's cache; 4,100 tokens shed, 900 written (net 3,200)");
    assert.equal(nativeLine({ ...native, tokensShed: 500 }), "anthropic: 96.8% of the request read from the provider's cache; 500 tokens shed, 900 written (net −400)");
    assert.equal(nativeLine({ lane: "anthropic" }), undefined);
    assert.equal(nativeLine(undefined), undefined);
  });

  it("shows that line on the compaction a native lane made", async () => {
    const file = join(dir, "native.jsonl");
    const session = SessionManager.open(file);
    const first = session.appendMessage(userMsg("first"));
    session.appendMessage(assistantMsg("reply"));
    const native = { lane: "openai-responses", cacheReadShare: 0.5, tokensShed: 2000, tokensWritten: 100, netTokens: 1900 };
    const id = session.appendCompaction("summary", first, 3000, { readFiles: [], modifiedFiles: [], method: "native", native });
    await session.close();
    const model = await readViewModel(file, {});
    const details = model.nodes.find((n) => n.id === id)?.compaction?.details;
    assert.equal(details?.method, "native");
    assert.equal(details?.native, nativeLine(native));
  });

  it("leaves checkout markers out and shows a leaf on one at the entry it moved to", async () => {
    const file = join(dir, "checkout.jsonl");
    const session = SessionManager.open(file);
    const u1 = session.appendMessage(userMsg("first"));
    session.appendMessage(assistantMsg("reply"));
    session.checkout(u1);
    session.persistLeaf();
    await session.close();
    const reopened = SessionManager.open(file, { readOnly: true });
    const marker = reopened.getEntries().find((e) => e.type === "custom");
    await reopened.close();
    assert.ok(marker, "moving the leaf wrote a checkout marker");
    const model = await readViewModel(file, { contextWindow: 0 });
    assert.ok(!model.nodes.some((n) => n.id === marker.id));
    assert.equal(model.leafId, u1);
    assert.equal(model.threshold, null, "an unknown window draws no threshold");
  });

  it("finds what a compaction dropped once for a caller that keeps the drops, and leaves them out when not asked", async () => {
    const { file, compactionId } = await compactedExample(dir);
    const drops = new Map();
    const first = await readViewModel(file, { contextWindow: 0, drops });
    const found = first.nodes.find((n) => n.id === compactionId)!.compaction!;
    assert.ok(found.factsChecked! > 0);
    assert.deepEqual(drops.get(compactionId)?.dropped, found.dropped, "the memo holds what was found");
    // a later build takes the kept drops instead of looking again
    drops.set(compactionId, { compactionId, summarizedEntries: 0, facts: 99, dropped: [{ kind: "file", text: "kept.ts", entryId: null }] });
    const again = (await readViewModel(file, { contextWindow: 0, drops })).nodes.find((n) => n.id === compactionId)!.compaction!;
    assert.equal(again.factsChecked, 99);
    assert.deepEqual(again.dropped, [{ kind: "file", text: "kept.ts", entryId: null }]);
    const none = (await readViewModel(file, { contextWindow: 0, withDrops: false })).nodes.find((n) => n.id === compactionId)!.compaction!;
    assert.equal(none.dropped, undefined);
    assert.equal(none.factsChecked, undefined);
  });

  it("walks each path up to the root once, and builds on a known path only when that one reached a root", () => {
    const e = (id: string, parentId: string | null) => ({ type: "label", id, parentId, timestamp: "2026-01-01T00:00:00.000Z" }) as unknown as SessionEntry;
    // a line from the root, and a parent cycle (c1 -> c2 -> x -> c1) that the forest breaks and shows
    const entries = [e("r", null), e("a", "r"), e("b", "a"), e("c1", "c2"), e("c2", "x"), e("x", "c1")];
    const byId = new Map(entries.map((entry) => [entry.id, entry]));
    const pathTo = pathFinder(byId);
    const ids = (id: string) => pathTo(id).map((entry) => entry.id);
    assert.deepEqual(ids("a"), ["r", "a"]);
    assert.deepEqual(ids("b"), ["r", "a", "b"]);
    for (const id of ["c1", "c2", "x", "c2"]) {
      const path = ids(id);
      assert.equal(path.at(-1), id);
      assert.equal(new Set(path).size, path.length, `no entry twice on the path to ${id}: ${path.join(" ")}`);
      assert.equal(path.length, 3);
    }
  });
});
