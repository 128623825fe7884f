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

/** The context right after a compaction: its summary and the entries it kept, `keptTokens`. */
function compactionBase(entry: CompactionEntry, keptTokens: number): number {
  return estimateTokens(compactionSummaryMessageFromEntry(entry)) + keptTokens;
}

/** The estimated context at the compaction `path[at]`, as contextEstimates gives it, without estimating the rest of the path. */
export function compactionEstimate(path: readonly SessionEntry[], at: number): number {
  const entry = path[at] as CompactionEntry;
  let kept = 0;
  while (kept < at && path[kept].id !== entry.firstKeptEntryId) kept++;
  let keptTokens = 0;
  for (let i = kept; i < at; i++) {
    const message = messageFromEntry(path[i]);
    if (message) keptTokens += estimateTokens(message);
  }
  return compactionBase(entry, keptTokens);
}

/**
 * The estimated context tokens at every entry of a root-first path: entry i's is what the
 * context of path[0..i] estimates to.
 */
export function contextEstimates(path: readonly SessionEntry[]): number[] {
  // prefix[i]: estimated tokens of the messages of path[0..i) (compactions carry none here)
  const prefix: number[] = [0];
  for (const entry of path) {
    const message = messageFromEntry(entry);
    prefix.push(prefix[prefix.length - 1] + (message ? estimateTokens(message) : 0));
  }
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
export function timelineOf(path: readonly SessionEntry[]): TimelinePoint[] {
  const estimates = contextEstimates(path);
  const points: TimelinePoint[] = [];
  path.forEach((entry, i) => {
    if (entry.type === "compaction") {
      points.push({ id: entry.id, kind: "compaction", estimate: estimates[i], tokensBefore: entry.tokensBefore });
    } else if (entry.type === "message" && entry.message.role === "assistant") {
      const usage = usageOf(entry.message);
      const reported = usage ? calculateContextTokens(usage) : 0;
      points.push({ id: entry.id, kind: "turn", estimate: estimates[i], ...(reported > 0 ? { usage: reported } : {}) });
    }
  });
  return points;
}
