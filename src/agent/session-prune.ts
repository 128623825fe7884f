/**
 * The pruning pass AgentSession runs before its compaction checks: old tool output on the
 * current branch is replaced by a notice (see ops/prune.ts) without rewriting the file on the
 * turn: as context edits where the session's agent reads them, else only in what the next
 * requests send (the file keeps the originals). Returns what was saved, or undefined when
 * nothing qualified.
 */
import type { PruneConfig } from "../compaction/prune.js";
import type { PruningSettings } from "../config/settings.js";
import { applySavings, pruneSession } from "../ops/prune.js";
import type { SessionManager } from "../session/manager.js";

export type PruneStep = () => { tokensSaved: number; prunedCount: number } | undefined;

export function pruneStep(session: SessionManager, config?: Partial<PruneConfig> | false, now: () => number = Date.now): PruneStep {
  if (config === false) return () => undefined;
  return () => {
    const result = pruneSession(session, { config, now: now(), requestOnly: true });
    return result.prunedCount > 0 ? { tokensSaved: result.tokensSaved, prunedCount: result.prunedCount } : undefined;
  };
}

export type SavingsStep = () => { tokensSaved: number; prunedCount: number; superseded: number; oversized: number } | undefined;

/**
 * The free savings tried before a summary (ops/prune.ts applySavings): superseded reads and
 * oversized results, archived so they can be restored. Off with the rest of pruning.
 */
export function savingsStep(
  session: SessionManager,
  settings: PruningSettings,
  config?: Partial<PruneConfig> | false,
  now: () => number = Date.now,
): SavingsStep {
  if (config === false || (!settings.supersededReads && !(settings.maxResultTokens > 0))) return () => undefined;
  return () => {
    const result = applySavings(session, { config: settings, now: now(), requestOnly: true });
    if (result.prunedCount === 0) return undefined;
    const count = (kind: string) => result.candidates.filter((c) => c.kind === kind).length;
    return { tokensSaved: result.tokensSaved, prunedCount: result.prunedCount, superseded: count("superseded"), oversized: count("oversized") };
  };
}
