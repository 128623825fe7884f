/**
 * A session whose lines JSON.parse and JSON.stringify do not give back: numbers beyond a double
 * (1234567890123456789, 1e400), 1.0, `\u00e9` and `\/` escapes, unusual key order and spacing,
 * keys written twice, and a header of the same kind. A rewrite must copy every such line it does
 * not change byte for byte (docs/ARCHITECTURE.md, storage decisions). With `protectTokens: 1`
 * pruning takes exactly one tool result, `tr0`, written the way pi writes it; `side` is a branch
 * off the path that pruning never reads.
 */
import type { SessionEntry } from "../../src/format/entry-types.js";

const T = "2026-01-01T00:00:00.000Z";
const USAGE = `"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}`;

/** Prunes `tr0` and nothing else. */
export const PRUNE_ONE = { protectTokens: 1, minimumSavings: 0 } as const;

/** The pruned entry's id. */
export const PRUNED_ID = "tr0";

export function oddSessionLines(id = "odd-1"): string[] {
  const pruned: SessionEntry = {
    type: "message",
    id: PRUNED_ID,
    parentId: "a1",
    timestamp: T,
    message: { role: "toolResult", toolCallId: "tc0", toolName: "bash", content: [{ type: "text", text: "old output ".repeat(800) }], isError: false, timestamp: 3 },
  };
  return [
    `{"type":"session", "version":3,"id":"${id}","timestamp":"${T}","cwd":"/tmp","extra":1.0}`,
    `{"id":"u1","type":"message",  "parentId":null,"timestamp":"${T}","message":{"content":"caf\\u00e9 \\/ \\u00e9t\\u00e9","role":"user","timestamp":1}}`,
    `{"type":"message","id":"a1","parentId":"u1","timestamp":"${T}","message":{"role":"assistant","content":[{"type":"toolCall","id":"tc0","name":"bash","arguments":{"n":1.0}}],"api":"anthropic-messages","provider":"anthropic","model":"m",${USAGE},"stopReason":"toolUse","timestamp":2,"big":1234567890123456789}}`,
    JSON.stringify(pruned),
    `{"type":"custom","customType":"odd","data":{"big":1234567890123456789,"huge":1e400,"one":1.0,"k":1,"k":2},"id":"c1","parentId":"tr0","timestamp":"${T}"}`,
    `{"type":"message","id":"a2","parentId":"c1","timestamp":"${T}","message":{"role":"assistant","content":[{"type":"toolCall","id":"tc1","name":"bash","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"m",${USAGE},"stopReason":"toolUse","timestamp":4}}`,
    `{"type":"message","id":"tr1","parentId":"a2","timestamp":"${T}","message":{"role":"toolResult","toolCallId":"tc1","toolName":"bash","content":[{"type":"text","text":"recent \\u00e9 ${"y".repeat(400)}"}],"details":{"exit":0.0,"n":1e400},"isError":false,"timestamp":5}}`,
    `{ "type" : "label" , "id":"l1","parentId":"tr1","timestamp":"${T}","targetId":"u1","label":"start"}`,
    JSON.stringify({ type: "message", id: "side", parentId: "u1", timestamp: T, message: { role: "user", content: "side branch", timestamp: 6 } }),
    `{"type":"message","id":"u2","parentId":"l1","timestamp":"${T}","message":{"role":"user","content":"last","content":"dup \\u00e9","timestamp":7}}`,
  ];
}

/** The pruned entry's line written the way JSON.stringify does not: restoring its content alone would not give it back. */
export const ODD_PRUNED_LINE = `{"type":"message","id":"${PRUNED_ID}","parentId":"a1","timestamp":"${T}","message":{"role":"toolResult","toolCallId":"tc0","toolName":"bash","content":[{"type":"text","text":"old \u00e9 ${"output ".repeat(800)}"}],"details":{"pid":1234567890123456789,"ratio":1.0},"isError":false, "timestamp":3}}`;

/** The index of the pruned entry's line in oddSessionLines(). */
export const PRUNED_LINE = 3;

/** Lines of a JSONL text (no empty last line). */
export const linesOf = (text: string): string[] => text.split("\n").slice(0, text.endsWith("\n") ? -1 : undefined);
