/**
 * SessionManager: appends, tree traversal, branching, labels, names, branched sessions
 * (spec 12.3, 12.4, 12.7), in memory and on disk, including the persisted leaf (DESIGN.md §4).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { defaultSessionDir, SessionManager } from "../../src/session/manager.js";
import { flattenTree } from "../../src/session/tree.js";
import { CHECKOUT_CUSTOM_TYPE, type SessionEntry, type SessionTreeNode } from "../../src/format/entry-types.js";
import { toJsonl } from "../../src/storage/file-writer.js";
import { assistantMsg, tempDir, userEntry, userMsg } from "../helpers/session-builders.js";

const { dir: DIR, cleanup } = tempDir();
after(cleanup);

let fileCounter = 0;
const freshDir = () => join(DIR, `s${++fileCounter}`);

const raw = (e: unknown) => e as Record<string, unknown>;
const ids = (entries: readonly SessionEntry[]) => entries.map((e) => e.id);
const fileLines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));

/** depth-first: id -> child ids */
const shape = (roots: SessionTreeNode[]) =>
  flattenTree(roots).map(({ node }) => [node.entry.id, node.children.map((c) => c.entry.id)]);

describe("appends (in memory)", () => {
  it("chains parentId from null and advances the leaf after each append", () => {
    const s = SessionManager.inMemory();
    assert.equal(s.getLeafId(), null);
    const a = s.appendMessage(userMsg("one"));
    assert.equal(s.getLeafId(), a);
    const b = s.appendMessage(assistantMsg("two"));
    assert.equal(s.getLeafId(), b);
    const c = s.appendMessage(userMsg("three"));
    assert.deepEqual(
      s.getEntries().map((e) => [e.id, e.parentId]),
      [
        [a, null],
        [b, a],
        [c, b],
      ],
    );
    assert.match(a, /^[0-9a-f]{8}$/);
    assert.equal(new Set([a, b, c]).size, 3);
  });

  it("metadata entries are children of the leaf and the next message is their child", () => {
    const s = SessionManager.inMemory();
    const m1 = s.appendMessage(userMsg("hi"));
    const t = s.appendThinkingLevelChange("high");
    const mc = s.appendModelChange("openai", "gpt-4");
    const c = s.appendCompaction("sum", m1, 1000);
    const x = s.appendCustomEntry("my-ext", { k: 1 });
    const m2 = s.appendMessage(userMsg("next"));
    const byId = (id: string) => s.getEntry(id) as unknown as Record<string, unknown>;
    assert.deepEqual([t, mc, c, x, m2].map((id) => byId(id).parentId), [m1, t, mc, c, x]);
    assert.equal(byId(t).thinkingLevel, "high");
    assert.equal(byId(mc).provider, "openai");
    assert.equal(byId(mc).modelId, "gpt-4");
    assert.equal(byId(mc).model, "openai/gpt-4");
    assert.deepEqual([byId(c).summary, byId(c).firstKeptEntryId, byId(c).tokensBefore], ["sum", m1, 1000]);
    assert.deepEqual([byId(x).customType, byId(x).data], ["my-ext", { k: 1 }]);
  });

  it("compaction and branch summary write both the pi and oh-my-pi spelling of fromExtension", () => {
    const s = SessionManager.inMemory();
    const m = s.appendMessage(userMsg("hi"));
    const c = s.getEntry(s.appendCompaction("sum", m, 1, { readFiles: ["a"], modifiedFiles: [] }, true, { shortSummary: "s" }));
    assert.deepEqual(
      { fromHook: (c as { fromHook?: boolean }).fromHook, fromExtension: (c as { fromExtension?: boolean }).fromExtension },
      { fromHook: true, fromExtension: true },
    );
    assert.equal((c as { shortSummary?: string }).shortSummary, "s");
    const b = raw(s.getEntry(s.branchWithSummary(m, "branch", undefined, false)));
    assert.equal(b.fromHook, false);
    assert.equal(b.fromExtension, false);
    const plain = raw(s.getEntry(s.appendCompaction("sum", m, 1)));
    assert.equal("fromHook" in plain || "fromExtension" in plain || "details" in plain, false);
  });

  it("a custom entry sits in the tree between messages and the context skips it", () => {
    const s = SessionManager.inMemory();
    const m1 = s.appendMessage(userMsg("hi"));
    const x = s.appendCustomEntry("ext", { state: 1 });
    const m2 = s.appendMessage(assistantMsg("hello"));
    assert.deepEqual(shape(s.getTree()), [
      [m1, [x]],
      [x, [m2]],
      [m2, []],
    ]);
    assert.deepEqual(s.buildSessionContext().messages.map((m) => m.role), ["user", "assistant"]);
  });
});

