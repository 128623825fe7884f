/**
 * Chained compactions of one branch, as `bonsai eval` runs them: where the rounds compact (the
 * points an agent would), and each round on an in-memory copy of the path — new work appended
 * since the previous round, the plan, the summary, the compaction entry — timed and metered.
 * Nothing is written to any store. The pure parts (points, facts per cut) are exported for tests.
 */
import { type CompactionResult, compact } from "../compaction/compact.js";
import { planCompaction } from "../compaction/prepare.js";
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS } from "../compaction/settings.js";
import { estimateMessagesTokens, estimateTokens } from "../compaction/tokens.js";
import { messageFromEntry } from "../format/context.js";
import type { AgentMessage } from "../format/message-types.js";
import type { CompactionEntry, SessionEntry } from "../format/entry-types.js";
import type { GuardSettings } from "../summarizer/summary-guard.js";
import type { SummarizeRequest, Summarizer } from "../summarizer/types.js";

/** Share of the branch each round after the first adds as new work. */
export const NEW_WORK_SHARE = 0.1;
/** Share of the branch's tokens kept verbatim when no keep budget is given. */
export const KEEP_SHARE = 0.1;

const isUserTurnStart = (entry: SessionEntry | undefined) => entry?.type === "message" && entry.message.role === "user";

/** Path indices after which a turn is complete: before a user message, and the last entry. */
export function turnEnds(path: readonly SessionEntry[]): number[] {
  const ends: number[] = [];
  for (let i = 0; i < path.length; i++) if (i === path.length - 1 || isUserTurnStart(path[i + 1])) ends.push(i);
  return ends;
}

function tokenPrefix(path: readonly SessionEntry[]): number[] {
  const sums: number[] = [];
  let total = 0;
  for (const entry of path) {
    const message = messageFromEntry(entry);
    if (message) total += estimateTokens(message);
    sums.push(total);
  }
  return sums;
}

/**
 * Where each round compacts (leaf indices on the path, increasing). The first round compacts
 * where the branch reaches 1 − 0.1 × (rounds − 1) of its tokens (at least 30%), or at `atIndex`;
 * each later round after an equal share of the rest, at turn ends. Fewer points when the branch
 * has fewer turns.
 */
export function compactionPoints(path: readonly SessionEntry[], rounds: number, atIndex?: number): number[] {
  if (path.length === 0 || rounds < 1) return [];
  const sums = tokenPrefix(path);
  const total = sums[sums.length - 1];
  const ends = turnEnds(path);
  const first = atIndex ?? nearest(ends, sums, total * Math.max(0.3, 1 - NEW_WORK_SHARE * (rounds - 1)), -1);
  const points = [first];
  for (let k = 1; k < rounds; k++) {
    const start = sums[first];
    const target = start + ((total - start) * k) / (rounds - 1);
    const point = nearest(ends, sums, target, points[points.length - 1]);
    if (point > points[points.length - 1]) points.push(point);
  }
  return points;
}

function nearest(ends: readonly number[], sums: readonly number[], target: number, after: number): number {
  let best = -1;
  for (const end of ends) {
    if (end <= after) continue;
    if (best < 0 || Math.abs(sums[end] - target) < Math.abs(sums[best] - target)) best = end;
  }
  return best < 0 ? ends[ends.length - 1] : best;
}

/** The keep budget of an evaluation: 10% of the branch's tokens, between 100 and the default. */
export function evalKeepTokens(path: readonly SessionEntry[]): number {
  const sums = tokenPrefix(path);
  const total = sums[sums.length - 1] ?? 0;
  return Math.max(100, Math.min(DEFAULT_COMPACTION_SETTINGS.keepRecentTokens, Math.round(total * KEEP_SHARE)));
}

/** Messages of the original entries before `cut` (earlier compactions of the session included as they are). */
export function messagesBefore(path: readonly SessionEntry[], cut: number): AgentMessage[] {
  const out: AgentMessage[] = [];
  for (let i = 0; i < cut; i++) {
    const message = messageFromEntry(path[i]);
    if (message) out.push(message);
  }
  return out;
}

