/**
 * `bonsai prune FILE [--dry-run] [--json]`: replaces old, large tool output on the current branch
 * by a one-line notice. The originals go to `FILE.pruned.jsonl` first, and
 * `bonsai prune FILE --restore [--entry ID…]` puts them back. The work is ops/prune-report.ts's.
 */
import type { Command } from "commander";
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../../compaction/prune.js";
import { pruneToolOutput, restoreToolOutput } from "../../ops/prune-report.js";
import { nonNegativeInteger, positiveCount } from "../numeric-options.js";
import { colors, print, printJson, runAction, UsageError, warn, SESSION_ARGUMENT_HELP } from "../output.js";
import { DEFAULT_PRUNE_LIMIT, formatPrune, formatRestore } from "../prune-format.js";


interface CommandOptions {
  dryRun?: boolean;
  json?: boolean;
  restore?: boolean;
  entry?: string[];
  protect?: number;
  minSavings?: number;
  limit?: number;
}

export function register(program: Command): void {
  program
    .command("prune")
    .description("replace old, large tool output on the current branch by a notice; the originals are archived and can be restored")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .option("--dry-run", "show what would be pruned; write nothing")
    .option("--protect <tokens>", `newest tool output kept whole (default ${DEFAULT_PRUNE_CONFIG.protectTokens})`, nonNegativeInteger)
    .option("--min-savings <tokens>", `prune only when at least this much is saved (default ${DEFAULT_PRUNE_CONFIG.minimumSavings})`, nonNegativeInteger)
    .option("--limit <n>", `list at most this many entries (default ${DEFAULT_PRUNE_LIMIT}; --json lists all)`, positiveCount)
    .option("--restore", "put archived originals back instead of pruning")
    .option("--entry <id...>", "with --restore: only these entries (unique prefixes accepted; give FILE before it, or end the ids with --)")
    .option("--json", "print stable JSON")
    .action(
      runAction(async (path: string, options: CommandOptions) => {
        if (options.entry && !options.restore) warn("--entry has no effect without --restore");
        // a restore writes at once: asked for a dry run, it must not run at all
        if (options.restore && options.dryRun) throw new UsageError("prune: --dry-run does not go with --restore, which writes the originals back at once");
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
        else print(formatPrune(result, colors(), options.limit));
      }),
    );
}