describe("getBranch, getters", () => {
  it("empty session: no branch, no leaf entry, unknown entry is undefined", () => {
    const s = SessionManager.inMemory();
    assert.deepEqual(s.getBranch(), []);
    assert.equal(s.getLeafEntry(), undefined);
    assert.equal(s.getEntry("nope"), undefined);
    assert.deepEqual(s.getTree(), []);
  });

  it("returns the root->leaf path including metadata, or the ancestors of a given id", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    assert.deepEqual(ids(s.getBranch()), [a]);
    const t = s.appendThinkingLevelChange("low");
    const b = s.appendMessage(assistantMsg("2"));
    const c = s.appendMessage(userMsg("3"));
    assert.deepEqual(ids(s.getBranch()), [a, t, b, c]);
    assert.deepEqual(ids(s.getBranch(b)), [a, t, b]);
    assert.equal(s.getLeafEntry()?.id, c);
    assert.equal(s.getEntry(b)?.id, b);
  });

  it("getChildren lists children in file order and nothing for a leaf or unknown id", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    const b = s.appendMessage(assistantMsg("2"));
    s.branch(a);
    const c = s.appendMessage(assistantMsg("2b"));
    s.branch(a);
    const d = s.appendMessage(assistantMsg("2c"));
    assert.deepEqual(ids(s.getChildren(a)), [b, c, d]);
    assert.deepEqual(s.getChildren(d), []);
    assert.deepEqual(s.getChildren("unknown"), []);
  });
});

describe("getTree", () => {
  it("a linear session is one chain", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    const b = s.appendMessage(assistantMsg("2"));
    const c = s.appendMessage(userMsg("3"));
    assert.deepEqual(shape(s.getTree()), [
      [a, [b]],
      [b, [c]],
      [c, []],
    ]);
  });

  it("branching gives 2 and then 3 children at the branch point; deep branches nest", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    const b = s.appendMessage(assistantMsg("2"));
    const c = s.appendMessage(userMsg("3"));
    s.branch(b);
    const d = s.appendMessage(userMsg("3b"));
    let node = flattenTree(s.getTree()).find(({ node }) => node.entry.id === b)!.node;
    assert.deepEqual(node.children.map((n) => n.entry.id), [c, d]);
    s.branch(b);
    const e = s.appendMessage(userMsg("3c"));
    const f = s.appendMessage(assistantMsg("4c"));
    s.branch(e);
    const g = s.appendMessage(assistantMsg("4c'"));
    node = flattenTree(s.getTree()).find(({ node }) => node.entry.id === b)!.node;
    assert.deepEqual(node.children.map((n) => n.entry.id), [c, d, e]);
    assert.deepEqual(shape(s.getTree()), [
      [a, [b]],
      [b, [c, d, e]],
      [c, []],
      [d, []],
      [e, [f, g]],
      [f, []],
      [g, []],
    ]);
  });

  it("orders children by timestamp, not file order, and keeps file order for equal times", () => {
    const { dir, cleanup: done } = tempDir();
    try {
      const file = join(dir, "s.jsonl");
      const header = { type: "session", version: 3, id: "sess", timestamp: "2026-01-01T00:00:00.000Z", cwd: dir };
      writeFileSync(
        file,
        toJsonl([
          header,
          userEntry("r", null, "root", 0),
          userEntry("late", "r", "late", 30),
          userEntry("early", "r", "early", 10),
          userEntry("tie1", "r", "tie1", 20),
          userEntry("tie2", "r", "tie2", 20),
        ]),
      );
      const s = SessionManager.open(file, { readOnly: true });
      assert.deepEqual(s.getTree()[0].children.map((n) => n.entry.id), ["early", "tie1", "tie2", "late"]);
    } finally {
      done();
    }
  });
});

