/**
 * Linear paths for compaction tests: each builder returns the fields of one entry, and `path()`
 * chains them with ids "e0", "e1", … and parent links, as getBranch() would return them.
 */
import type { AgentMessage, AssistantMessage, ToolCall, ToolResultMessage, Usage } from "../../src/format/message-types.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { iso, T0, usage as makeUsage } from "./session-builders.js";

type Spec = Record<string, unknown> & { type: string };

/** `n` characters of text: ceil(n / 4) estimated tokens. */
export const text = (chars: number, fill = "x"): string => fill.repeat(chars);

export const u = (content: string): Spec => ({ type: "message", message: { role: "user", content, timestamp: T0 } });

export function a(
  content: string,
  options: { calls?: { name: string; args?: Record<string, unknown> }[]; usage?: Usage; stopReason?: AssistantMessage["stopReason"] } = {},
): Spec {
  const blocks: AssistantMessage["content"] = content ? [{ type: "text", text: content }] : [];
  options.calls?.forEach((call, i) => {
    const toolCall: ToolCall = { type: "toolCall", id: `call_${i}`, name: call.name, arguments: call.args ?? {} };
    blocks.push(toolCall);
  });
  const message: AssistantMessage = {
    role: "assistant",
    content: blocks,
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: options.usage ?? makeUsage(0, 0),
    stopReason: options.stopReason ?? (options.calls ? "toolUse" : "stop"),
    timestamp: T0,
  };
  return { type: "message", message };
}

export const tr = (content: string, toolName = "bash", extra: Partial<ToolResultMessage> = {}): Spec => ({
  type: "message",
  message: {
    role: "toolResult",
    toolCallId: "call_0",
    toolName,
    content: [{ type: "text", text: content }],
    isError: false,
    timestamp: T0,
    ...extra,
  } satisfies ToolResultMessage,
});

export const bash = (command: string, output: string): Spec => ({
  type: "message",
  message: { role: "bashExecution", command, output, exitCode: 0, cancelled: false, truncated: false, timestamp: T0 },
});

export const message = (m: AgentMessage): Spec => ({ type: "message", message: m });
export const modelChange = (): Spec => ({ type: "model_change", provider: "openai", modelId: "gpt-5" });
export const thinking = (level = "high"): Spec => ({ type: "thinking_level_change", thinkingLevel: level });
export const label = (targetId: string, name = "mark"): Spec => ({ type: "label", targetId, label: name });
export const custom = (): Spec => ({ type: "custom", customType: "ext.state", data: { n: 1 } });
export const customMessage = (content: string): Spec => ({ type: "custom_message", customType: "ext.note", content, display: true });
export const branchSummary = (summary: string): Spec => ({ type: "branch_summary", fromId: "root", summary });

/** A compaction; `firstKept` is the id ("eN") of its first kept entry. */
export const compaction = (summary: string, firstKept: string, details?: unknown, fromExtension?: boolean): Spec => ({
  type: "compaction",
  summary,
  firstKeptEntryId: firstKept,
  tokensBefore: 1000,
  ...(details !== undefined ? { details } : {}),
  ...(fromExtension !== undefined ? { fromHook: fromExtension, fromExtension } : {}),
});

export function path(...specs: Spec[]): SessionEntry[] {
  return specs.map((spec, i) => ({ ...spec, id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}`, timestamp: iso(i) }) as unknown as SessionEntry);
}

/** The message a `message` spec holds (for appending it to a SessionManager). */
export const messageOf = (spec: Spec): AgentMessage => (spec as unknown as { message: AgentMessage }).message;
