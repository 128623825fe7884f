/**
 * convertToLlm (spec section 2.3, DESIGN.md decision 6): every role, and summaries inserted into
 * their context templates byte for byte.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { convertToLlm } from "../../src/messages/convert.js";
import type {
  AgentMessage,
  BashExecutionMessage,
  FileMentionMessage,
  PythonExecutionMessage,
  UserMessage,
} from "../../src/format/message-types.js";
import { assistantMsg, image, T0, toolResultMsg, userMsg } from "../helpers/session-builders.js";

const only = (m: AgentMessage) => {
  const out = convertToLlm([m]);
  assert.equal(out.length, 1);
  return out[0];
};
const textOf = (m: AgentMessage): string => {
  const out = only(m) as UserMessage;
  assert.equal(out.role, "user");
  assert.ok(Array.isArray(out.content));
  assert.equal(out.content.length, 1);
  const [block] = out.content;
  assert.equal(block.type, "text");
  return block.type === "text" ? block.text : "";
};
/** The text between the template's `<summary>` line and its `</summary>` line. */
const insideSummary = (text: string): string => {
  const open = "<summary>\n";
  const close = "\n</summary>";
  const start = text.indexOf(open);
  const end = text.lastIndexOf(close);
  assert.ok(start >= 0 && end > start, `template has <summary> lines: ${JSON.stringify(text)}`);
  return text.slice(start + open.length, end);
};

const bash = (over: Partial<BashExecutionMessage> = {}): BashExecutionMessage => ({
  role: "bashExecution",
  command: "ls",
  output: "a\nb",
  exitCode: 0,
  cancelled: false,
  truncated: false,
  timestamp: T0 + 5,
  ...over,
});