describe("branch, resetLeaf, branchWithSummary", () => {
  it("branch moves the leaf, rejects unknown ids, and new appends hang off the branch point", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    const b = s.appendMessage(assistantMsg("2"));
    s.appendMessage(userMsg("3"));
    s.branch(a);
    assert.equal(s.getLeafId(), a);
    assert.throws(() => s.branch("nonexistent"), { message: "Entry nonexistent not found" });
    assert.equal(s.getLeafId(), a);
    const d = s.appendMessage(assistantMsg("2b"));
    assert.equal(s.getEntry(d)?.parentId, a);
    assert.notEqual(d, b);
  });

  it("resetLeaf empties the context and the next append is a new root", () => {
    const s = SessionManager.inMemory();
    s.appendMessage(userMsg("1"));
    s.resetLeaf();
    assert.equal(s.getLeafId(), null);
    assert.deepEqual(s.buildSessionContext().messages, []);
    const r = s.appendMessage(userMsg("again"));
    assert.equal(s.getEntry(r)?.parentId, null);
    assert.equal(s.getTree().length, 2);
  });

  it("branchWithSummary attaches a summary under the id and makes it the leaf", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    s.appendMessage(assistantMsg("2"));
    const sum = s.branchWithSummary(a, "what happened", { readFiles: ["x"], modifiedFiles: [] });
    const e = raw(s.getEntry(sum));
    assert.equal(e.type, "branch_summary");
    assert.equal(e.parentId, a);
    assert.equal(e.fromId, a);
    assert.deepEqual(e.details, { readFiles: ["x"], modifiedFiles: [] });
    assert.equal(s.getLeafId(), sum);
    assert.deepEqual(s.buildSessionContext().messages.map((m) => m.role), ["user", "branchSummary"]);
    assert.throws(() => s.branchWithSummary("nope", "x"), { message: "Entry nope not found" });
  });

  it("branchWithSummary(null) starts a new root whose fromId is root", () => {
    const s = SessionManager.inMemory();
    s.appendMessage(userMsg("1"));
    const sum = s.branchWithSummary(null, "from the top");
    const e = raw(s.getEntry(sum));
    assert.equal(e.parentId, null);
    assert.equal(e.fromId, "root");
  });

  it("buildSessionContext follows the current branch only", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    s.appendMessage(assistantMsg("2"));
    s.appendMessage(userMsg("3"));
    s.branch(a);
    s.appendMessage(assistantMsg("other"));
    s.appendMessage(userMsg("more"));
    const ctx = s.buildSessionContext();
    assert.equal(ctx.messages.length, 3);
    assert.deepEqual(ctx.messages.map((m) => (m.role === "assistant" ? m.content[0] : m.role)), [
      "user",
      { type: "text", text: "other" },
      "user",
    ]);
  });
});

