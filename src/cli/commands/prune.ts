/**
 * `bonsai prune FILE [--dry-run] [--json]`: replaces old, large tool output on the current branch
 * by a one-line notice. The originals go to `FILE.pruned.jsonl` first, and
 * `bonsai prune FILE --restore [--entry ID…]` puts them back. The work is ops/prune-report.ts's.
 */
import type { Command } from "commander";
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../../compaction/prune.js";
import { type PruneReport, pruneToolOutput, type RestoreReport, restoreToolOutput } from "../../ops/prune-report.js";
import { nonNegativeInteger } from "../numeric-options.js";
import { type Colors, colors, formatCount, print, printJson, runAction, warn } from "../output.js";

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
          const result = await restoreToolOutput(path, { entryIds: options.entry, onWarning: warn });
          if (options.json) printJson(result);
          else print(formatRestore(result));
          return;
        }
        const config: Partial<PruneConfig> = {
          ...(options.protect !== undefined ? { protectTokens: options.protect } : {}),
          ...(options.minSavings !== undefined ? { minimumSavings: options.minSavings } : {}),
        };
        const result = await pruneToolOutput(path, { dryRun: options.dryRun, config, onWarning: warn });
        if (options.json) printJson(result);
        else print(formatPrune(result, colors()));
      }),
    );
}
