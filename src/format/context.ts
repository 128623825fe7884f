/**
 * What the model sees at a leaf: the path from the root, with the latest compaction on it
 * replacing everything before its first kept entry by its summary (docs/ARCHITECTURE.md, the
 * context rule). contextSegments is the only place that rule is written: the context built here,
 * the incremental one in session/context-memo.ts and pruning's entriesInContext all ask it.
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

/** The messages of `path[from…to)`, in order, each as messageFromEntry makes it (entries without one left out). */
export function messagesOfPath(path: readonly SessionEntry[], from: number, to: number): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let i = from; i < to; i++) {
    const message = messageFromEntry(path[i]);
    if (message) messages.push(message);
  }
  return messages;
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

/** Where the parts of a context lie on a root-first path; see contextSegments. */
export interface ContextSegments {
  /** index of the latest compaction, whose summary opens the context; -1 when there is none */
  compaction: number;
  /** the kept entries are path[kept .. compaction): none when kept === compaction (always so for -1) */
  kept: number;
}

/**
 * The context rule: which entries of a root-first path are in its context. With no compaction on
 * the path, all of them. Otherwise the latest compaction's summary comes first, then the entries
 * it kept (from the first entry on the path whose id is its firstKeptEntryId, up to the
 * compaction; none when no entry before it has that id), then every entry after it. Entries that
 * carry no message (compactions among the kept ones included) contribute nothing.
 *
 * Nothing before the first kept entry is read (nothing before the compaction when it keeps
 * none), so a caller holding parent links may pass just the path from there: the index's
 * incremental context does (session/context-memo.ts).
 */
export function contextSegments(path: readonly SessionEntry[]): ContextSegments {
  let compaction = path.length - 1;
  while (compaction >= 0 && path[compaction].type !== "compaction") compaction--;
  if (compaction < 0) return { compaction: -1, kept: -1 };
  const firstKeptId = (path[compaction] as CompactionEntry).firstKeptEntryId;
  for (let i = 0; i < compaction; i++) if (path[i].id === firstKeptId) return { compaction, kept: i };
  return { compaction, kept: compaction };
}

/**
 * Appends the messages of the context of `path` (see contextSegments) to `messages` and returns
 * how many entries it converted: the kept ones and those after the compaction.
 */
export function pushContextMessages(path: readonly SessionEntry[], messages: AgentMessage[]): number {
  const { compaction, kept } = contextSegments(path);
  if (compaction >= 0) messages.push(compactionSummaryMessageFromEntry(path[compaction] as CompactionEntry));
  for (let i = kept; i < compaction; i++) pushMessage(path[i], messages);
  for (let i = compaction + 1; i < path.length; i++) pushMessage(path[i], messages);
  return path.length - 1 - kept; // (compaction - kept) kept, (path.length - 1 - compaction) after
}

function pushMessage(entry: SessionEntry, messages: AgentMessage[]): void {
  const message = messageFromEntry(entry);
  if (message) messages.push(message);
}

/** The context of a root-first path. */
export function contextFromPath(path: readonly SessionEntry[]): SessionContext {
  let thinkingLevel = "off";
  let model: ModelRef | null = null;
  for (let i = 0; i < path.length; i++) {
    const entry = path[i];
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = modelFromChange(entry) ?? model;
    else if (entry.type === "message" && entry.message.role === "assistant") {
      model = { provider: entry.message.provider, modelId: entry.message.model };
    }
  }
  const messages: AgentMessage[] = [];
  pushContextMessages(path, messages);
  return { messages, thinkingLevel, model };
}