describe("labels", () => {
  it("sets, replaces, clears; the label entry holds targetId and label", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    const l = s.appendLabelChange(a, "start");
    assert.equal(s.getLabel(a), "start");
    const le = raw(s.getEntry(l));
    assert.deepEqual([le.type, le.targetId, le.label], ["label", a, "start"]);
    s.appendLabelChange(a, "renamed");
    assert.equal(s.getLabel(a), "renamed");
    s.appendLabelChange(a, undefined);
    assert.equal(s.getLabel(a), undefined);
    s.appendLabelChange(a, "again");
    s.appendLabelChange(a, "");
    assert.equal(s.getLabel(a), undefined);
  });

  it("labels show on tree nodes and never reach the context", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    const b = s.appendMessage(assistantMsg("2"));
    s.appendLabelChange(b, "answer");
    const labels = flattenTree(s.getTree()).map(({ node }) => [node.entry.id, node.label]);
    assert.deepEqual(labels.slice(0, 2), [
      [a, undefined],
      [b, "answer"],
    ]);
    assert.deepEqual(s.buildSessionContext().messages.map((m) => m.role), ["user", "assistant"]);
  });

  it("labelling an unknown id throws", () => {
    const s = SessionManager.inMemory();
    assert.throws(() => s.appendLabelChange("non-existent", "x"), { message: "Entry non-existent not found" });
  });

  it("labels are rebuilt from the file on reopen, last one winning", () => {
    const { dir, cleanup: done } = tempDir();
    try {
      const s = SessionManager.create("/w", dir);
      const a = s.appendMessage(userMsg("1"));
      const b = s.appendMessage(assistantMsg("2"));
      s.appendLabelChange(a, "first");
      s.appendLabelChange(a, "second");
      s.appendLabelChange(b, "gone");
      s.appendLabelChange(b);
      const file = s.getSessionFile()!;
      s.close();
      const r = SessionManager.open(file, { readOnly: true });
      assert.equal(r.getLabel(a), "second");
      assert.equal(r.getLabel(b), undefined);
    } finally {
      done();
    }
  });
});

describe("createBranchedSession", () => {
  /** 1 - 2 - 3, and 2 - 4 - 5: ids by name */
  function forked(s: SessionManager) {
    const e1 = s.appendMessage(userMsg("1"));
    const e2 = s.appendMessage(assistantMsg("2"));
    const e3 = s.appendMessage(userMsg("3"));
    s.branch(e2);
    const e4 = s.appendMessage(userMsg("4"));
    const e5 = s.appendMessage(assistantMsg("5"));
    return { e1, e2, e3, e4, e5 };
  }

  it("throws for an unknown id", () => {
    const s = SessionManager.inMemory();
    s.appendMessage(userMsg("1"));
    assert.throws(() => s.createBranchedSession("nope"), { message: "Entry nope not found" });
  });

  it("in memory returns undefined and keeps only the path", () => {
    const s = SessionManager.inMemory();
    const { e1, e2, e4, e5 } = forked(s);
    const oldId = s.getSessionId();
    assert.equal(s.createBranchedSession(e5), undefined);
    assert.deepEqual(ids(s.getEntries()), [e1, e2, e4, e5]);
    assert.equal(s.getLeafId(), e5);
    assert.notEqual(s.getSessionId(), oldId);
  });

  it("re-creates labels of path entries as new label entries after the path, and drops others", () => {
    const s = SessionManager.inMemory();
    const { e1, e2, e3, e5 } = forked(s);
    s.appendLabelChange(e1, "one");
    s.appendLabelChange(e2, "two");
    s.appendLabelChange(e3, "off-path");
    s.branch(e5);
    s.createBranchedSession(e5);
    const labels = s.getEntries().filter((e) => e.type === "label");
    assert.equal(labels.length, 2);
    assert.deepEqual(labels.map((l) => (l as { targetId: string }).targetId), [e1, e2]);
    assert.equal(labels[0].parentId, e5);
    assert.equal(labels[1].parentId, labels[0].id);
    assert.equal(s.getLabel(e1), "one");
    assert.equal(s.getLabel(e3), undefined);
  });

  it("keeps the context when a label entry sat inside the path", () => {
    const s = SessionManager.inMemory();
    const a = s.appendMessage(userMsg("1"));
    s.appendLabelChange(a, "mark");
    s.appendMessage(assistantMsg("2"));
    const c = s.appendMessage(userMsg("3"));
    const before = s.buildSessionContext(c);
    s.createBranchedSession(c);
    assert.deepEqual(s.buildSessionContext(c), before);
    assert.equal(s.getBranch(c).length, 3);
    assert.equal(s.getLabel(a), "mark");
  });

  it("branching from the first user message writes it once, and later appends add no duplicates", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    const u = s.appendMessage(userMsg("first"));
    s.appendMessage(assistantMsg("reply"));
    const file = s.createBranchedSession(u)!;
    assert.deepEqual(fileLines(file).map((l) => l.type), ["session", "message"]);
    const next = s.appendMessage(assistantMsg("other reply"));
    s.close();
    const lines = fileLines(file);
    assert.deepEqual(lines.map((l) => l.id), [lines[0].id, u, next]);
    assert.equal(lines.filter((l) => l.type === "session").length, 1);
  });

  it("on disk writes a new file with the path, switches to it and releases the old file", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    const { e1, e2, e4, e5 } = forked(s);
    s.appendLabelChange(e4, "keep");
    const oldFile = s.getSessionFile()!;
    const oldBytes = readFileSync(oldFile);
    const context = s.buildSessionContext(e5);
    const newFile = s.createBranchedSession(e5)!;
    assert.notEqual(newFile, oldFile);
    assert.equal(s.getSessionFile(), newFile);
    // the old file was only extended by a leaf marker, never rewritten
    assert.deepEqual(readFileSync(oldFile).subarray(0, oldBytes.length), oldBytes);
    const lines = fileLines(newFile);
    assert.equal(lines[0].type, "session");
    assert.equal(lines[0].parentSession, oldFile);
    assert.deepEqual(lines.slice(1, 5).map((e) => e.id), [e1, e2, e4, e5]);
    assert.equal(lines[5].type, "label");
    // appends go to the new file
    const e6 = s.appendMessage(userMsg("6"));
    s.close();
    const r = SessionManager.open(newFile);
    assert.equal(r.getLeafId(), e6);
    assert.deepEqual(r.buildSessionContext(e5), context);
    assert.equal(r.getLabel(e4), "keep");
    r.close();
    // the old file's lock was released
    SessionManager.open(oldFile).close();
  });
});

