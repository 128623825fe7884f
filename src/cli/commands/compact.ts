/**
 * `bonsai compact FILE [--instructions T] [--keep-recent N] [--dry-run] [--json]`: summarizes the
 * older part of a session's current branch into a compaction entry; only recent entries stay
 * verbatim. `--dry-run` shows the cut and the counts without calling a summarizer. Ctrl-C while
 * the summarizer works cancels it and leaves the file byte for byte as it was. The work is
 * compactSession's (ops/compact.ts); this parses the flags and prints the report.
 */
import type { Command } from "commander";
import { editText } from "../editor.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../../compaction/settings.js";
import { type CompactPlanReport, type CompactReport, type CompactSessionOptions, compactSession } from "../../ops/compact.js";
import { nonNegativeInteger } from "../numeric-options.js";
import { type Colors, colors, formatCount, indent, print, printJson, runAction, runInterruptible, warn, SESSION_ARGUMENT_HELP } from "../output.js";
import { startSpinner } from "../spinner.js";
import { addSummarizerOptions, type SummarizerOptionValues, summarizerFromOptions } from "../summarizer-options.js";
import { compactionBudget, loadCommandSettings, summarizerOptionsWithSettings } from "../command-settings.js";

function cutLine(report: CompactPlanReport): string {
  const split = report.isSplitTurn ? `splits a turn (its first ${report.turnPrefixMessages} messages summarized separately)` : "at a turn boundary";
  return `cut: first kept entry ${report.firstKeptEntryId} (entry ${report.firstKeptEntryIndex} of ${report.branchLength} on the branch), ${split}`;
}

export function formatPlan(report: CompactPlanReport, c: Colors): string {
  if (report.reason) return report.message ?? report.reason;
  const lines = [
    c.bold(`compaction plan for ${report.file} (dry run: nothing written)`),
    cutLine(report),
    `messages: ${report.messagesToSummarize} to summarize, ${report.turnPrefixMessages} in the turn prefix, ${report.keptMessages} kept verbatim`,
    `tokens: ${formatCount(report.tokensBefore)} in the context now (recorded as tokensBefore); estimated ${formatCount(report.estimatedTokensBefore)} before, ${formatCount(report.estimatedKeptTokens)} kept plus the summary after`,
    `keep budget: ${formatCount(report.keepRecentTokens)} estimated tokens${report.usageRatio ? ` (scaled by the usage ratio ${report.usageRatio.toFixed(2)})` : ""}`,
    `previous summary: ${report.hasPreviousSummary ? "yes, updated with the new messages" : "none"}`,
  ];
  if (report.modifiedFiles.length > 0) lines.push(`modified files: ${report.modifiedFiles.join(", ")}`);
  if (report.readFiles.length > 0) lines.push(`read files: ${report.readFiles.join(", ")}`);
  return lines.join("\n");
}

export function formatReport(report: CompactReport, c: Colors, quiet = false): string {
  if (!report.compacted) return report.message ?? report.reason ?? "nothing done";
  const after = report.estimatedTokensAfter ?? 0;
  return [
    c.bold(`compacted ${report.file} with ${report.summarizer}`),
    `tokens: ${formatCount(report.estimatedTokensBefore)} before, ${c.green(formatCount(after))} after (estimated context)`,
    cutLine(report),
    `messages: ${report.messagesToSummarize + report.turnPrefixMessages} summarized, ${report.keptMessages} kept verbatim`,
    `compaction entry: ${report.compactionId}`,
    ...(quiet
      ? [c.dim(`summary: ${(report.summary ?? "").split("\n").length} lines (\`bonsai context\` shows it)`)]
      : ["", c.bold("summary:"), indent(report.summary ?? "")]),
  ].join("\n");
}

interface CommandOptions extends SummarizerOptionValues {
  instructions?: string;
  keepRecent?: number;
  reserve?: number;
  shortSummary?: boolean;
  dryRun?: boolean;
  json?: boolean;
  quiet?: boolean;
  edit?: boolean;
}

export function register(program: Command): void {
  const command = program
    .command("compact")
    .description("summarize the older part of the current branch into a compaction entry, keeping recent entries verbatim")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .option("--instructions <text>", "what the summary should focus on")
    .option("--keep-recent <tokens>", `estimated tokens kept verbatim (default: compaction.keepRecentTokens of .bonsai/settings.json, else ${DEFAULT_COMPACTION_SETTINGS.keepRecentTokens})`, nonNegativeInteger)
    .option("--reserve <tokens>", `tokens reserved for replies; sizes the summaries (default: compaction.reserveTokens, else ${DEFAULT_COMPACTION_SETTINGS.reserveTokens})`, nonNegativeInteger)
    .option("--no-short-summary", "skip the two-sentence short summary")
    .option("--dry-run", "show the cut, the counts and the tokens; call no summarizer and write nothing")
    .option("--edit", "open the summary in $VISUAL or $EDITOR before it is written: save and exit to write what you saved, exit non-zero to write nothing")
    .option("-q, --quiet", "leave the summary out of the output (`bonsai context` shows it)")
    .option("--json", "print stable JSON");
  addSummarizerOptions(command).action(
    runAction(async (path: string, options: CommandOptions) => {
      const c = colors();
      // the settings files and BONSAI_* environment `bonsai chat` reads; flags win
      const configured = loadCommandSettings();
      const settings: Omit<CompactSessionOptions, "dryRun"> = {
        instructions: options.instructions,
        ...compactionBudget(options, configured),
        shortSummary: options.shortSummary,
        onWarning: warn,
      };
      if (options.dryRun) {
        const plan = await compactSession(path, { ...settings, dryRun: true });
        if (options.json) printJson(plan);
        else print(formatPlan(plan, c));
        return;
      }

      await runInterruptible(async (signal) => {
        let stopSpinner: (ok: boolean) => void = () => {};
        try {
          const report = await compactSession(path, {
            ...settings,
            summarizer: () => summarizerFromOptions(summarizerOptionsWithSettings(options, configured)),
            signal,
            onSummarizing: async (summarizer) => {
              stopSpinner = startSpinner(`summarizing with ${summarizer.name}…`);
            },
            ...(options.edit
              ? {
                  review: async (summary: string) => {
                    stopSpinner(true);
                    stopSpinner = () => {};
                    return editText(summary, "compaction-summary.md");
                  },
                }
              : {}),
          });
          stopSpinner(report.compacted);
          if (options.json) printJson(report);
          else print(formatReport(report, c, options.quiet));
        } finally {
          stopSpinner(false);
        }
      });
    }),
  );
}
