/**
 * Pruning a stored session's old tool output, and restoring it, as `bonsai prune` reports it:
 * ops/prune.ts does the work on an open session; this opens the location, plans first so that
 * an older format is upgraded only when something will really be pruned, and shapes the report.
 */
import { DEFAULT_PRUNE_CONFIG, type PruneConfig, planPruning } from "../compaction/prune.js";
import { estimateTokens } from "../compaction/tokens.js";
import type { SessionEntry } from "../format/entry-types.js";
import { resolveEntryId } from "./entry-id.js";
import {
  openForWriting,
  persistMigration,
  readTarget,
  type SessionTarget,
  type WarningListener,
  withSession,
} from "./open-session.js";
import { branchEntriesInContext, pruneSession, type PruneSessionResult, type RestoreResult, restorePrunedOutputs } from "./prune.js";

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
  /** where the originals are (null when nothing was written, or when pruned by context edits) */
  archive: string | null;
  /** pruned by appending context edits (pi 1.x reads them): the file's earlier lines untouched, no archive */
  contextEdits: boolean;
  /** what pruning would save without the minimum (what a refusal fell short with) */
  couldSave: number;
  minimumSavings: number;
  protectTokens: number;
  /** tool output in the context, by tool, largest first; `neverPruned` for protected tools */
  byTool: ToolOutputShare[];
}

export interface ToolOutputShare {
  toolName: string;
  results: number;
  tokens: number;
  neverPruned: boolean;
}

/** What a prune decision rests on: the savings without the minimum, and whose output fills the context. */
export interface PruneOverview {
  couldSave: number;
  minimumSavings: number;
  protectTokens: number;
  byTool: ToolOutputShare[];
}

/** The numbers behind a plan over `entries` (the context's entries), for a refusal to explain itself. */
export function pruneOverview(entries: readonly SessionEntry[], config: Partial<PruneConfig> = {}): PruneOverview {
  const settings = { ...DEFAULT_PRUNE_CONFIG, ...config };
  const protectedTools = new Set(settings.protectedTools);
  const shares = new Map<string, ToolOutputShare>();
  for (const entry of entries) {
    if (entry.type !== "message" || entry.message.role !== "toolResult" || entry.message.prunedAt !== undefined) continue;
    const { toolName } = entry.message;
    const share = shares.get(toolName) ?? { toolName, results: 0, tokens: 0, neverPruned: protectedTools.has(toolName) };
    share.results++;
    share.tokens += estimateTokens(entry.message);
    shares.set(toolName, share);
  }
  return {
    couldSave: planPruning(entries, { ...settings, minimumSavings: 0 }).tokensSaved,
    minimumSavings: settings.minimumSavings,
    protectTokens: settings.protectTokens,
    byTool: [...shares.values()].sort((x, y) => y.tokens - x.tokens || x.toolName.localeCompare(y.toolName)),
  };
}

export function pruneReport(file: string, result: PruneSessionResult, overview: PruneOverview): PruneReport {
  return {
    file,
    dryRun: result.dryRun,
    prunedCount: result.prunedCount,
    tokensSaved: result.tokensSaved,
    contextTokensBefore: result.contextTokensBefore,
    contextTokensAfter: result.contextTokensAfter,
    entries: result.candidates.map((c) => ({ id: c.entryId, toolName: c.toolName, tokens: c.tokens })),
    archive: result.archivePath ?? null,
    contextEdits: result.contextEdits,
    ...overview,
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
    return withSession(opened, () => {
      const overview = pruneOverview(branchEntriesInContext(opened.session), config);
      return pruneReport(opened.file, pruneSession(opened.session, { dryRun: true, config }), overview);
    });
  }
  const writable = await openForWriting(target, onWarning);
  return withSession(writable, () => {
    // the numbers as they were before pruning, which is what the report explains
    const overview = pruneOverview(branchEntriesInContext(writable.session), config);
    const plan = pruneSession(writable.session, { dryRun: true, config });
    if (plan.prunedCount === 0) return pruneReport(writable.file, plan, overview);
    // Pruning rewrites the whole file: an older format is upgraded in the same step.
    persistMigration(writable, onWarning);
    return pruneReport(writable.file, pruneSession(writable.session, { config }), overview);
  });
}

export interface RestoreReport extends RestoreResult {
  file: string;
  /** where the originals came from; null when restored by appending context edits */
  archive: string | null;
  contextEdits: boolean;
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
    const contextEdits = session.getDialect().contextEdits;
    const archive = contextEdits ? null : (session.getPrunedArchive()?.location ?? "");
    return { file, archive, contextEdits, ...result };
  });
}