describe("session name", () => {
  it("appendSessionInfo names the session in memory; the newest wins and an empty name clears", () => {
    const s = SessionManager.inMemory();
    assert.equal(s.getSessionName(), undefined);
    s.appendMessage(userMsg("1"));
    const id = s.appendSessionInfo("  My session  ");
    assert.equal((s.getEntry(id) as { name?: string }).name, "My session");
    assert.equal(s.getSessionName(), "My session");
    assert.equal(s.getHeader().title, "My session");
    s.appendSessionInfo("Renamed");
    assert.equal(s.getSessionName(), "Renamed");
    s.appendSessionInfo("");
    assert.equal(s.getSessionName(), undefined);
    assert.equal(s.getHeader().title, undefined);
  });

  it("on disk: a session_info entry and the header title, both read back on reopen", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    s.appendMessage(userMsg("1"));
    s.appendSessionInfo("Named");
    const file = s.getSessionFile()!;
    s.appendMessage(assistantMsg("after rename"));
    s.close();
    const lines = fileLines(file);
    assert.equal(lines[0].title, "Named");
    // the rename rewrote the header but kept the session's identity
    assert.deepEqual([lines[0].id, lines[0].cwd, lines[0].version], [s.getSessionId(), "/w", 3]);
    assert.deepEqual(lines.map((l) => l.type), ["session", "message", "session_info", "message"]);
    const r = SessionManager.open(file, { readOnly: true });
    assert.equal(r.getSessionName(), "Named");
    assert.equal(r.getHeader().title, "Named");
  });

  it("falls back to an oh-my-pi header title when there is no session_info entry", () => {
    const dir = freshDir();
    mkdirSync(dir);
    const file = join(dir, "omp.jsonl");
    writeFileSync(
      file,
      toJsonl([{ type: "session", version: 3, id: "x", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w", title: "From omp" }]),
      { flag: "wx" },
    );
    assert.equal(SessionManager.open(file, { readOnly: true }).getSessionName(), "From omp");
  });
});

describe("session files: names and places", () => {
  it("names a new file <creation time with - for : and .>_<session id>.jsonl", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    const name = s.getSessionFile()!.slice(dir.length + 1);
    const time = s.getHeader().timestamp.replace(/[:.]/g, "-");
    assert.equal(name, `${time}_${s.getSessionId()}.jsonl`);
    assert.match(name, /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_/);
    s.close();
  });

  it("keeps sessions under $BONSAI_DIR/sessions/--<cwd with / \\ : as ->--/", () => {
    const saved = process.env.BONSAI_DIR;
    process.env.BONSAI_DIR = "/data/bonsai";
    try {
      assert.equal(defaultSessionDir("/home/me/proj"), "/data/bonsai/sessions/--home-me-proj--");
      assert.equal(defaultSessionDir("C:\\work\\x"), "/data/bonsai/sessions/--C--work-x--");
    } finally {
      if (saved === undefined) delete process.env.BONSAI_DIR;
      else process.env.BONSAI_DIR = saved;
    }
  });
});

describe("persisted session", () => {
  it("writes the header and each entry as soon as it exists, before any assistant reply", () => {
    const dir = freshDir();
    const s = SessionManager.create("/work/project", dir);
    const file = s.getSessionFile()!;
    assert.equal(file.startsWith(dir), true);
    assert.match(file, /\.jsonl$/);
    const u = s.appendMessage(userMsg("first prompt"));
    const lines = fileLines(file);
    assert.equal(lines.length, 2);
    assert.deepEqual([lines[0].type, lines[0].version, lines[0].cwd, lines[0].id], ["session", 3, "/work/project", s.getSessionId()]);
    assert.equal(lines[1].id, u);
    s.close();
  });

  it("reopens with the same entries, leaf and context", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    s.appendMessage(userMsg("1"));
    s.appendThinkingLevelChange("high");
    s.appendModelChange("openai", "gpt-4");
    s.appendMessage(assistantMsg("2"));
    const file = s.getSessionFile()!;
    const entries = structuredClone(s.getEntries());
    const context = s.buildSessionContext();
    const leaf = s.getLeafId();
    s.close();
    const r = SessionManager.open(file);
    assert.deepEqual(r.getEntries(), entries);
    assert.equal(r.getLeafId(), leaf);
    assert.deepEqual(r.buildSessionContext(), context);
    assert.equal(r.getHeader().id, s.getSessionId());
    r.close();
  });

  it("branch + close persists the leaf: a reopen has the same leaf and context", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    const a = s.appendMessage(userMsg("1"));
    const b = s.appendMessage(assistantMsg("2"));
    s.appendMessage(userMsg("3"));
    s.appendMessage(assistantMsg("4"));
    s.branch(b);
    const context = s.buildSessionContext();
    const file = s.getSessionFile()!;
    s.close();
    const marker = fileLines(file).at(-1);
    assert.deepEqual([marker.type, marker.customType, marker.parentId], ["custom", CHECKOUT_CUSTOM_TYPE, b]);
    const r = SessionManager.open(file);
    assert.equal(r.getLeafId(), b);
    assert.deepEqual(r.buildSessionContext(), context);
    // the next append hangs off the branch point, not off the marker
    const c = r.appendMessage(userMsg("3b"));
    assert.equal(r.getEntry(c)?.parentId, b);
    r.close();
    const again = SessionManager.open(file, { readOnly: true });
    assert.equal(again.getLeafId(), c);
    assert.deepEqual(ids(again.getBranch()), [a, b, c]);
  });

  it("checkout(null) persists the position before the first entry", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    s.appendMessage(userMsg("1"));
    s.appendMessage(assistantMsg("2"));
    s.checkout(null);
    const file = s.getSessionFile()!;
    const lineCount = fileLines(file).length;
    s.close();
    assert.equal(fileLines(file).length, lineCount, "checkout wrote its marker at once; close adds nothing");
    const r = SessionManager.open(file);
    assert.equal(r.getLeafId(), null);
    assert.deepEqual(r.buildSessionContext().messages, []);
    const root = r.appendMessage(userMsg("fresh start"));
    assert.equal(r.getEntry(root)?.parentId, null);
    r.close();
  });

  it("close writes no marker when the leaf did not move, or moved back to where the file puts it", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    const a = s.appendMessage(userMsg("1"));
    const b = s.appendMessage(assistantMsg("2"));
    s.branch(a);
    s.branch(b);
    const file = s.getSessionFile()!;
    s.close();
    assert.equal(fileLines(file).length, 3);
    const r = SessionManager.open(file);
    r.close();
    assert.equal(fileLines(file).length, 3);
  });

  it("refuses appends after close with a message that says the session is closed", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    s.appendMessage(userMsg("1"));
    s.close();
    assert.throws(() => s.appendMessage(userMsg("2")), /closed/);
  });

  it("a session opened read-only refuses writes", () => {
    const dir = freshDir();
    const s = SessionManager.create("/w", dir);
    s.appendMessage(userMsg("1"));
    const file = s.getSessionFile()!;
    s.close();
    const r = SessionManager.open(file, { readOnly: true });
    assert.throws(() => r.appendMessage(userMsg("2")), /read-only/);
    assert.equal(fileLines(file).length, 2);
  });

  it("opening a path that does not exist starts a session there on the first append", () => {
    const dir = freshDir();
    const file = join(dir, "new.jsonl");
    const s = SessionManager.open(file);
    assert.equal(existsSync(file), false);
    const a = s.appendMessage(userMsg("1"));
    s.close();
    const lines = fileLines(file);
    assert.deepEqual(lines.map((l) => l.type), ["session", "message"]);
    assert.equal(lines[1].id, a);
  });
});

