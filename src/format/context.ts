/**
 * What the model sees at a leaf: the path from the root, with the latest compaction on it
 * replacing everything before its first kept entry by its summary (spec section 3).
 */
import type {
  AgentMessage,
  BranchSummaryMessage,
  CompactionSummaryMessage,
  CustomMessage,
} from "./message-types.js";
import { type EntryLookup, type PathProblem, pathToRoot } from "./path.js";
import type {
  BranchSummaryEntry,
  CompactionEntry,
  CustomMessageEntry,
  ModelChangeEntry,
  ModelRef,
  SessionContext,
  SessionEntry,
} from "./entry-types.js";

const toMs = (iso: string): number => new Date(iso).getTime();

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
 * non-empty branch summaries. Compactions are handled by the context builder itself.
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

/** The model a model_change selects for the default role, in either dialect. */
export function modelFromChange(entry: ModelChangeEntry): ModelRef | undefined {
  if (entry.role !== undefined && entry.role !== "default") return undefined;
  if (typeof entry.provider === "string" && typeof entry.modelId === "string") {
    return { provider: entry.provider, modelId: entry.modelId };
  }
  if (typeof entry.model === "string") {
    const slash = entry.model.indexOf("/");
    if (slash > 0) return { provider: entry.model.slice(0, slash), modelId: entry.model.slice(slash + 1) };
  }
  return undefined;
}

const EMPTY_CONTEXT = (): SessionContext => ({ messages: [], thinkingLevel: "off", model: null });

/**
 * Builds the context of `leafId`. `null` means "before the first entry" (empty context); an
 * unknown or undefined leaf falls back to the last entry, as the reference does.
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  lookup?: EntryLookup,
  onProblem?: (problem: PathProblem) => void,
): SessionContext {
  if (leafId === null) return EMPTY_CONTEXT();
  let getEntry = lookup;
  if (!getEntry) {
    const byId = new Map<string, SessionEntry>();
    for (const entry of entries) byId.set(entry.id, entry);
    getEntry = (id) => byId.get(id);
  }
  const leaf = (leafId ? getEntry(leafId) : undefined) ?? entries[entries.length - 1];
  if (!leaf) return EMPTY_CONTEXT();
  return contextFromPath(pathToRoot(leaf, getEntry, onProblem));
}

/** The context of a root-first path. */
export function contextFromPath(path: readonly SessionEntry[]): SessionContext {
  let thinkingLevel = "off";
  let model: ModelRef | null = null;
  let compactionIndex = -1;
  for (let i = 0; i < path.length; i++) {
    const entry = path[i];
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = modelFromChange(entry) ?? model;
    else if (entry.type === "message" && entry.message.role === "assistant") {
      model = { provider: entry.message.provider, modelId: entry.message.model };
    } else if (entry.type === "compaction") compactionIndex = i;
  }

  const messages: AgentMessage[] = [];
  const emit = (entry: SessionEntry) => {
    const message = messageFromEntry(entry);
    if (message) messages.push(message);
  };
  if (compactionIndex === -1) {
    for (const entry of path) emit(entry);
    return { messages, thinkingLevel, model };
  }

  const compaction = path[compactionIndex] as CompactionEntry;
  messages.push(compactionSummaryMessageFromEntry(compaction));
  let kept = false;
  for (let i = 0; i < compactionIndex; i++) {
    if (path[i].id === compaction.firstKeptEntryId) kept = true;
    if (kept) emit(path[i]);
  }
  for (let i = compactionIndex + 1; i < path.length; i++) emit(path[i]);
  return { messages, thinkingLevel, model };
}
