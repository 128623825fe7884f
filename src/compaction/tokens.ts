/**
 * Token accounting: a chars/4 estimate per message (conservative, free), and the provider's
 * reported usage as the anchor for what a request really cost.
 */
import type { AgentMessage, AssistantMessage, ImageContent, TextContent, Usage } from "../format/message-types.js";
import type { SessionEntry } from "../format/entry-types.js";

/** An image attached to a tool result, custom message or file mention counts as 4,800 characters. */
export const IMAGE_CHARS = 4800;

function contentChars(
  content: string | readonly (TextContent | ImageContent | { type: string })[],
  imageChars: number,
): number {
  if (typeof content === "string") return content.length;
  let chars = 0;
  for (const block of content) {
    if (block.type === "text") chars += (block as TextContent).text?.length ?? 0;
    else if (block.type === "image") chars += imageChars;
  }
  return chars;
}

/**
 * Serialized lengths of tool-call arguments, remembered per arguments object. An agent plans a
 * compaction every turn and each plan estimates the same kept messages again; the JSON.stringify
 * of every tool call's arguments is most of that cost, the rest is a few length reads. Keyed by
 * the arguments object rather than the message, so pruning (which replaces a tool result's
 * content) and streaming (which grows text in place and parses arguments into a new object per
 * delta) never see a stale number. Code that edits an arguments object in place must call
 * forgetTokenEstimate.
 */
const argumentChars = new WeakMap<object, number>();

function toolArgumentChars(args: unknown): number {
  if (typeof args !== "object" || args === null) return JSON.stringify(args ?? {}).length;
  let chars = argumentChars.get(args);
  if (chars === undefined) {
    chars = JSON.stringify(args).length;
    argumentChars.set(args, chars);
  }
  return chars;
}

/** Drops what was remembered about a message's tool-call arguments after they were edited in place. */
export function forgetTokenEstimate(message: AgentMessage): void {
  if (message.role !== "assistant") return;
  for (const block of message.content) {
    if (block.type === "toolCall" && typeof block.arguments === "object" && block.arguments !== null) argumentChars.delete(block.arguments);
  }
}

/**
 * Estimated tokens of one message: ceil(chars / 4). Every role counts (the reference counts 0 for
 * python runs and file mentions). User-message images count 0, as in the reference: the estimate
 * must equal the reference's on existing sessions, because cut points are chosen with it and a
 * different cut would change which entries a compaction keeps.
 */
export function estimateTokens(message: AgentMessage): number {
  let chars = 0;
  switch (message.role) {
    case "user":
      chars = contentChars(message.content, 0);
      break;
    case "custom":
    case "hookMessage":
    case "toolResult":
      chars = contentChars(message.content, IMAGE_CHARS);
      break;
    case "assistant":
      // Blocks are read leniently: a stored block missing its field counts 0 instead of throwing.
      for (const block of message.content) {
        if (block.type === "text") chars += block.text?.length ?? 0;
        else if (block.type === "thinking") chars += block.thinking?.length ?? 0;
        else if (block.type === "toolCall") {
          chars += (block.name?.length ?? 0) + toolArgumentChars(block.arguments);
        }
      }
      break;
    case "bashExecution":
      chars = message.command.length + message.output.length;
      break;
    case "pythonExecution":
      chars = message.code.length + message.output.length;
      break;
    case "branchSummary":
    case "compactionSummary":
      chars = message.summary.length;
      break;
    case "fileMention":
      for (const file of message.files) {
        chars += file.path.length + (file.content?.length ?? 0) + (file.image ? IMAGE_CHARS : 0);
      }
      break;
  }
  return Math.ceil(chars / 4);
}

/**
 * Estimated tokens of messages: the sum of estimateTokens over them, the one way every report,
 * trigger and plan adds a context up (docs/ARCHITECTURE.md, decision 3).
 */
export function estimateMessagesTokens(messages: readonly AgentMessage[]): number {
  let total = 0;
  for (const message of messages) total += estimateTokens(message);
  return total;
}

/**
 * Estimated tokens of a text a message carries on its own (a summary, a pruning notice): chars / 4,
 * as estimateTokens counts it inside a message (compaction/chunking.ts estimates prompts more
 * cautiously).
 */
export function messageTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Tokens a request occupied: the reported total, or the sum of its parts. Includes output. */
export function calculateContextTokens(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/** Tokens of the prompt alone (what the estimate of the sent messages should be compared with). */
export function calculatePromptTokens(usage: Usage): number {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  return prompt > 0 ? prompt : calculateContextTokens(usage);
}

/** The usage of a completed (not aborted, not failed) assistant message. */
export function usageOf(message: AgentMessage): Usage | undefined {
  if (message.role !== "assistant") return undefined;
  const assistant = message as AssistantMessage;
  if (assistant.stopReason === "aborted" || assistant.stopReason === "error") return undefined;
  return assistant.usage;
}

export function getLastAssistantUsage(entries: readonly SessionEntry[]): Usage | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry.type !== "message") continue;
    const usage = usageOf(entry.message);
    if (usage) return usage;
  }
  return undefined;
}

export interface ContextTokenEstimate {
  tokens: number;
  usageTokens: number;
  trailingTokens: number;
  lastUsageIndex: number | null;
}

/** Last reported usage plus the estimate of every message after it. */
export function estimateContextTokens(messages: readonly AgentMessage[]): ContextTokenEstimate {
  let lastUsageIndex = -1;
  let usage: Usage | undefined;
  for (let i = messages.length - 1; i >= 0 && !usage; i--) {
    usage = usageOf(messages[i]);
    if (usage) lastUsageIndex = i;
  }
  let trailingTokens = 0;
  for (let i = lastUsageIndex + 1; i < messages.length; i++) trailingTokens += estimateTokens(messages[i]);
  const usageTokens = usage ? calculateContextTokens(usage) : 0;
  return {
    tokens: usageTokens + trailingTokens,
    usageTokens,
    trailingTokens,
    lastUsageIndex: usage ? lastUsageIndex : null,
  };
}

export interface CompactionThreshold {
  enabled: boolean;
  reserveTokens: number;
}

/**
 * True when the context no longer leaves `reserveTokens` free. An unknown window (0 or less)
 * never triggers: the reference compacts on every turn in that case.
 */
export function shouldCompact(contextTokens: number, contextWindow: number, settings: CompactionThreshold): boolean {
  if (!settings.enabled || !(contextWindow > 0)) return false;
  return contextTokens > contextWindow - settings.reserveTokens;
}