describe("appends from plain JavaScript", () => {
  it("refuses an invalid message before writing it: the file keeps what it had and later reads have nothing to warn of", () => {
    const { dir, cleanup: done } = tempDir();
    after(done);
    const manager = SessionManager.create(dir, dir);
    manager.appendMessage(userMsg("hello"));
    manager.appendMessage(assistantMsg("hi"));
    const file = manager.getSessionFile() as string;
    const before = readFileSync(file, "utf8");
    const leaf = manager.getLeafId();
    for (const bad of [{ content: "no role" }, { role: "user" }, { role: "user", content: 42 }]) {
      assert.throws(() => manager.appendMessage(bad as never), /^TypeError: SessionManager: not appended, the message entry is invalid: /);
    }
    assert.equal(readFileSync(file, "utf8"), before, "nothing written");
    assert.equal(manager.getLeafId(), leaf, "the leaf did not move");
    const warnings: string[] = [];
    SessionManager.open(file, { readOnly: true, onWarning: (w) => warnings.push(w) });
    assert.deepEqual(warnings, []);
  });
});

describe("a damaged path", () => {
  it("is said once per session, however often it is read", () => {
    const file = join(DIR, "missing-parent.jsonl");
    const header = { type: "session", version: 3, id: "damaged", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work" };
    const line = (id: string, parentId: string | null, text: string) => ({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message: userMsg(text) });
    writeFileSync(file, `${[header, line("a1", "gone", "the first"), line("a2", "a1", "the second")].map((e) => JSON.stringify(e)).join("\n")}\n`);
    const warnings: string[] = [];
    const session = SessionManager.open(file, { readOnly: true, onWarning: (w) => warnings.push(w) });
    for (let i = 0; i < 3; i++) {
      session.buildSessionContext();
      session.getBranch("a2");
      session.getTree();
    }
    assert.deepEqual(warnings.filter((w) => w.includes("missing parent gone")), ["entry a1 points at missing parent gone; treated as a root"]);
  });
});
