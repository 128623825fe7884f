/**
 * `bonsai tree` draws the whole tree from an outline (SessionManager.getOutline): message bodies
 * are read in batches for their previews and not kept. What it prints must be what the tree of
 * every entry (getTree) prints, line for line: forks ordered by time, labels, checkout markers,
 * the leaf and the active path, a depth limit, and a damaged line skipped the same way.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import pc from "picocolors";
import { SessionManager } from "../../src/session/manager.js";
import { renderTree, TREE_LEGEND } from "../../src/cli/tree-view.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { runBonsai } from "../helpers/cli.js";
import { assistantMsg, entry, msg, tempDir, toolResultMsg, userMsg } from "../helpers/session-builders.js";
import { EXAMPLE, largeSession } from "../helpers/view-sessions.js";

const { dir, cleanup } = tempDir();
after(cleanup);

const header = JSON.stringify({ type: "session", version: 3, id: "s-outline", timestamp: "2026-12-01T00:00:00.000Z", cwd: "/work" });
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "");

/** A session with forks written out of time order, labels, a compaction, a checkout marker, long output and a damaged message line. */
function branchedSession(): string {
  const long = "line of build output ".repeat(5000);
  const entries: (SessionEntry | string)[] = [
    msg("u1", null, userMsg("Build the invoices endpoint with paging."), 0),
    msg("a1", "u1", assistantMsg("Reading the handler first."), 1),
    msg("r1", "a1", toolResultMsg(long), 2),
    // two forks of a1: the later one written first
    msg("u3", "r1", userMsg("Second try: use cursor paging."), 30),
    msg("u2", "r1", userMsg("First try: offset paging."), 10),
    msg("a2", "u2", assistantMsg("Offset paging is in."), 11),
    entry("label", "l1", "a2", { targetId: "u2", label: "offset" }, 12),
    entry("custom", "k1", "u3", { customType: "bonsai.checkout", data: { targetId: "u3" } }, 31),
    msg("a3", "u3", assistantMsg("Cursor paging is in."), 32),
    entry("compaction", "c1", "a3", { summary: "Paging work so far.", firstKeptEntryId: "a3", tokensBefore: 50_000 }, 33),
    // a line that is JSON but no valid message (no role): skipped, with a warning
    JSON.stringify({ type: "message", id: "bad", parentId: "c1", timestamp: "2026-12-01T00:00:34.000Z", message: { content: "x" } }),
    msg("u4", "c1", userMsg("Now the totals.\n\n   with   odd   spacing"), 35),
  ];
  const file = join(dir, "branched.jsonl");
  writeFileSync(file, [header, ...entries.map((e) => (typeof e === "string" ? e : JSON.stringify(e)))].join("\n") + "\n");
  return file;
}

/** The lines the tree of every entry gives, as `bonsai tree` printed them before the outline. */
function fromWholeTree(file: string, options: { all?: boolean; depth?: number } = {}): string[] {
  const session = SessionManager.open(file, { readOnly: true, onWarning: () => {} });
  try {
    const c = pc.createColors(false);
    const activePath = new Set(session.getBranch().map((e) => e.id));
    const lines = renderTree(session.getTree(), c, { leafId: session.getLeafId(), activePath, showAll: options.all, depth: options.depth });
    return [...lines, TREE_LEGEND];
  } finally {
    void session.close();
  }
}

async function printed(file: string, args: string[] = []): Promise<string[]> {
  const run = await runBonsai(["tree", file, ...args]);
  assert.equal(run.code, 0, run.stderr);
  return plain(run.stdout).trimEnd().split("\n");
}

describe("bonsai tree from an outline", () => {
  it("prints what the tree of every entry prints, for forks, labels, markers, a compaction and a damaged line", async () => {
    const file = branchedSession();
    assert.deepEqual(await printed(file), fromWholeTree(file));
    assert.deepEqual(await printed(file, ["--all"]), fromWholeTree(file, { all: true }));
    assert.deepEqual(await printed(file, ["--depth", "3"]), fromWholeTree(file, { depth: 3 }));
    const lines = await printed(file);
    assert.ok(lines.some((l) => l.includes("[offset]")) && lines.some((l) => l.includes("← leaf")), lines.join("\n"));
    assert.ok(!lines.some((l) => l.includes("bad")), "the damaged line is skipped");
  });

  it("prints the same for the bundled example and a generated session of 300 turns", async () => {
    assert.deepEqual(await printed(EXAMPLE), fromWholeTree(EXAMPLE));
    const { file } = largeSession(dir, 300);
    assert.deepEqual(await printed(file), fromWholeTree(file));
  });

  it("hands every entry to the visit once, in file order, and leaves the session readable", () => {
    const { file } = largeSession(dir, 50);
    const session = SessionManager.open(file, { readOnly: true });
    try {
      const seen: string[] = [];
      const roots = session.getOutline((e) => seen.push(e.id));
      assert.deepEqual(seen, session.getEntries().map((e) => e.id));
      assert.deepEqual(roots.map((r) => r.entry.id), session.getTree().map((r) => r.entry.id));
      assert.deepEqual(session.getBranchIds(), session.getBranch().map((e) => e.id));
    } finally {
      void session.close();
    }
  });
});
