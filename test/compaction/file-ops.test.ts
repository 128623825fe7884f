/**
 * File-operation tracking (spec 6.4, 12.6; DESIGN.md decision 6 layout).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  addFileLists,
  computeFileLists,
  createFileOps,
  extractFileOpsFromMessage,
  formatFileOperations,
  stripFileOperations,
} from "../../src/compaction/file-ops.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";

const assistantCalling = (...calls: { name: string; args?: Record<string, unknown> }[]) => messageOf(a("", { calls }));

describe("extractFileOpsFromMessage", () => {
  it("records read, write and edit calls with a non-empty string path, verbatim", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage(
      assistantCalling(
        { name: "read", args: { path: "./src/../src/a.ts" } },
        { name: "write", args: { path: "/abs/b.ts" } },
        { name: "edit", args: { path: "c.ts", oldText: "x" } },
      ),
      ops,
    );
    assert.deepEqual([...ops.read], ["./src/../src/a.ts"]);
    assert.deepEqual([...ops.written], ["/abs/b.ts"]);
    assert.deepEqual([...ops.edited], ["c.ts"]);
  });

  it("ignores other tools, missing or empty or non-string paths, and non-assistant messages", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage(
      assistantCalling(
        { name: "bash", args: { command: "cat x", path: "x" } },
        { name: "grep", args: { path: "src" } },
        { name: "read", args: {} },
        { name: "read", args: { path: "" } },
        { name: "edit", args: { path: 42 } },
        { name: "READ_NOTHING", args: { path: "case.ts" } },
        { name: "str_replace_editor", args: { path: "no-command.ts" } },
      ),
      ops,
    );
    extractFileOpsFromMessage(messageOf(u("read the file src/a.ts")), ops);
    extractFileOpsFromMessage(messageOf(tr("ok", "read")), ops);
    assert.deepEqual(ops, createFileOps());
  });

  it("recognizes other agents' tool names and argument names (OpenClaw, Claude-Code-style, editor tools)", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage(
      assistantCalling(
        { name: "Read", args: { file_path: "/repo/src/read.ts" } },
        { name: "view", args: { filePath: "docs/view.md" } },
        { name: "Write", args: { file_path: "/repo/src/new.ts", content: "x" } },
        { name: "create", args: { filename: "notes.txt" } },
        { name: "Edit", args: { file_path: "/repo/src/edit.ts", old_string: "a", new_string: "b" } },
        { name: "MultiEdit", args: { file_path: "/repo/src/multi.ts", edits: [] } },
        { name: "str_replace", args: { path: "src/replace.ts" } },
        { name: "str_replace_based_edit_tool", args: { command: "view", path: "src/seen.ts" } },
        { name: "str_replace_editor", args: { command: "create", path: "src/made.ts" } },
        { name: "str_replace_editor", args: { command: "insert", path: "src/inserted.ts" } },
      ),
      ops,
    );
    assert.deepEqual([...ops.read].sort(), ["/repo/src/read.ts", "docs/view.md", "src/seen.ts"]);
    assert.deepEqual([...ops.written].sort(), ["/repo/src/new.ts", "notes.txt", "src/made.ts"]);
    assert.deepEqual([...ops.edited].sort(), ["/repo/src/edit.ts", "/repo/src/multi.ts", "src/inserted.ts", "src/replace.ts"]);
  });

  it("prefers `path` when a call names several files, as the reference reads it", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage(assistantCalling({ name: "read", args: { path: "a.ts", file_path: "b.ts" } }), ops);
    assert.deepEqual([...ops.read], ["a.ts"]);
  });

  it("tolerates assistant content that is not an array (damaged files)", () => {
    const ops = createFileOps();
    extractFileOpsFromMessage({ role: "assistant", content: "text" } as unknown as AgentMessage, ops);
    assert.equal(ops.read.size, 0);
  });
});

describe("computeFileLists", () => {
  it("modified = edited or written; read = read and not modified; both sorted", () => {
    const ops = createFileOps();
    for (const p of ["z.ts", "a.ts", "shared.ts", "B.ts"]) ops.read.add(p);
    ops.edited.add("shared.ts");
    ops.edited.add("m.ts");
    ops.written.add("c.ts");
    ops.written.add("m.ts");
    assert.deepEqual(computeFileLists(ops), { readFiles: ["B.ts", "a.ts", "z.ts"], modifiedFiles: ["c.ts", "m.ts", "shared.ts"] });
  });

  it("addFileLists seeds modified files as edited and skips malformed values", () => {
    const ops = createFileOps();
    addFileLists(ops, { readFiles: ["r.ts", 7 as unknown as string], modifiedFiles: ["m.ts"] });
    addFileLists(ops, { readFiles: "nope" as unknown as string[] });
    addFileLists(ops, undefined);
    assert.deepEqual([...ops.read], ["r.ts"]);
    assert.deepEqual([...ops.edited], ["m.ts"]);
    assert.equal(ops.written.size, 0);
  });
});

describe("formatFileOperations (decision 6)", () => {
  it("a blank line, <read-files> one path per line, a blank line, <modified-files>", () => {
    assert.equal(
      formatFileOperations(["a.md", "b.md"], ["c.ts"]),
      "\n\n<read-files>\na.md\nb.md\n</read-files>\n\n<modified-files>\nc.ts\n</modified-files>",
    );
  });

  it("leaves out an empty list, and gives nothing for none", () => {
    assert.equal(formatFileOperations([], ["c.ts"]), "\n\n<modified-files>\nc.ts\n</modified-files>");
    assert.equal(formatFileOperations(["a.md"], []), "\n\n<read-files>\na.md\n</read-files>");
    assert.equal(formatFileOperations([], []), "");
  });
});

describe("stripFileOperations", () => {
  const body = "## Goal\nfix <read-files> handling\n\n## Next Steps\n1. test";

  it("undoes formatFileOperations for every combination of lists", () => {
    for (const [read, modified] of [
      [["a.md"], ["c.ts"]],
      [[], ["c.ts", "d.ts"]],
      [["a.md"], []],
      [[], []],
    ]) {
      assert.equal(stripFileOperations(body + formatFileOperations(read, modified)), body);
    }
  });

  it("reads oh-my-pi's glued layout with literal \\n separators", () => {
    const omp = `${body}<read-files>a.md\\nb.md</read-files><modified-files>c.ts</modified-files>\n`;
    assert.equal(stripFileOperations(omp), body);
  });

  it("leaves a summary without trailing tags unchanged, tags inside the text included", () => {
    const text = "Mentions <modified-files>\nx\n</modified-files> in the middle.\n\nThen more.  ";
    assert.equal(stripFileOperations(text), text);
    assert.equal(stripFileOperations("No prior history."), "No prior history.");
  });
});
