/**
 * `bonsai checkout FILE ID [--summarize] [--instructions T] [--dry-run] [--json]`: moves the
 * leaf of a session (persisted), optionally leaving a summary of the abandoned branch at the
 * destination. Ctrl-C during the summary cancels it and leaves the file as it was. The work is
 * checkoutSession's (ops/checkout.ts); this parses the flags and prints the result.
 */
import type { Command } from "commander";
import { clip } from "../../messages/preview.js";
import { type CheckoutPreview, type CheckoutResult, checkoutSession } from "../../ops/checkout.js";
import { errorText } from "../../util/error-text.js";
import { type Colors, colors, formatCount, indent, print, printJson, runAction, runInterruptible, warn, SESSION_ARGUMENT_HELP } from "../output.js";
import { startSpinner } from "../spinner.js";
import { addSummarizerOptions, type SummarizerOptionValues, summarizerFromOptions } from "../summarizer-options.js";
import { loadCommandSettings, summarizerOptionsWithSettings } from "../command-settings.js";

const leafName = (id: string | null) => id ?? "(before the first entry)";

export function formatCheckout(result: CheckoutResult, c: Colors, quiet = false): string {
  if (!result.changed) return `${result.targetId} already is the leaf; nothing changed`;
  const lines = [`leaf: ${c.green(leafName(result.newLeafId))} ${c.dim(`(was ${leafName(result.oldLeafId)})`)}`];
  if (result.editorText !== null) {
    lines.push("", c.bold(`message to edit and send again (${result.targetId}):`), indent(result.editorText));
  }
  if (result.summary && quiet) lines.push(c.dim(`branch summary ${result.summary.id} (${result.summary.summarizer}), ${result.summary.text.split("\n").length} lines`));
  else if (result.summary) {
    lines.push("", c.bold(`branch summary ${result.summary.id} (${result.summary.summarizer}):`), indent(result.summary.text));
  }
  return lines.join("\n");
}

export function formatPreview(preview: CheckoutPreview, c: Colors, quiet = false): string {
  const lines = [
    `target: ${preview.targetId}; the leaf would move from ${leafName(preview.oldLeafId)} to ${leafName(preview.newLeafId)}`,
    `common ancestor: ${preview.commonAncestorId ?? "(none: the branches share no entry)"}`,
  ];
  if (preview.editorText !== null) lines.push(`message to edit and send again: ${clip(preview.editorText, 100)}`);
  if (preview.entries.length === 0) {
    lines.push("nothing would be summarized: the move leaves no entry of the current branch behind");
    return lines.join("\n");
  }
  lines.push(
    `${preview.entries.length} entries left behind; ${preview.messageCount} messages, ` +
      `${formatCount(preview.totalTokens)} tokens would be summarized (budget ${formatCount(preview.budget)})`,
  );
  if (!quiet) lines.push(c.dim("+ goes to the summarizer, - is left out (tool output, metadata, or past the budget)"));
  for (const row of quiet ? [] : preview.entries) {
    const mark = row.summarized ? c.green("+") : c.dim("-");
    const tokens = row.tokens > 0 ? c.dim(` ${formatCount(row.tokens)} tok`) : "";
    lines.push(`  ${mark} ${row.id} ${row.kind}${tokens} ${c.dim(clip(row.preview, 60))}`);
  }
  if (preview.readFiles.length > 0) lines.push(`read files: ${preview.readFiles.join(", ")}`);
  if (preview.modifiedFiles.length > 0) lines.push(`modified files: ${preview.modifiedFiles.join(", ")}`);
  return lines.join("\n");
}

interface CommandOptions extends SummarizerOptionValues {
  summarize?: boolean;
  instructions?: string;
  replaceInstructions?: boolean;
  dryRun?: boolean;
  json?: boolean;
  quiet?: boolean;
}

/**
 * The summarizer window a dry run budgets with. Only a configured model's is worth resolving,
 * and a dry run must work without its API key: then the default window is assumed, with a warning.
 */
async function previewWindow(options: CommandOptions): Promise<number> {
  if (options.contextWindow) return options.contextWindow;
  if (!(options.model || options.baseUrl || options.remote)) return 0;
  try {
    return (await summarizerFromOptions(options, () => {})).contextWindow;
  } catch (error) {
    warn(`${errorText(error)}; the budget assumes a 128,000-token window`);
    return 0;
  }
}

export function register(program: Command): void {
  const command = program
    .command("checkout")
    .description("move the leaf to an entry (persisted), optionally summarizing the branch being left")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .argument("<id>", "entry id (unique prefix accepted)")
    .option("--summarize", "leave a summary of the abandoned branch at the destination")
    .option("--instructions <text>", "extra focus for the summary (added to the branch prompt)")
    .option("--replace-instructions", "use --instructions as the whole prompt instead of adding it")
    .option("--dry-run", "show what would be summarized (common ancestor, entries, tokens, files); write nothing")
    .option("-q, --quiet", "leave the entry list (--dry-run) or the summary text out of the output")
    .option("--json", "print stable JSON");
  addSummarizerOptions(command).action(
    runAction(async (path: string, id: string, options: CommandOptions) => {
      const c = colors();
      if (options.instructions !== undefined && !options.summarize && !options.dryRun) {
        warn("--instructions has no effect without --summarize");
      }
      if (options.replaceInstructions && options.instructions === undefined) warn("--replace-instructions has no effect without --instructions");
      if (options.dryRun) {
        const preview = await checkoutSession(path, id, { dryRun: true, contextWindow: await previewWindow(options), onWarning: warn });
        if (options.json) printJson(preview);
        else print(formatPreview(preview, c, options.quiet));
        return;
      }

      await runInterruptible(async (signal) => {
        let stopSpinner: (ok: boolean) => void = () => {};
        try {
          const result = await checkoutSession(path, id, {
          summarize: options.summarize,
          instructions: options.instructions,
          replaceInstructions: options.replaceInstructions,
          // settings files and BONSAI_* environment as bonsai chat reads them; flags win
          summarizer: () => summarizerFromOptions(summarizerOptionsWithSettings(options, loadCommandSettings())),
          signal,
          onWarning: warn,
          onSummarizing: (summarizer) => {
            stopSpinner = startSpinner(`summarizing the branch being left with ${summarizer.name}…`);
          },
        });
          stopSpinner(true);
          if (options.json) printJson(result);
          else print(formatCheckout(result, c, options.quiet));
        } finally {
          stopSpinner(false);
        }
      });
    }),
  );
}
