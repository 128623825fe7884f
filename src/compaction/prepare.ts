/**
 * prepareCompaction: everything a compaction needs to know, read off the current path without
 * calling a model. Which entries stay verbatim, which messages get summarized (and which form the
 * prefix of a split turn), the previous summary, the files touched so far, and the context size.
 */
import type { AgentMessage, Usage } from "../format/message-types.js";
import { contextFromPath, dialectOfPath, messageFromEntry, spanMessages } from "../format/context.js";
import type { ContextSegments, Dialect } from "../format/dialects/index.js";
import type { CompactionEntry, FileLists, SessionEntry } from "../format/entry-types.js";
import { findCutPoint } from "./cut-point.js";
import { addFileLists, carriesFileLists, createFileOps, extractFileOpsFromMessage, type FileOps } from "./file-ops.js";
import type { CompactionSettings } from "./settings.js";
import { calculateContextTokens, calculatePromptTokens, estimateMessagesTokens, estimateTokens, usageOf } from "./tokens.js";
import { pinnedBefore } from "../format/pins.js";
import { formatCount } from "../util/count.js";

export interface CompactionPreparation {
  firstKeptEntryId: string;
  /** index of the first kept entry on the path that was prepared */
  firstKeptEntryIndex: number;
  /** messages leaving the context that the history summary covers */
  messagesToSummarize: AgentMessage[];
  /** the start of a turn the cut splits; summarized on its own so the kept rest makes sense */
  turnPrefixMessages: AgentMessage[];
  /** the kept region (what the short summary describes) */
  recentMessages: AgentMessage[];
  isSplitTurn: boolean;
  /** context tokens now: the latest fresh usage plus estimates of what came after it */
  tokensBefore: number;
  /** the previous compaction's summary, if there is one on the path */
  previousSummary?: string;
  /** files read and changed up to the cut, carried over from the previous compaction */
  fileOps: FileOps;
  settings: CompactionSettings;
  /** first path index the cut search considered (the previous compaction's first kept entry) */
  boundaryStart: number;
  /** the keep budget after the usage-ratio adjustment (equal to the setting when none applied) */
  keepRecentTokens: number;
  /** reported prompt tokens per estimated token of the last fresh request, clamped to [1, 4]; undefined without one */
  usageRatio?: number;
  /** pinned entries before the cut (format/pins.ts), carried verbatim beside the summary; absent when none */
  pinned?: { entryId: string; text: string }[];
}

export type NoCompactionReason = "already-compacted" | "nothing-to-compact";

export type CompactionPlan =
  | { ok: true; preparation: CompactionPreparation }
  | { ok: false; reason: NoCompactionReason; message: string };

/** The usage ratio never grows the budget, and is capped so one odd request cannot empty it. */
export const MAX_USAGE_RATIO = 4;

/** Where the context opens: its compaction, or the entry before the first it reads (a reset boundary, or -1). */
const contextOpening = (s: ContextSegments): number => (s.compaction >= 0 ? s.compaction : s.start - 1);

/** The newest completed assistant usage after `after` on the path, with its index. */
function freshUsage(path: readonly SessionEntry[], after: number): { usage: Usage; index: number } | undefined {
  for (let i = path.length - 1; i > after; i--) {
    const entry = path[i];
    if (entry.type !== "message") continue;
    const usage = usageOf(entry.message);
    if (usage) return { usage, index: i };
  }
  return undefined;
}

/**
 * Reported prompt tokens per estimated token, from the request that produced the assistant
 * message at `index`: its usage against the estimate of exactly the messages it carried (the
 * context of the path before it, summary included). Only a request made after the latest
 * compaction qualifies (docs/ARCHITECTURE.md, decision 4), so a pre-compaction size never shrinks the budget.
 */
export function usageRatio(path: readonly SessionEntry[], usage: Usage, index: number, dialect = dialectOfPath(path)): number | undefined {
  const estimated = estimateMessagesTokens(contextFromPath(path.slice(0, index), dialect).messages);
  if (estimated <= 0) return undefined;
  const ratio = calculatePromptTokens(usage) / estimated;
  if (!Number.isFinite(ratio) || ratio <= 1) return undefined;
  return Math.min(ratio, MAX_USAGE_RATIO);
}

/**
 * Context tokens at the end of the path: the latest usage reported after the latest compaction
 * plus estimates of the messages after it; without such a usage, the estimate of the whole
 * context (a kept assistant's usage from before the compaction describes the old, larger context).
 */
export function contextTokensOfPath(path: readonly SessionEntry[], dialect = dialectOfPath(path)): number {
  const fresh = freshUsage(path, contextOpening(dialect.segments(path)));
  if (!fresh) return estimateMessagesTokens(contextFromPath(path, dialect).messages);
  let trailing = 0;
  for (let i = fresh.index + 1; i < path.length; i++) {
    const message = messageFromEntry(path[i]);
    if (message) trailing += estimateTokens(message);
  }
  return calculateContextTokens(fresh.usage) + trailing;
}

const count = formatCount;


