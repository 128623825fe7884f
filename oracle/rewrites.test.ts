/**
 * bonsai's rewrites, reopened by the real agent (issue 24): each operation is run on a copy of
 * every case, then the agent that writes the case's dialect reads the result. It must build the
 * context bonsai builds, at the same leaf; no entry may be lost; omp's title slot must be the same
 * 256 bytes at offset 0; nothing an omp /clear cleared may come back into omp's context; and the
 * system prompt and tools pi 1.x sends must be the ones it sent before.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { systemCheckpoint } from "../src/format/dialects/pi-1.js";
import type { AgentMessage } from "../src/format/message-types.js";
import { checkoutSession } from "../src/ops/checkout.js";
import { compactSession } from "../src/ops/compact.js";
import { setLabel } from "../src/ops/label.js";
import { pinEntry } from "../src/ops/pin.js";
import { uncompactSession } from "../src/ops/uncompact.js";
import { pruneToolOutput, restoreToolOutput } from "../src/ops/prune-report.js";
import { isCheckoutMarker } from "../src/format/entry-types.js";
import { SessionManager } from "../src/session/manager.js";
import { copySession } from "../src/storage/copy.js";
import { extractiveSummarizer } from "../src/summarizer/extractive.js";
import { AGENTS, askAgent, missing } from "./agents.js";
import { entryIds, type OracleCase, oracleCases } from "./cases.js";
import { comparable } from "./compare.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-oracle-rewrites-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
/** cases where an agent read a pinned section bonsai wrote (checked once all agents ran) */
let pinnedSeen = 0;

type Rewrite = (file: string, c: OracleCase) => Promise<unknown>;

/** The name the rename gives: omp must then show it, since it takes the title from its title slot. */
const RENAMED = "Renamed by bonsai ✓";

/** The operations that write a session, each as a user runs it. */
const REWRITES: Record<string, Rewrite> = {
  compact: (file) => compactSession(file, { summarizer: extractiveSummarizer(), keepRecentTokens: 200 }),
  "prune and restore": async (file) => {
    await pruneToolOutput(file, { config: { protectTokens: 1, minimumSavings: 0 } });
    await restoreToolOutput(file);
  },
  prune: (file) => pruneToolOutput(file, { config: { protectTokens: 1, minimumSavings: 0 } }),
  label: (file, c) => setLabel(file, entryIds(c)[0], "oracle"),
  "checkout --summarize": (file, c) => {
    const ids = entryIds(c);
    return checkoutSession(file, ids[Math.floor(ids.length / 2)], { summarize: true, summarizer: extractiveSummarizer() });
  },
  "pin, then compact": async (file, c) => {
    const user = c.lines.map((line) => JSON.parse(line) as { type?: string; id?: string; message?: { role?: string } }).find((e) => e.type === "message" && e.message?.role === "user");
    if (user?.id) await pinEntry(file, user.id);
    return compactSession(file, { summarizer: extractiveSummarizer(), keepRecentTokens: 200 });
  },
  "compact, then uncompact": async (file) => {
    const compacted = await compactSession(file, { summarizer: extractiveSummarizer(), keepRecentTokens: 200 });
    if (compacted.compacted) await uncompactSession(file);
  },
  rename: async (file) => {
    const session = SessionManager.open(file);
    session.appendSessionInfo(RENAMED);
    await session.close();
  },
  "copy to SQLite and back": async (file) => {
    const db = join(dir, `copy-${++counter}.db`);
    const copied = await copySession(file, `sqlite:${db}`);
    const back = await copySession(copied.to, join(dir, `back-${counter}`));
    copyFileSync(back.to, file);
  },
};

function bonsaiRead(file: string) {
  const session = SessionManager.open(file, { readOnly: true });
  try {
    const entries = session.getEntries();
    // a leaf moved without a summary is kept as a bonsai.checkout marker below it: the agents take
    // the marker for the leaf (the last entry), bonsai the entry it names; both have one context
    const markers = new Map(entries.filter(isCheckoutMarker).map((e) => [e.id, (e as { data?: { leafId?: string } }).data?.leafId]));
    return { context: { leafId: session.getLeafId(), ...session.buildSessionContext() }, ids: entries.map((e) => e.id), markers };
  } finally {
    void session.close();
  }
}

const CLEARED = /CLEARED-/;

/** The prompt and tools the system messages of two contexts add up to are the same (their time aside). */
function sameSystem(before: readonly AgentMessage[], now: readonly AgentMessage[]): boolean {
  const fold = (messages: readonly AgentMessage[]) => JSON.stringify({ ...systemCheckpoint(messages, 0) });
  return fold(before) === fold(now);
}