describe("convertToLlm", () => {
  it("passes user and assistant messages through unchanged and keeps order", () => {
    const u = userMsg("hi");
    const a = assistantMsg("hello");
    const out = convertToLlm([u, a]);
    assert.equal(out[0], u);
    assert.equal(out[1], a);
  });

  it("passes a tool result through; a pruned one keeps only its text, images dropped", () => {
    const t = toolResultMsg("full output", [image()]);
    assert.equal(only(t), t);
    const pruned = { ...toolResultMsg("[pruned] ", [image()]), content: [{ type: "text" as const, text: "[pruned] " }, image(), { type: "text" as const, text: "see archive" }], prunedAt: T0 };
    const out = only(pruned);
    assert.equal(out.role, "toolResult");
    assert.deepEqual(out.content, [{ type: "text", text: "[pruned] see archive" }]);
    assert.equal((out as { toolCallId: string }).toolCallId, "call_1");
    const imageOnly = { ...toolResultMsg("", [image()]), content: [image()], prunedAt: T0 };
    const placeholder = only(imageOnly).content as { type: string; text: string }[];
    assert.equal(placeholder.length, 1);
    assert.equal(placeholder[0].type, "text");
    assert.ok(placeholder[0].text.length > 0);
    // the original message is not modified
    assert.equal(pruned.content.length, 3);
  });

  it("bash runs become user text: command, fenced output, exit code or cancel note, truncation", () => {
    assert.equal(textOf(bash()), "Ran `ls`\n```\na\nb\n```");
    assert.equal(textOf(bash({ output: "" })), "Ran `ls`\n(no output)");
    assert.equal(textOf(bash({ exitCode: 2 })), "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2");
    assert.equal(textOf(bash({ exitCode: null })), "Ran `ls`\n```\na\nb\n```");
    assert.equal(textOf(bash({ cancelled: true, exitCode: 130 })), "Ran `ls`\n```\na\nb\n```\n\n(command cancelled)");
    assert.match(textOf(bash({ truncated: true, fullOutputPath: "/tmp/out.txt" })), /\[Output truncated\. Full output: \/tmp\/out\.txt\]$/);
    assert.equal((only(bash()) as UserMessage).timestamp, T0 + 5);
  });

  it("drops bash and python runs excluded from context", () => {
    assert.deepEqual(convertToLlm([bash({ excludeFromContext: true })]), []);
    const py: PythonExecutionMessage = { role: "pythonExecution", code: "x", output: "", cancelled: false, truncated: false, timestamp: T0, excludeFromContext: true };
    assert.deepEqual(convertToLlm([py, userMsg("kept")]).map((m) => m.role), ["user"]);
  });

  it("python runs become user text with the code in a python fence and the output labelled", () => {
    const text = textOf({ role: "pythonExecution", code: "print(6*7)", output: "42", exitCode: 0, cancelled: false, truncated: false, timestamp: T0 });
    assert.match(text, /```python\nprint\(6\*7\)\n```/);
    assert.match(text, /Output:\n```\n42\n```/);
    assert.match(textOf({ role: "pythonExecution", code: "x", output: "", exitCode: 1, cancelled: false, truncated: false, timestamp: T0 }), /code 1/);
  });

  it("custom and legacy hookMessage become user messages; blocks (with images) pass through", () => {
    const custom = { role: "custom", customType: "note", content: "remember this", display: true, timestamp: T0 } as const;
    assert.equal(textOf(custom), "remember this");
    assert.equal(textOf({ ...custom, role: "hookMessage" }), "remember this");
    const blocks = [{ type: "text" as const, text: "see" }, image()];
    assert.deepEqual(only({ ...custom, content: blocks }), { role: "user", content: blocks, timestamp: T0 });
  });

  it("file mentions become one system-reminder text with a file element per file, then the images", () => {
    const m: FileMentionMessage = {
      role: "fileMention",
      files: [
        { path: "src/a.ts", content: "export const a = 1;" },
        { path: "big.log", content: "", skippedReason: "tooLarge", byteSize: 9_000_000 },
        { path: "pic.png", content: "", image: image("cGljdHVyZQ==") },
      ],
      timestamp: T0,
    };
    const out = only(m) as UserMessage;
    assert.ok(Array.isArray(out.content));
    const [first, ...rest] = out.content;
    assert.equal(first.type, "text");
    const text = first.type === "text" ? first.text : "";
    assert.match(text, /^<system-reminder>\n[\s\S]*\n<\/system-reminder>$/);
    assert.match(text, /<file path="src\/a\.ts">\nexport const a = 1;\n<\/file>/);
    assert.match(text, /<file path="big\.log">[^<]*too large[^<]*<\/file>/);
    assert.equal(text.match(/<file /g)?.length, 3);
    assert.deepEqual(rest, [image("cGljdHVyZQ==")]);
  });

  it("drops roles it does not know", () => {
    assert.deepEqual(convertToLlm([{ role: "mystery", timestamp: T0 } as unknown as AgentMessage]), []);
  });
});

describe("summary templates", () => {
  // Two-space indents, a trailing newline, runs of blank lines, a tab, CR and a NBSP: every one
  // of these was altered by the reference's template normalizer.
  const awkward = "## Goal\n- item\n  - nested  \n    - deeper\n\n\n\nDone.\r\n\tTabbed\u00a0space\n";

  it("a compaction summary is inserted byte for byte; shortSummary is not sent", () => {
    const text = textOf({ role: "compactionSummary", summary: awkward, shortSummary: "SHORT-ONLY", tokensBefore: 10, timestamp: T0 });
    assert.equal(insideSummary(text), awkward);
    assert.ok(text.indexOf("<summary>") > 0, "a preface comes before the summary");
    assert.equal(text.includes("SHORT-ONLY"), false);
  });

  it("a branch summary is inserted byte for byte after its preface", () => {
    const text = textOf({ role: "branchSummary", summary: awkward, fromId: "abc", timestamp: T0 + 1 });
    assert.equal(insideSummary(text), awkward);
    assert.ok(text.indexOf("<summary>") > 0);
    assert.equal((only({ role: "branchSummary", summary: "s", fromId: "x", timestamp: T0 + 1 }) as UserMessage).timestamp, T0 + 1);
  });

  it("the two templates differ, so the model can tell a compaction from a branch summary", () => {
    const c = textOf({ role: "compactionSummary", summary: "S", tokensBefore: 1, timestamp: T0 });
    const b = textOf({ role: "branchSummary", summary: "S", fromId: "x", timestamp: T0 });
    assert.notEqual(c, b);
  });
});
