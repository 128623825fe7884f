/**
 * The pruning pass AgentSession runs before its compaction checks: old tool output on the
 * current branch is archived and replaced by a notice (see ops/prune.ts), and the
 * file is rewritten. Returns what was saved, or undefined when nothing qualified.
 */
import type { PruneConfig } from "../compaction/prune.js";
import { pruneSession } from "../ops/prune.js";
import type { SessionManager } from "../session/manager.js";

export type PruneStep = () => { tokensSaved: number; prunedCount: number } | undefined;

export function pruneStep(session: SessionManager, config?: Partial<PruneConfig> | false, now: () => number = Date.now): PruneStep {
  if (config === false) return () => undefined;
  return () => {
    const result = pruneSession(session, { config, now: now() });
    return result.prunedCount > 0 ? { tokensSaved: result.tokensSaved, prunedCount: result.prunedCount } : undefined;
  };
}