/**
 * Plans a compaction of `pathEntries` (root to leaf, metadata included, as getBranch() returns).
 *
 * The cut is searched from the previous compaction's first kept entry, not from just after the
 * compaction: the entries it kept are still verbatim in the context, so they count as recent,
 * and when the new cut passes them they are summarized instead of silently dropped (the spec's
 * "previous compaction + 1" boundary loses them: they are in neither summary).
 */
export function planCompaction(pathEntries: readonly SessionEntry[], settings: CompactionSettings, dialect: Dialect = dialectOfPath(pathEntries)): CompactionPlan {
  const path = pathEntries;
  const end = path.length;
  if (end > 0 && path[end - 1].type === "compaction") {
    return { ok: false, reason: "already-compacted", message: "Already compacted: nothing was added since the last compaction" };
  }

  // the span starts where the context does: at the previous compaction's first kept entry, or
  // after a reset boundary that cleared it all (the previous summary with it: the agent dropped it)
  const segments = dialect.segments(path);
  const prevIndex = segments.compaction;
  const previous = prevIndex >= 0 ? (path[prevIndex] as CompactionEntry) : undefined;
  const boundaryStart = previous ? (segments.kept < prevIndex ? segments.kept : prevIndex + 1) : segments.start;
  const messagesOfPath = (from: number, to: number) => spanMessages(path, from, to, dialect);

  let keepRecentTokens = settings.keepRecentTokens;
  let ratio: number | undefined;
  const fresh = freshUsage(path, contextOpening(segments));
  if (fresh) {
    ratio = usageRatio(path, fresh.usage, fresh.index, dialect);
    if (ratio !== undefined) keepRecentTokens = Math.max(1, Math.floor(keepRecentTokens / ratio));
  }

  const cut = findCutPoint(path, boundaryStart, end, keepRecentTokens);
  const firstKept = path[cut.firstKeptEntryIndex];
  if (!firstKept?.id) {
    return { ok: false, reason: "nothing-to-compact", message: "Nothing to compact: the session has no entries yet" };
  }
  // A turn start at or after the kept region's start leaves an empty prefix: a clean cut.
  const isSplitTurn = cut.isSplitTurn && cut.turnStartIndex < cut.firstKeptEntryIndex;
  const historyEnd = isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;
  const messagesToSummarize = messagesOfPath(boundaryStart, historyEnd);
  const turnPrefixMessages = isSplitTurn ? messagesOfPath(cut.turnStartIndex, cut.firstKeptEntryIndex) : [];
  if (messagesToSummarize.length === 0 && turnPrefixMessages.length === 0) {
    return {
      ok: false,
      reason: "nothing-to-compact",
      // not a failure (the chat and the CLI show it as a notice): say what is the case
      message: `Nothing to compact yet: ${previous ? "the conversation since the last compaction" : "the whole conversation"} (${count(estimateMessagesTokens(messagesOfPath(boundaryStart, end)))} tokens) fits in the ${count(keepRecentTokens)} tokens kept verbatim`,
    };
  }

  const fileOps = createFileOps();
  if (previous && carriesFileLists(previous)) addFileLists(fileOps, previous.details as Partial<FileLists> | undefined);
  for (const message of messagesToSummarize) extractFileOpsFromMessage(message, fileOps);
  for (const message of turnPrefixMessages) extractFileOpsFromMessage(message, fileOps);

  const preparation: CompactionPreparation = {
    firstKeptEntryId: firstKept.id,
    firstKeptEntryIndex: cut.firstKeptEntryIndex,
    messagesToSummarize,
    turnPrefixMessages,
    recentMessages: messagesOfPath(cut.firstKeptEntryIndex, end),
    isSplitTurn,
    tokensBefore: contextTokensOfPath(path, dialect),
    fileOps,
    settings,
    boundaryStart,
    keepRecentTokens,
  };
  if (previous) preparation.previousSummary = previous.summary;
  if (ratio !== undefined) preparation.usageRatio = ratio;
  const pinned = pinnedBefore(path, cut.firstKeptEntryIndex, settings.pinFirstRequest === true, () => contextFloor(path, dialect));
  if (pinned.length > 0) preparation.pinned = pinned;
  return { ok: true, preparation };
}

/**
 * How far back the context reaches through its compactions: the start after the latest reset
 * boundary (an oh-my-pi /clear) before them, 0 when there is none. Pins before it were cleared.
 */
function contextFloor(path: readonly SessionEntry[], dialect: Dialect): number {
  let end = path.length;
  for (;;) {
    const segments = dialect.segments(path.slice(0, end));
    if (segments.compaction < 0) return segments.start;
    end = segments.compaction;
  }
}

/** The reference's shape: the preparation, or undefined when there is nothing to do (see planCompaction for why). */
export function prepareCompaction(
  pathEntries: readonly SessionEntry[],
  settings: CompactionSettings,
): CompactionPreparation | undefined {
  const plan = planCompaction(pathEntries, settings);
  return plan.ok ? plan.preparation : undefined;
}
