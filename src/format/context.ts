/**
 * What the model sees at a leaf: the path from the root, read by the context rule of the
 * session's dialect (format/dialects/: pi up to 0.86, pi from 0.87, oh-my-pi 18). Everything that
 * builds a context asks its dialect: the context built here, the incremental one in
 * session/context-memo.ts, pruning's entriesInContext and compaction's plan.
 */
import type { AgentMessage } from "./message-types.js";
import { type EntryLookup, type PathProblem, pathToRoot } from "./path.js";
import type { SessionContext, SessionEntry } from "./entry-types.js";
import { DIALECTS, type ContextSegments, type Dialect, dialectOfEntries } from "./dialects/index.js";

export {
  branchSummaryMessageFromEntry,
  compactionSummaryMessageFromEntry,
  customMessageFromEntry,
  messageFromEntry,
  messagesOfPath,
  modelFromChange,
} from "./entry-messages.js";
export type { ContextSegments };

/** The dialect of a path when the caller does not know the session's: read off the path itself. */
export const dialectOfPath = (path: readonly SessionEntry[]): Dialect => DIALECTS[dialectOfEntries(path)];

const EMPTY_CONTEXT = (): SessionContext => ({ messages: [], thinkingLevel: "off", model: null });

/**
 * Builds the context of `leafId` from entries held in memory (their dialect read off them). `null`
 * means "before the first entry" (empty context); an unknown or undefined leaf falls back to the
 * last entry, as pi does.
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
  return contextFromPath(pathToRoot(leaf, getEntry, onProblem), DIALECTS[dialectOfEntries(entries)]);
}

/** Where the parts of the context of a root-first path lie, by its dialect's rule. */
export function contextSegments(path: readonly SessionEntry[], dialect: Dialect = dialectOfPath(path)): ContextSegments {
  return dialect.segments(path);
}

/** The messages of the context of a root-first path. */
export function contextMessages(path: readonly SessionEntry[], dialect: Dialect = dialectOfPath(path)): AgentMessage[] {
  return dialect.project(path, dialect.segments(path)).map((p) => p.message);
}

/**
 * The messages the entries `path[from…to)` give in the context of the path, as its agent shows
 * them, for a summarizer: the context's opening summary and system messages (the prompt, which a
 * compaction keeps as it is) are left out. An entry the context does not read gives nothing.
 */
export function spanMessages(path: readonly SessionEntry[], from: number, to: number, dialect: Dialect = dialectOfPath(path)): AgentMessage[] {
  const out: AgentMessage[] = [];
  for (const { index, message } of dialect.project(path, dialect.segments(path))) {
    if (index >= from && index < to && path[index].type !== "compaction" && message.role !== "system") out.push(message);
  }
  return out;
}

/** The context of a root-first path. */
export function contextFromPath(path: readonly SessionEntry[], dialect: Dialect = dialectOfPath(path)): SessionContext {
  return { messages: contextMessages(path, dialect), ...dialect.settings(path) };
}

/**
 * The entries of a path whose messages are in its context, other compactions left out: the ones
 * the latest compaction kept, then every entry the context reads after it.
 */
export function entriesInContext(path: readonly SessionEntry[], dialect: Dialect = dialectOfPath(path)): SessionEntry[] {
  const { compaction, kept, start } = dialect.segments(path);
  const keptEntries = compaction < 0 ? [] : path.slice(kept, compaction).filter((e) => e.type !== "compaction");
  return [...keptEntries, ...path.slice(start)];
}

/**
 * The message each entry of the context of a path gives, by entry id, as the context shows it (a
 * context edit applied, a failed turn's absent): what a summary of a span or of a branch, or a
 * prune, must see instead of the entry as written. The opening compaction is left out.
 */
export function shownMessages(path: readonly SessionEntry[], dialect: Dialect = dialectOfPath(path)): Map<string, AgentMessage> {
  const shown = new Map<string, AgentMessage>();
  for (const { index, message } of dialect.project(path, dialect.segments(path))) {
    if (path[index].type !== "compaction" && !shown.has(path[index].id)) shown.set(path[index].id, message);
  }
  return shown;
}

/**
 * The entries the compaction at `at` on `path` summarized, as [start, end) indexes: from the
 * previous compaction's first kept entry (the entry after that compaction when its kept entry is
 * not on the path, the root when there is none) up to its own first kept entry.
 */
export function summarizedRange(path: readonly SessionEntry[], at: number): [number, number] {
  const entry = path[at];
  if (entry?.type !== "compaction") throw new Error(`entry ${at} of the path is not a compaction`);
  const indexOf = (id: string, before: number) => path.slice(0, before).findIndex((e) => e.id === id);
  let start = 0;
  for (let i = at - 1; i >= 0; i--) {
    const previous = path[i];
    if (previous.type !== "compaction") continue;
    const kept = indexOf(previous.firstKeptEntryId, i);
    start = kept >= 0 ? kept : i + 1;
    break;
  }
  const kept = indexOf(entry.firstKeptEntryId, at);
  return [start, kept >= 0 ? kept : at];
}
