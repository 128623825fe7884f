/**
 * The message an entry stands for in a context, as every dialect reads it (format/dialects/):
 * messages as written, custom messages, non-empty branch summaries, and a compaction's summary.
 * Which entries a context holds, and what a dialect does to them after, is the dialect's rule.
 */
import type {
  AgentMessage,
  BranchSummaryMessage,
  CompactionSummaryMessage,
  CustomMessage,
} from "./message-types.js";
import type {
  BranchSummaryEntry,
  CompactionEntry,
  CustomMessageEntry,
  ModelChangeEntry,
  ModelRef,
  SessionEntry,
} from "./entry-types.js";

export const toMs = (iso: string): number => new Date(iso).getTime();

export function customMessageFromEntry(entry: CustomMessageEntry): CustomMessage {
  return {
    role: "custom",
    customType: entry.customType,
    content: entry.content,
    display: entry.display,
    details: entry.details,
    timestamp: toMs(entry.timestamp),
  };
}

export function branchSummaryMessageFromEntry(entry: BranchSummaryEntry): BranchSummaryMessage {
  return { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: toMs(entry.timestamp) };
}

export function compactionSummaryMessageFromEntry(entry: CompactionEntry): CompactionSummaryMessage {
  const message: CompactionSummaryMessage = {
    role: "compactionSummary",
    summary: entry.summary,
    tokensBefore: entry.tokensBefore,
    timestamp: toMs(entry.timestamp),
  };
  if (entry.shortSummary !== undefined) message.shortSummary = entry.shortSummary;
  return message;
}

/**
 * The message an entry contributes to the context, if any: messages, custom messages and
 * non-empty branch summaries. Compactions are handled by the context rule itself.
 */
export function messageFromEntry(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message":
      return customMessageFromEntry(entry);
    case "branch_summary":
      return entry.summary ? branchSummaryMessageFromEntry(entry) : undefined;
    default:
      return undefined;
  }
}

/** The messages of `path[from…to)`, in order, each as messageFromEntry makes it (entries without one left out). */
export function messagesOfPath(path: readonly SessionEntry[], from: number, to: number): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let i = from; i < to; i++) {
    const message = messageFromEntry(path[i]);
    if (message) messages.push(message);
  }
  return messages;
}

/** The model a model_change selects for the default role, in either spelling. */
export function modelFromChange(entry: ModelChangeEntry): ModelRef | undefined {
  if (entry.role !== undefined && entry.role !== "default") return undefined;
  if (typeof entry.provider === "string" && typeof entry.modelId === "string") {
    return { provider: entry.provider, modelId: entry.modelId };
  }
  if (typeof entry.model === "string") return modelFromSlashed(entry.model);
  return undefined;
}

/** "provider/model-id" as a model reference (the id may hold more slashes). */
export function modelFromSlashed(model: string): ModelRef | undefined {
  const slash = model.indexOf("/");
  return slash > 0 ? { provider: model.slice(0, slash), modelId: model.slice(slash + 1) } : undefined;
}

/**
 * What an entry says, as text: its message's text blocks joined (a string content as it is), a
 * summary's summary, a shell run's command and output; "" for entries that hold no message. A
 * pruned tool result reads as its original when `archived` holds it (the archive of pruned output).
 */
export function entryText(entry: SessionEntry, archived?: ReadonlyMap<string, readonly { type: string; text?: string }[]>): string {
  const message = messageFromEntry(entry);
  if (!message) return "";
  if (message.role === "compactionSummary" || message.role === "branchSummary") return message.summary;
  if (message.role === "bashExecution") return `$ ${message.command}\n${message.output}`;
  if (!("content" in message)) return "";
  const original = message.role === "toolResult" && message.prunedAt !== undefined ? archived?.get(entry.id) : undefined;
  const content = (original ?? message.content) as string | readonly { type: string; text?: string }[];
  if (typeof content === "string") return content;
  return content.flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : [])).join("\n");
}