export interface RoundResult {
  round: number;
  /** the leaf the round compacted at */
  leafId: string;
  firstKeptEntryId: string;
  /** index of the first kept entry on the original path */
  cutIndex: number;
  summary: string;
  summaryTokens: number;
  /** estimated tokens of the original messages the summary stands for */
  summarizedTokens: number;
  ms: number;
  /** summed over the round's summarizer calls, when the summarizer reports usage */
  costUsd: number;
  coverageAdded: number;
}

export interface RunRoundsOptions {
  settings?: Partial<CompactionSettings>;
  guard?: GuardSettings;
  signal?: AbortSignal;
  /** called after each round (progress) */
  onRound?: (result: RoundResult) => void;
  now?: () => number;
}

/** A summarizer that adds up the cost its answers report. */
function metered(summarizer: Summarizer): { summarizer: Summarizer; take(): number } {
  let cost = 0;
  return {
    summarizer: {
      name: summarizer.name,
      contextWindow: summarizer.contextWindow,
      reasoning: summarizer.reasoning,
      async summarize(request: SummarizeRequest) {
        const result = await summarizer.summarize(request);
        cost += result.usage?.cost?.total ?? 0;
        return result;
      },
    },
    take() {
      const spent = cost;
      cost = 0;
      return spent;
    },
  };
}

const summaryTokens = (summary: string) => estimateTokens({ role: "user", content: summary, timestamp: 0 });

/**
 * The entry as the rounds plan over it: an assistant message without its reported usage. The
 * session's usage describes the contexts it really sent, not the ones the rounds build with their
 * own summaries; planning with it would let each summary's length move the cut (through the
 * usage ratio), and the summarizers would no longer be compared on the same spans.
 */
function withoutUsage(entry: SessionEntry): SessionEntry {
  if (entry.type !== "message" || entry.message.role !== "assistant") return entry;
  const { usage: _usage, ...message } = entry.message;
  return { ...entry, message: message as typeof entry.message };
}

/** Runs the rounds at `points` with one summarizer; a round with nothing to compact is skipped. */
export async function runRounds(
  path: readonly SessionEntry[],
  points: readonly number[],
  summarizer: Summarizer,
  options: RunRoundsOptions = {},
): Promise<RoundResult[]> {
  const now = options.now ?? (() => performance.now());
  const settings: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: evalKeepTokens(path), ...options.settings };
  const meter = metered(summarizer);
  const index = new Map(path.map((entry, i) => [entry.id, i]));
  const current: SessionEntry[] = [];
  const results: RoundResult[] = [];
  let next = 0;
  for (const [k, point] of points.entries()) {
    while (next <= point) current.push(withoutUsage(path[next++]));
    const plan = planCompaction(current, settings);
    if (!plan.ok) continue;
    const started = now();
    const result: CompactionResult = await compact(plan.preparation, meter.summarizer, {
      shortSummary: false,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.guard ? { guard: options.guard } : {}),
    });
    const ms = now() - started;
    const last = current[current.length - 1];
    const entry: CompactionEntry = {
      type: "compaction",
      id: `eval-round-${k + 1}`,
      parentId: last.id,
      timestamp: new Date(0).toISOString(),
      summary: result.summary,
      firstKeptEntryId: result.firstKeptEntryId,
      tokensBefore: result.tokensBefore,
      details: result.details,
    };
    current.push(entry);
    const cutIndex = index.get(result.firstKeptEntryId) ?? point;
    const round: RoundResult = {
      round: k + 1,
      leafId: last.id,
      firstKeptEntryId: result.firstKeptEntryId,
      cutIndex,
      summary: result.summary,
      summaryTokens: summaryTokens(result.summary),
      summarizedTokens: estimateMessagesTokens(messagesBefore(path, cutIndex)),
      ms,
      costUsd: meter.take(),
      coverageAdded: result.coverage?.added.length ?? 0,
    };
    results.push(round);
    options.onRound?.(round);
  }
  return results;
}
