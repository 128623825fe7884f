/**
 * Issue 19, item 13: session files of other agents (Claude Code, Codex) are recognized and named
 * when bonsai refuses them. The sample lines are made up, in the shape those tools write.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { foreignSessionFormat } from "../../src/format/foreign.js";
import { runBonsai } from "../helpers/cli.js";
import { tempDir } from "../helpers/session-builders.js";

const { dir, cleanup } = tempDir();
after(cleanup);

const claudeSummary = { type: "summary", summary: "Fixing the login form", leafUuid: "7d0c1f9e-2b1a-4c55-9a7e-1f3b2c4d5e6f" };
const claudeUser = {
  parentUuid: null,
  isSidechain: false,
  userType: "external",
  cwd: "/home/dev/shop",
  sessionId: "3f2a9c1e-8b7d-4e6f-a5c4-b3a2918f7e6d",
  version: "1.0.51",
  type: "user",
  message: { role: "user", content: "why does the login form reset?" },
  uuid: "a1b2c3d4-e5f6-4a1b-8c2d-3e4f5a6b7c8d",
  timestamp: "2025-07-01T10:00:00.000Z",
};
// Claude Code starts a file with this line when its first act was a file snapshot (issue 24, item 7)
const claudeSnapshot = {
  type: "file-history-snapshot",
  messageId: "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
  snapshot: { messageId: "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", trackedFileBackups: {}, timestamp: "2026-10-01T10:00:00.000Z" },
  isSnapshotUpdate: false,
};
const codexMeta = {
  timestamp: "2025-09-12T08:30:00.000Z",
  type: "session_meta",
  payload: { id: "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e", timestamp: "2025-09-12T08:30:00.000Z", cwd: "/home/dev/shop", originator: "codex_cli_rs", cli_version: "0.34.0" },
};
const codexItem = { timestamp: "2025-09-12T08:30:05.000Z", type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "list the tests" }] } };
const codexOld = { id: "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e", timestamp: "2025-05-02T08:30:00.000Z", instructions: null };

describe("foreignSessionFormat", () => {
  it("names Claude Code and Codex lines, and nothing else", () => {
    assert.equal(foreignSessionFormat(claudeSummary), "Claude Code");
    assert.equal(foreignSessionFormat(claudeUser), "Claude Code");
    assert.equal(foreignSessionFormat(claudeSnapshot), "Claude Code");
    assert.equal(foreignSessionFormat({ type: "file-history-snapshot" }), undefined);
    assert.equal(foreignSessionFormat({ type: "queue-operation", operation: "enqueue", timestamp: "2026-10-01T10:00:00.000Z", sessionId: "3f2a9c1e", content: "next" }), "Claude Code");
    assert.equal(foreignSessionFormat({ type: "custom-title", customTitle: "login fix", sessionId: "3f2a9c1e" }), "Claude Code");
    assert.equal(foreignSessionFormat({ type: "queue-operation" }), undefined);
    assert.equal(foreignSessionFormat(codexMeta), "Codex");
    assert.equal(foreignSessionFormat(codexItem), "Codex");
    assert.equal(foreignSessionFormat(codexOld), "Codex");
    assert.equal(foreignSessionFormat({ type: "session", id: "x" }), undefined);
    assert.equal(foreignSessionFormat({ type: "user", text: "hi" }), undefined);
    assert.equal(foreignSessionFormat([1, 2]), undefined);
  });
});

describe("bonsai on another agent's session", () => {
  const write = (name: string, lines: unknown[]) => {
    const file = join(dir, name);
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    return file;
  };
  for (const [name, lines, format] of [
    ["claude.jsonl", [claudeSummary, claudeUser], "Claude Code"],
    ["claude-snapshot.jsonl", [claudeSnapshot, claudeUser], "Claude Code"],
    ["codex.jsonl", [codexMeta, codexItem], "Codex"],
  ] as const) {
    it(`info, tree and copy name a ${format} session`, async () => {
      const file = write(name, [...lines]);
      for (const args of [["info", file], ["tree", file], ["copy", file, join(dir, "out")], ["ls", file]]) {
        const run = await runBonsai(args);
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, new RegExp(`^bonsai: .*${name}(:1)?: this is a ${format} session, not a pi or oh-my-pi session`), run.stderr);
        assert.equal(run.stderr.trim().split("\n").length, 1);
      }
    });
  }
});
