/**
 * Conformance with the reference implementation: every shared case, compared with the answers
 * the reference computed on the same files (DESIGN.md section 7).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { collectEntriesForBranchSummary, prepareBranchEntries } from "../src/compaction/branch-summary.js";
import { estimateTokens } from "../src/compaction/tokens.js";
import { SessionManager } from "../src/session/manager.js";
import { flattenTree } from "../src/session/tree.js";
import type { FileLists, SessionEntry } from "../src/session/types.js";
import { conformanceCases, REAL_SESSION, realGolden } from "./helpers/fixtures.js";

const cases = conformanceCases();

describe("conformance corpus", () => {
  it("has cases to check", () => assert.ok(cases.length >= 12, `found ${cases.length} cases`));

  for (const { name, file, golden } of cases) {
    describe(name, () => {
      const session = SessionManager.open(file, { readOnly: true });

      it("reads every entry without issues", () => {
        assert.equal(session.getEntries().length, golden.entryCount);
        assert.deepEqual(session.getLoadIssues(), []);
        assert.equal(session.getLeafId(), golden.leafId);
      });

      it(`builds the reference context at each of ${golden.contexts.length} leaves`, () => {
        for (const expected of golden.contexts) {
          const context = session.buildSessionContext(expected.leafId);
          assert.equal(context.thinkingLevel, expected.thinkingLevel, `thinking level at ${expected.leafId}`);
          assert.deepEqual(context.model, expected.model, `model at ${expected.leafId}`);
          assert.deepEqual(context.messages, expected.messages, `messages at ${expected.leafId}`);
        }
      });

      it("gives the reference tree, depth first, with labels", () => {
        const flat = flattenTree(session.getTree()).map(({ node }) => ({
          id: node.entry.id,
          parentId: node.entry.parentId,
          children: node.children.map((c) => c.entry.id),
          label: node.label ?? null,
        }));
        assert.deepEqual(flat, golden.tree);
      });

      it("estimates tokens like the reference", () => {
        const messages = session.buildSessionContext(golden.contexts[0].leafId).messages;
        assert.deepEqual(messages.map(estimateTokens), golden.estimates);
      });
    });
  }
});

describe("real v1 fixture after migration", () => {
  const golden = realGolden();
  const session = SessionManager.open(REAL_SESSION, { readOnly: true });

  it("migrates every entry into one linear branch", () => {
    assert.equal(session.getEntries().length, golden.entryCount);
    const branch = session.getBranch();
    assert.equal(branch.length, golden.branchLength);
    const types = branch.map((e) => (e.type === "message" ? `message:${e.message.role}` : e.type));
    assert.deepEqual(types, golden.entryTypes);
  });

  it("builds the reference context", () => {
    const context = session.buildSessionContext();
    assert.equal(context.thinkingLevel, golden.thinkingLevel);
    assert.deepEqual(context.model, golden.model);
    assert.deepEqual(context.messages, golden.messages);
  });

  it("estimates every message like the reference", () => {
    assert.deepEqual(session.buildSessionContext().messages.map(estimateTokens), golden.estimates);
  });
});

/**
 * Branch summaries on every case: collection, then preparation at budgets 0, 2000 and 20000.
 * The golden file lists are the raw sets of the preparation (`readFiles` is every file read,
 * even when it was also modified). Decision 9 makes bonsai also carry the lists of non-extension
 * compactions in the range, so where such a compaction lies there, bonsai's sets must be the
 * reference's plus exactly those compaction files; everywhere else they must be equal.
 */
describe("conformance: branch summaries", () => {
  const sorted = (set: Iterable<string>) => [...new Set(set)].sort();

  /** Files that decision 9 adds: the details of non-extension compactions among `entries`. */
  function compactionFiles(entries: readonly SessionEntry[]): FileLists {
    const readFiles: string[] = [];
    const modifiedFiles: string[] = [];
    for (const entry of entries) {
      if (entry.type !== "compaction" || entry.fromHook === true || entry.fromExtension === true) continue;
      const details = entry.details as Partial<FileLists> | undefined;
      readFiles.push(...(details?.readFiles ?? []));
      modifiedFiles.push(...(details?.modifiedFiles ?? []));
    }
    return { readFiles, modifiedFiles };
  }

  for (const { name, file, golden } of cases) {
    it(`${name}: ${golden.branchSummaries.length} moves x 3 budgets`, (t) => {
      const session = SessionManager.open(file, { readOnly: true });
      let exact = 0;
      let withCompactionFiles = 0;
      for (const expected of golden.branchSummaries) {
        const where = `${name} ${expected.oldLeafId} -> ${expected.targetId}`;
        const collected = collectEntriesForBranchSummary(session, expected.oldLeafId, expected.targetId);
        assert.equal(collected.commonAncestorId, expected.commonAncestorId, `common ancestor, ${where}`);
        assert.deepEqual(
          collected.entries.map((e) => e.id),
          expected.entryIds,
          `collected entries, ${where}`,
        );
        const added = compactionFiles(collected.entries);
        for (const budget of expected.budgets) {
          const at = `${where}, budget ${budget.budget}`;
          const prepared = prepareBranchEntries(collected.entries, budget.budget);
          assert.equal(prepared.messages.length, budget.messageCount, `message count, ${at}`);
          assert.equal(prepared.totalTokens, budget.totalTokens, `total tokens, ${at}`);
          const read = sorted(prepared.fileOps.read);
          const modified = sorted([...prepared.fileOps.edited, ...prepared.fileOps.written]);
          assert.deepEqual(read, sorted([...budget.readFiles, ...added.readFiles]), `read files, ${at}`);
          assert.deepEqual(modified, sorted([...budget.modifiedFiles, ...added.modifiedFiles]), `modified files, ${at}`);
          if (added.readFiles.length + added.modifiedFiles.length > 0) withCompactionFiles++;
          if (
            JSON.stringify([read, modified]) === JSON.stringify([sorted(budget.readFiles), sorted(budget.modifiedFiles)])
          ) {
            exact++;
          }
        }
      }
      const total = golden.branchSummaries.length * 3;
      t.diagnostic(`${name}: ${exact}/${total} budgets equal to the reference; ${withCompactionFiles} carry compaction files`);
    });
  }
});
