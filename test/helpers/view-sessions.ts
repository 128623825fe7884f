/**
 * Sessions for the tests of the session page (test/view/): the example with the things it lacks
 * made by bonsai itself (old tool output pruned into the archive, a compaction by the offline
 * summarizer, a turn after it), and a large generated session with branches, a compaction,
 * errors, labels and an image.
 */
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compactSession } from "../../src/ops/compact.js";
import { pruneToolOutput } from "../../src/ops/prune-report.js";
import { SessionManager } from "../../src/session/manager.js";
import { extractiveSummarizer } from "../../src/summarizer/extractive.js";
import { ROOT } from "./cli.js";
import { assistantMsg, usage, userMsg } from "./session-builders.js";

export const EXAMPLE = join(ROOT, "examples/coding-session.jsonl");

/**
 * A copy of the example, pruned and compacted by bonsai, with one more turn after the compaction.
 * Returns its path and the ids of the compaction and the last entry.
 */
export async function compactedExample(dir: string): Promise<{ file: string; compactionId: string; leafId: string }> {
  const file = join(dir, "coding-session.jsonl");
  copyFileSync(EXAMPLE, file);
  await pruneToolOutput(file, { config: { protectTokens: 3000, minimumSavings: 0 } });
  const report = await compactSession(file, { summarizer: extractiveSummarizer(), keepRecentTokens: 4000 });
  if (!report.compactionId) throw new Error("the example did not compact");
  const session = SessionManager.open(file);
  session.appendMessage(userMsg("After the compaction: what is left to do?"));
  const leafId = session.appendMessage(assistantMsg("Only the release notes are left.", { usage: usage(5200, 12) }));
  await session.close();
  return { file, compactionId: report.compactionId, leafId };
}

const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

export interface LargeSession {
  file: string;
  entries: number;
  /** ids on the main line, oldest first */
  mainLine: string[];
  compactionId: string;
  branchTip: string;
  bytes: number;
}

/**
 * A generated session of `turns` turns (user, assistant with a tool call, tool result of about
 * `outputChars` characters), a side branch at turn 10, a compaction halfway, a label, an error
 * and an image; written as JSONL lines at once.
 */
export function largeSession(dir: string, turns: number, outputChars = 1500): LargeSession {
  const file = join(dir, "large.jsonl");
  const lines: string[] = [JSON.stringify({ type: "session", version: 3, id: "large-session", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work/large" })];
  const mainLine: string[] = [];
  let parent: string | null = null;
  let n = 0;
  const time = () => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  const add = (fields: Record<string, unknown>, onMain = true): string => {
    const id = `e${(n++).toString(16).padStart(7, "0")}`;
    lines.push(JSON.stringify({ id, parentId: parent, timestamp: time(), ...fields }));
    if (onMain) mainLine.push(id);
    parent = id;
    return id;
  };
  const filler = (i: number) => `line ${i}: ${"lorem ipsum dolor sit amet ".repeat(Math.ceil(outputChars / 27))}`.slice(0, outputChars);
  let compactionId = "";
  let branchTip = "";
  let tokens = 1000;
  for (let t = 0; t < turns; t++) {
    const user = add({ type: "message", message: { role: "user", content: `Turn ${t}: please look at module${t}.ts`, timestamp: 0 } });
    tokens += 40;
    add({
      type: "message",
      message: {
        ...assistantMsg(`Reading module${t}.ts.`, { usage: usage(tokens, 30) }),
        content: [
          { type: "text", text: `Reading **module${t}.ts**.` },
          { type: "toolCall", id: `call${t}`, name: "read", arguments: { path: `src/module${t}.ts` } },
        ],
        stopReason: "toolUse",
      },
    });
    const isError = t % 97 === 5;
    const content: unknown[] = [{ type: "text", text: isError ? `ENOENT: module${t}.ts not found` : filler(t) }];
    if (t === 3) content.push({ type: "image", mimeType: "image/png", data: PNG_1PX });
    add({ type: "message", message: { role: "toolResult", toolCallId: `call${t}`, toolName: "read", content, isError, timestamp: 0 } });
    tokens += Math.ceil(outputChars / 4);
    if (t === 10) {
      // a side branch off this turn's user message, then back to the main line
      const back: string | null = parent;
      parent = user;
      add({ type: "message", message: userMsg("A different idea for turn 10") }, false);
      branchTip = add({ type: "message", message: assistantMsg("That idea was dropped.") }, false);
      parent = back;
    }
    if (t === 12) add({ type: "label", targetId: user, label: "turn-12" });
    if (t === Math.floor(turns / 2)) {
      const kept = mainLine[mainLine.length - 30];
      compactionId = add({ type: "compaction", summary: `## Goal\nGenerated summary of turns 0-${t}.`, firstKeptEntryId: kept, tokensBefore: tokens, details: { readFiles: [], modifiedFiles: [], summarizer: "generated" } });
      tokens = 3000;
    }
  }
  const text = `${lines.join("\n")}\n`;
  writeFileSync(file, text);
  return { file, entries: lines.length - 1, mainLine, compactionId, branchTip, bytes: Buffer.byteLength(text) };
}
