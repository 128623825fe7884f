/**
 * Pruning a stored session's old tool output, and restoring it, as `bonsai prune` reports it:
 * ops/prune.ts does the work on an open session; this opens the location, plans first so that
 * an older format is upgraded only when something will really be pruned, and shapes the report.
 */
import type { PruneConfig } from "../compaction/prune.js";
import { resolveEntryId } from "./entry-id.js";
import {
  openForWriting,
  persistMigration,
  readTarget,
  type SessionTarget,
  type WarningListener,
  withSession,
} from "./open-session.js";
import { pruneSession, type PruneSessionResult, type RestoreResult, restorePrunedOutputs } from "./prune.js";

export interface PruneReport {
  file: string;
  dryRun: boolean;
  prunedCount: number;
  tokensSaved: number;
  /** estimated tokens of the context before and after */
  contextTokensBefore: number;
  contextTokensAfter: number;
  /** newest first */
  entries: { id: string; toolName: string; tokens: number }[];
  /** where the originals are (null when nothing was written) */
  archive: string | null;
}

export function pruneReport(file: string, result: PruneSessionResult): PruneReport {
  return {
    file,
    dryRun: result.dryRun,
    prunedCount: result.prunedCount,
    tokensSaved: result.tokensSaved,
    contextTokensBefore: result.contextTokensBefore,
    contextTokensAfter: result.contextTokensAfter,
    entries: result.candidates.map((c) => ({ id: c.entryId, toolName: c.toolName, tokens: c.tokens })),
    archive: result.archivePath ?? null,
  };
}

export interface PruneToolOutputOptions {
  /** plan only: nothing is archived or rewritten */
  dryRun?: boolean;
  config?: Partial<PruneConfig>;
  onWarning?: WarningListener;
}

/** Prunes old tool output of `target` (or plans it, on a dry run). Nothing is written when nothing qualifies. */
export async function pruneToolOutput(target: SessionTarget, options: PruneToolOutputOptions = {}): Promise<PruneReport> {
  const { config, onWarning } = options;
  if (options.dryRun) {
    const opened = await readTarget(target, onWarning);
    return withSession(opened, () => pruneReport(opened.file, pruneSession(opened.session, { dryRun: true, config })));
  }
  const writable = await openForWriting(target, onWarning);
  return withSession(writable, () => {
    const plan = pruneSession(writable.session, { dryRun: true, config });
    if (plan.prunedCount === 0) return pruneReport(writable.file, plan);
    // Pruning rewrites the whole file: an older format is upgraded in the same step.
    persistMigration(writable, onWarning);
    return pruneReport(writable.file, pruneSession(writable.session, { config }));
  });
}

export interface RestoreReport extends RestoreResult {
  file: string;
  archive: string;
}

/** Puts archived originals back into the pruned tool results of `target`: all, or `entryIds` (unique prefixes accepted). */
export async function restoreToolOutput(
  target: SessionTarget,
  options: { entryIds?: readonly string[]; onWarning?: WarningListener } = {},
): Promise<RestoreReport> {
  const writable = await openForWriting(target, options.onWarning);
  const { session, file } = writable;
  return withSession(writable, () => {
    const ids = options.entryIds?.map((id) => resolveEntryId(session, id));
    const result = restorePrunedOutputs(session, { ...(ids ? { entryIds: ids } : {}), onWarning: options.onWarning });
    const archive = session.getPrunedArchive()?.location ?? "";
    return { file, archive, ...result };
  });
}
