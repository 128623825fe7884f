/**
 * Where a compaction cuts: walk back from the newest entry until about `keepRecentTokens`
 * (estimated) are kept, then cut at a message that can start the kept region. A tool result is
 * never a cut point, because it must stay behind the assistant message that called the tool.
 */
import type { SessionEntry } from "../format/entry-types.js";
import { estimateTokens } from "./tokens.js";

export interface CutPoint {
  /** first entry kept verbatim */
  firstKeptEntryIndex: number;
  /** when the cut splits a turn: the entry that started it (user message, bash run, ...); else -1 */
  turnStartIndex: number;
  isSplitTurn: boolean;
}

/** Whether the kept region may start at this entry. */
export function isValidCutPoint(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  // Every agent-level role except a tool result; the reference also refuses python runs and
  // file mentions, which leaves whole stretches of such sessions uncuttable.
  return entry.type === "message" && entry.message.role !== "toolResult";
}

/** Whether this entry starts a turn: something the user (or an extension on their behalf) sent. */
export function isTurnStart(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const role = entry.message.role;
  return role === "user" || role === "bashExecution" || role === "pythonExecution" || role === "custom" || role === "hookMessage";
}

/** Indices in [start, end) where the kept region may start, ascending. */
export function findValidCutPoints(entries: readonly SessionEntry[], start: number, end: number): number[] {
  const cutPoints: number[] = [];
  for (let i = start; i < end; i++) if (isValidCutPoint(entries[i])) cutPoints.push(i);
  return cutPoints;
}

/** The start of the turn holding entry `index`, scanning back no further than `start`; -1 if none. */
export function findTurnStartIndex(entries: readonly SessionEntry[], index: number, start: number): number {
  for (let i = index; i >= start; i--) if (isTurnStart(entries[i])) return i;
  return -1;
}

/**
 * The entry the keep budget lands on, before metadata is pulled in: the first cut point at or
 * after the entry where the budget was reached. When the budget is reached inside tool results
 * that follow the last cut point, that last cut point (docs/ARCHITECTURE.md, decision 1; the reference keeps
 * everything there and never compacts). When the budget is never reached: the first cut point.
 * Only `message` entries are counted, as the reference does, so cuts match its own. Only the
 * entries the walk passes and the few next to where it stops are looked at, so the cost follows
 * the kept region. -1 when [start, end) has no valid cut point at all.
 */
function landingIndex(entries: readonly SessionEntry[], start: number, end: number, keepRecentTokens: number): number {
  let kept = 0;
  for (let i = end - 1; i >= start; i--) {
    const entry = entries[i];
    if (entry.type !== "message") continue;
    kept += estimateTokens(entry.message);
    if (kept < keepRecentTokens) continue;
    for (let j = i; j < end; j++) if (isValidCutPoint(entries[j])) return j;
    // reached inside trailing tool results: the last cut point, which lies before i
    for (let j = i - 1; j >= start; j--) if (isValidCutPoint(entries[j])) return j;
    return -1;
  }
  for (let j = start; j < end; j++) if (isValidCutPoint(entries[j])) return j;
  return -1;
}

/**
 * Finds the cut for keeping about `keepRecentTokens` of the entries in [start, end).
 *
 * Metadata entries (model and thinking changes, labels, custom entries) directly before the cut
 * move to the kept side, so the kept region still carries the settings it was produced under.
 * Whether the cut splits a turn is decided from the entry the budget landed on, before that
 * move (docs/ARCHITECTURE.md, decision 1): a model change in front of a user message must not turn a clean
 * turn boundary into a "split turn" that summarizes the whole previous turn as its prefix.
 *
 * When the cut lands on a turn start other than a user message (a bash run, a custom message, a
 * branch summary) with no metadata in front of it, `turnStartIndex` is that entry itself and
 * `isSplitTurn` is true, as in the reference: the turn prefix [turnStartIndex,
 * firstKeptEntryIndex) is empty, and callers treat the cut as a clean one (prepareCompaction
 * does). With metadata moved in front of it, the turn starts inside the kept region: not split.
 */
export function findCutPoint(
  entries: readonly SessionEntry[],
  start: number,
  end: number,
  keepRecentTokens: number,
): CutPoint {
  const landed = landingIndex(entries, start, end, keepRecentTokens);
  if (landed === -1) return { firstKeptEntryIndex: start, turnStartIndex: -1, isSplitTurn: false };
  const landedEntry = entries[landed];
  const isUser = landedEntry.type === "message" && landedEntry.message.role === "user";
  const turnStartIndex = isUser ? -1 : findTurnStartIndex(entries, landed, start);

  let cutIndex = landed;
  while (cutIndex > start) {
    const previous = entries[cutIndex - 1];
    if (previous.type === "compaction" || previous.type === "message") break;
    cutIndex--;
  }
  // Metadata moved in front of a landed turn start (a bash run, a custom message): the turn
  // begins inside the kept region, so nothing of it is cut off.
  if (turnStartIndex > cutIndex) return { firstKeptEntryIndex: cutIndex, turnStartIndex: -1, isSplitTurn: false };
  return { firstKeptEntryIndex: cutIndex, turnStartIndex, isSplitTurn: !isUser && turnStartIndex !== -1 };
}
