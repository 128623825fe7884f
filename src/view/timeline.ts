/**
 * The token timeline of a path: bonsai's estimate of the context at each turn (what `bonsai
 * context --leaf ID` reports as estimatedTokens, computed in one walk instead of one context per
 * entry), the usage the provider reported for that turn, and the drops compactions made. The
 * estimate follows the context rule of format/context.ts (contextSegments): after a compaction
 * the context is its summary, the entries it kept, and everything after it. Pure.
 */
import { calculateContextTokens, estimateTokens, usageOf } from "../compaction/tokens.js";
import { compactionSummaryMessageFromEntry, messageFromEntry } from "../format/context.js";
import type { CompactionEntry, SessionEntry } from "../format/entry-types.js";

export interface TimelinePoint {
  /** the entry: an assistant message (a turn) or a compaction */
  id: string;
  kind: "turn" | "compaction";
  /** estimated tokens of the context at this entry, as `bonsai context --leaf ID` reports */
  estimate: number;
  /** tokens the provider reported for this turn (prompt and reply), when it did */
  usage?: number;
  /** a compaction: the tokens it recorded before it */
  tokensBefore?: number;
}

/**
 * What the timeline reads of an entry: the estimated tokens of its message (0 without one), the
 * context the provider reported for it (an assistant message's turn; 0 when none), whether it is
 * a turn, and whether it carries a message at all. Read off the entry, or off its digest when its body was not read (model.ts).
 */
export interface EntryFigures {
  tokens(entry: SessionEntry): number;
  reported(entry: SessionEntry): number;
  isTurn(entry: SessionEntry): boolean;
  /** whether the context holds a message for it */
  carries(entry: SessionEntry): boolean;
}

export const entryFigures: EntryFigures = {
  tokens: (entry) => {
    const message = messageFromEntry(entry);
    return message ? estimateTokens(message) : 0;
  },
  reported: (entry) => {
    const usage = entry.type === "message" ? usageOf(entry.message) : undefined;
    return usage ? calculateContextTokens(usage) : 0;
  },
  isTurn: (entry) => entry.type === "message" && entry.message.role === "assistant",
  carries: (entry) => messageFromEntry(entry) !== undefined,
};

/** The context right after a compaction: its summary and the entries it kept, `keptTokens`. */
function compactionBase(entry: CompactionEntry, keptTokens: number): number {
  return estimateTokens(compactionSummaryMessageFromEntry(entry)) + keptTokens;
}

/** The estimated context at the compaction `path[at]`, as contextEstimates gives it, without estimating the rest of the path. */
export function compactionEstimate(path: readonly SessionEntry[], at: number, figures: EntryFigures = entryFigures): number {
  const entry = path[at] as CompactionEntry;
  let kept = 0;
  while (kept < at && path[kept].id !== entry.firstKeptEntryId) kept++;
  let keptTokens = 0;
  for (let i = kept; i < at; i++) keptTokens += figures.tokens(path[i]);
  return compactionBase(entry, keptTokens);
}

/**
 * The estimated context tokens at every entry of a root-first path: entry i's is what the
 * context of path[0..i] estimates to.
 */
export function contextEstimates(path: readonly SessionEntry[], figures: EntryFigures = entryFigures): number[] {
  // prefix[i]: estimated tokens of the messages of path[0..i) (compactions carry none here)
  const prefix: number[] = [0];
  for (const entry of path) prefix.push(prefix[prefix.length - 1] + figures.tokens(entry));
  const estimates: number[] = [];
  const index = new Map<string, number>();
  // since the latest compaction: the tokens its summary and kept entries stand for, and where it is
  let base = 0;
  let from = -1;
  path.forEach((entry, i) => {
    if (entry.type === "compaction") {
      // the kept entries: from the first entry on the path with firstKeptEntryId, up to here
      const kept = index.get(entry.firstKeptEntryId);
      const keptTokens = kept !== undefined ? prefix[i] - prefix[kept] : 0;
      base = compactionBase(entry as CompactionEntry, keptTokens);
      from = i;
    }
    if (!index.has(entry.id)) index.set(entry.id, i);
    estimates.push(from < 0 ? prefix[i + 1] : base + prefix[i + 1] - prefix[from + 1]);
  });
  return estimates;
}

/** One point per turn (an assistant message) and per compaction of a root-first path. */
export function timelineOf(path: readonly SessionEntry[], figures: EntryFigures = entryFigures): TimelinePoint[] {
  const estimates = contextEstimates(path, figures);
  const points: TimelinePoint[] = [];
  path.forEach((entry, i) => {
    if (entry.type === "compaction") {
      points.push({ id: entry.id, kind: "compaction", estimate: estimates[i], tokensBefore: entry.tokensBefore });
    } else if (figures.isTurn(entry)) {
      const reported = figures.reported(entry);
      points.push({ id: entry.id, kind: "turn", estimate: estimates[i], ...(reported > 0 ? { usage: reported } : {}) });
    }
  });
  return points;
}
