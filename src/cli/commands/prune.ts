/**
 * `bonsai prune FILE [--dry-run] [--json]`: replaces old, large tool output on the current branch
 * by a one-line notice. The originals go to `FILE.pruned.jsonl` first, and
 * `bonsai prune FILE --restore [--entry ID…]` puts them back.
 */
import type { Command } from "commander";
import { nonNegativeInteger } from "../numeric-options.js";
import {
  prunedArchivePath,
  pruneSession,
  type PruneSessionResult,
  type RestoreResult,
  restorePrunedOutputs,
} from "../../ops/prune.js";
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../../compaction/prune.js";
import type { SessionManager } from "../../session/manager.js";
import {
  type Colors,
  colors,
  formatCount,
  print,
  printJson,
  resolveEntryId,
  runAction,
  warn,
} from "../output.js";
import { openForReading, openForWriting, persistMigration } from "../open-session.js";

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

function report(file: string, result: PruneSessionResult): PruneReport {
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

/** Prunes the session at `path` (or plans it, on a dry run). Nothing is written when nothing qualifies. */
export async function pruneFile(path: string, options: { dryRun?: boolean; config?: Partial<PruneConfig> } = {}): Promise<PruneReport> {
  if (options.dryRun) {
    const session = await openForReading(path);
    try {
      return report(session.getLocation() ?? path, pruneSession(session, { dryRun: true, config: options.config }));
    } finally {
      await session.close();
    }
  }
  const target = await openForWriting(path);
  try {
    const plan = pruneSession(target.session, { dryRun: true, config: options.config });
    if (plan.prunedCount === 0) return report(target.file, plan);
    // Pruning rewrites the whole file: an older format is upgraded in the same step.
    persistMigration(target);
    return report(target.file, pruneSession(target.session, { config: options.config }));
  } finally {
    await target.session.close();
  }
}

export interface RestoreReport extends RestoreResult {
  file: string;
  archive: string;
}

export async function restoreFile(path: string, entryIds?: readonly string[]): Promise<RestoreReport> {
  const target = await openForWriting(path);
  const session: SessionManager = target.session;
  try {
    const ids = entryIds?.map((id) => resolveEntryId(session, id));
    const result = restorePrunedOutputs(session, { ...(ids ? { entryIds: ids } : {}), onWarning: warn });
    const archive = session.getSessionFile() ? prunedArchivePath(target.file) : (session.getPrunedArchive()?.location ?? "");
    return { file: target.file, archive, ...result };
  } finally {
    await session.close();
  }
}

export function formatPrune(r: PruneReport, c: Colors): string {
  if (r.prunedCount === 0) {
    return `nothing to prune in ${r.file}: old tool output would save less than the minimum, or none is older than the protected recent output`;
  }
  const lines = [
    c.bold(r.dryRun ? `would prune ${r.prunedCount} tool results in ${r.file} (dry run: nothing written)` : `pruned ${r.prunedCount} tool results in ${r.file}`),
    `tokens: ${formatCount(r.contextTokensBefore)} before, ${c.green(formatCount(r.contextTokensAfter))} after (estimated context; ${formatCount(r.tokensSaved)} saved)`,
  ];
  for (const e of r.entries) lines.push(`  ${e.id} ${e.toolName} ${c.dim(`${formatCount(e.tokens)} tok`)}`);
  if (r.archive) lines.push(`originals archived in ${r.archive}; \`bonsai prune ${r.file} --restore\` puts them back`);
  return lines.join("\n");
}

export function formatRestore(r: RestoreReport): string {
  const lines = [r.restored.length > 0 ? `restored ${r.restored.length} tool results in ${r.file} from ${r.archive}` : `nothing restored in ${r.file}`];
  for (const id of r.restored) lines.push(`  ${id}`);
  for (const miss of r.notRestored) lines.push(`  ${miss.entryId}: ${miss.reason}`);
  return lines.join("\n");
}

interface CommandOptions {
  dryRun?: boolean;
  json?: boolean;
  restore?: boolean;
  entry?: string[];
  protect?: number;
  minSavings?: number;
}

export function register(program: Command): void {
  program
    .command("prune")
    .description("replace old, large tool output on the current branch by a notice; the originals are archived and can be restored")
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .option("--dry-run", "show what would be pruned; write nothing")
    .option("--protect <tokens>", `newest tool output kept whole (default ${DEFAULT_PRUNE_CONFIG.protectTokens})`, nonNegativeInteger)
    .option("--min-savings <tokens>", `prune only when at least this much is saved (default ${DEFAULT_PRUNE_CONFIG.minimumSavings})`, nonNegativeInteger)
    .option("--restore", "put archived originals back instead of pruning")
    .option("--entry <id...>", "with --restore: only these entries (unique prefixes accepted)")
    .option("--json", "print stable JSON")
    .action(
      runAction(async (path: string, options: CommandOptions) => {
        if (options.entry && !options.restore) warn("--entry has no effect without --restore");
        if (options.restore) {
          const result = await restoreFile(path, options.entry);
          if (options.json) printJson(result);
          else print(formatRestore(result));
          return;
        }
        const config: Partial<PruneConfig> = {
          ...(options.protect !== undefined ? { protectTokens: options.protect } : {}),
          ...(options.minSavings !== undefined ? { minimumSavings: options.minSavings } : {}),
        };
        const result = await pruneFile(path, { dryRun: options.dryRun, config });
        if (options.json) printJson(result);
        else print(formatPrune(result, colors()));
      }),
    );
}