for (const agent of AGENTS) {
  describe(`${agent.name} reopens what bonsai wrote`, () => {
    const cases = oracleCases().filter((c) => agent.dialects.includes(c.dialect));
    it(`after ${Object.keys(REWRITES).join(", ")}: the same context, leaf, entries and title slot`, async () => {
      const problem = missing(agent);
      assert.equal(problem, undefined, problem);
      const runs: { what: string; file: string; c: OracleCase; original: string }[] = [];
      for (const c of cases) {
        const original = join(dir, `${c.name}-original.jsonl`);
        writeFileSync(original, `${c.lines.join("\n")}\n`);
        for (const [name, rewrite] of Object.entries(REWRITES)) {
          const file = join(dir, `${c.name}-${++counter}.jsonl`);
          writeFileSync(file, `${c.lines.join("\n")}\n`);
          const before = bonsaiRead(file).ids;
          await rewrite(file, c);
          const now = bonsaiRead(file).ids;
          if (c.dialect === "pi-1" && name.startsWith("prune")) {
            // pi 1.x reads context edits: pruning appends them and leaves every earlier byte in place
            assert.ok(readFileSync(file, "utf8").startsWith(`${c.lines.join("\n")}\n`), `${c.name}, ${name}: the file was rewritten`);
            if (c.name === "pi1-context-edits") assert.ok(now.length > before.length, `${c.name}, ${name}: nothing was pruned`);
          }
          const lost = before.filter((id) => !now.includes(id));
          assert.deepEqual(lost, [], `${c.name}, ${name}: entries lost`);
          if (c.lines[0].startsWith('{"type":"title"')) {
            const slot = readFileSync(file).subarray(0, Buffer.byteLength(c.lines[0]) + 1).toString();
            // a rename writes the new name into the slot, in the same bytes; nothing else touches it
            if (name === "rename") assert.equal(JSON.parse(slot).title, RENAMED, `${c.name}: the title slot does not say the new name`);
            else assert.equal(slot, `${c.lines[0]}\n`, `${c.name}, ${name}: the title slot changed`);
            assert.ok(slot.endsWith("\n"), `${c.name}, ${name}: the title slot is no longer ${Buffer.byteLength(c.lines[0]) + 1} bytes`);
          }
          runs.push({ what: `${c.name}, after ${name}`, file, c, original });
        }
      }
      const originals = [...new Set(runs.map((r) => r.original))];
      const answers = askAgent(agent, [...runs.map(({ file }) => ({ file })), ...originals.map((file) => ({ file }))]);
      const beforeOf = (run: (typeof runs)[number]) => answers[runs.length + originals.indexOf(run.original)];
      const differences: string[] = [];
      for (const [i, run] of runs.entries()) {
        const theirs = answers[i];
        if ("error" in theirs) {
          differences.push(`${run.what}: ${agent.name} failed: ${theirs.error}`);
          continue;
        }
        if (run.c.name === "omp-after-clear" && CLEARED.test(JSON.stringify(theirs.messages))) differences.push(`${run.what}: a cleared turn is back in ${agent.name}'s context`);
        if (run.what.endsWith("after rename") && theirs.title !== undefined && theirs.title !== RENAMED) differences.push(`${run.what}: ${agent.name} shows the title ${JSON.stringify(theirs.title)}`);
        // the system prompt and tools the agent sends are the ones it sent before the rewrite (a
        // checkout moves to where they may have been others)
        const before = beforeOf(run);
        if (!run.what.endsWith("checkout --summarize") && !("error" in before) && !sameSystem(before.messages, theirs.messages)) differences.push(`${run.what}: ${agent.name} would send another system prompt or other tools`);
        try {
          const ours = bonsaiRead(run.file);
          const leafId = theirs.leafId !== null && ours.markers.has(theirs.leafId) ? ours.markers.get(theirs.leafId)! : theirs.leafId;
          assert.deepEqual(comparable(ours.context), comparable({ ...theirs, leafId }));
          // the pinned request reaches the agent through the summary it reads
          if (run.what.endsWith("pin, then compact") && readFileSync(run.file, "utf8").includes("## Pinned (verbatim)")) {
            assert.match(JSON.stringify(theirs.messages), /## Pinned \(verbatim\)/, `${agent.name} does not see the pinned section`);
            pinnedSeen++;
          }
        } catch (error) {
          differences.push(`${run.what}: ${(error as Error).message}`);
        }
      }
      assert.equal(differences.length, 0, `${differences.length} of ${runs.length} differ:\n${differences.join("\n\n")}`);
    });
  });
}

it("a pinned request reached an agent through the summary in some case", () => {
  assert.ok(pinnedSeen > 0, "no case put a pinned entry before a compaction's cut");
});
