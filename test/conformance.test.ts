/**
 * Conformance with the reference implementation: every shared case, compared with the answers
 * the reference computed on the same files (DESIGN.md section 7).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { estimateTokens } from "../src/compaction/tokens.js";
import { SessionManager } from "../src/session/manager.js";
import { flattenTree } from "../src/session/tree.js";
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
