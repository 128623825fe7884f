/**
 * `bonsai checkout FILE ID [--summarize] [--instructions T] [--dry-run] [--json]`: moves the
 * leaf of a session (persisted), optionally leaving a summary of the abandoned branch at the
 * destination. Ctrl-C during the summary cancels it and leaves the file as it was.
 */
import type { Command } from "commander";
import {
  branchMessageFromEntry,
  branchSummaryBudget,
  collectEntriesForBranchSummary,
  DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS,
  prepareBranchEntries,
} from "../../compaction/branch-summary.js";
import { computeFileLists } from "../../compaction/file-ops.js";
import { estimateTokens } from "../../compaction/tokens.js";
import { destinationOf, navigateTree } from "../../ops/navigate.js";
import type { SessionEntry } from "../../format/entry-types.js";
import type { Summarizer } from "../../summarizer/types.js";
import {
  abortOnInterrupt,
  CliError,
  type Colors,
  colors,
  formatCount,
  indent,
  print,
  printJson,
  progress,
  resolveEntryId,
  INTERRUPTED,
  runAction,
  warn,
} from "../output.js";
import { openForReading, openWithStableIds } from "../open-session.js";
import { clip, entryPreview } from "../../messages/preview.js";
import { addSummarizerOptions, type SummarizerOptionValues, summarizerFromOptions } from "../summarizer-options.js";
import { errorText } from "../../util/error-text.js";

export interface CheckoutOptions {
  summarize?: boolean;
  instructions?: string;
  /** the instructions replace the branch prompt instead of adding a focus to it */
  replaceInstructions?: boolean;
  reserveTokens?: number;
}

export interface CheckoutResult {
  file: string;
  targetId: string;
  oldLeafId: string | null;
  /** null: before the first entry (the next message starts a new root) */
  newLeafId: string | null;
  /** the text of a user or custom message target, to edit and send again */
  editorText: string | null;
  /** false when the target already was the leaf */
  changed: boolean;
  summary: {
    id: string;
    parentId: string | null;
    text: string;
    readFiles: string[];
    modifiedFiles: string[];
    summarizer: string;
  } | null;
}

/** Thrown when the summary was interrupted; the session file is unchanged. */
export class CheckoutCancelledError extends CliError {}

/**
 * Moves the leaf of the session at `path` to entry `id` (a unique prefix will do). The
 * summarizer is created only when a summary is really needed. An abort through `signal`
 * throws CheckoutCancelledError and leaves the file untouched.
 */
export async function checkoutSession(
  path: string,
  id: string,
  options: CheckoutOptions,
  getSummarizer: () => Promise<Summarizer>,
  signal?: AbortSignal,
): Promise<CheckoutResult> {
  const session = await openWithStableIds(path);
  try {
    const targetId = resolveEntryId(session, id);
    const file = session.getLocation() ?? path;
    const wantsSummary = options.summarize === true;
    let summarizer: Summarizer | undefined;
    if (wantsSummary && targetId !== session.getLeafId()) {
      const { entries } = collectEntriesForBranchSummary(session, session.getLeafId(), targetId);
      if (entries.length > 0) summarizer = await getSummarizer();
      else warn(`nothing on the current branch is left behind by moving to ${targetId}; no summary written`);
    }
    if (summarizer) progress(`summarizing the branch being left with ${summarizer.name}…`);
    const result = await navigateTree(session, targetId, {
      summarize: wantsSummary,
      customInstructions: options.instructions,
      replaceInstructions: options.replaceInstructions,
      summarizer,
      signal,
      reserveTokens: options.reserveTokens,
    });
    if (result.aborted || result.cancelled) {
      throw new CheckoutCancelledError(`checkout cancelled: no summary written and ${file} is unchanged`);
    }
    await session.flush();
    const entry = result.summaryEntry;
    const lists = (entry?.details ?? {}) as { readFiles?: string[]; modifiedFiles?: string[] };
    return {
      file,
      targetId,
      oldLeafId: result.oldLeafId,
      newLeafId: result.newLeafId,
      editorText: result.editorText ?? null,
      changed: result.oldLeafId !== result.newLeafId,
      summary: entry
        ? {
            id: entry.id,
            parentId: entry.parentId,
            text: entry.summary,
            readFiles: lists.readFiles ?? [],
            modifiedFiles: lists.modifiedFiles ?? [],
            summarizer: summarizer?.name ?? "hook",
          }
        : null,
    };
  } finally {
    await session.close();
  }
}

export interface CheckoutPreview {
  file: string;
  targetId: string;
  oldLeafId: string | null;
  /** where the leaf would go (a branch summary would hang off it) */
  newLeafId: string | null;
  editorText: string | null;
  commonAncestorId: string | null;
  /** the budget the summary would use, from the summarizer's window */
  budget: number;
  /** every abandoned entry, oldest first; `summarized` marks what fits the budget */
  entries: { id: string; type: string; kind: string; tokens: number; summarized: boolean; preview: string }[];
  messageCount: number;
  totalTokens: number;
  readFiles: string[];
  modifiedFiles: string[];
}

/** What a checkout would summarize, without writing anything. */
export async function previewCheckout(
  path: string,
  id: string,
  contextWindow: number,
  reserveTokens?: number,
): Promise<CheckoutPreview> {
  const session = await openForReading(path);
  const targetId = resolveEntryId(session, id);
  const target = session.getEntry(targetId) as SessionEntry;
  const oldLeafId = session.getLeafId();
  const destination = destinationOf(target);
  const moving = targetId !== oldLeafId;
  const { entries, commonAncestorId } = moving
    ? collectEntriesForBranchSummary(session, oldLeafId, targetId)
    : { entries: [], commonAncestorId: oldLeafId };
  const budget = branchSummaryBudget(contextWindow, reserveTokens ?? DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS);
  const prepared = prepareBranchEntries(entries, budget);
  // The preparation keeps the newest messages: the last `messageCount` entries that have one.
  let remaining = prepared.messages.length;
  const rows: CheckoutPreview["entries"] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    const message = branchMessageFromEntry(entry);
    const summarized = message !== undefined && remaining > 0;
    if (summarized) remaining--;
    const preview = entryPreview(entry);
    rows.push({
      id: entry.id,
      type: entry.type,
      kind: preview.kind,
      tokens: message ? estimateTokens(message) : 0,
      summarized,
      preview: clip(preview.text, 200),
    });
  }
  rows.reverse();
  return {
    file: session.getLocation() ?? path,
    targetId,
    oldLeafId,
    newLeafId: moving ? destination.leafId : oldLeafId,
    editorText: moving ? (destination.editorText ?? null) : null,
    commonAncestorId,
    budget,
    entries: rows,
    messageCount: prepared.messages.length,
    totalTokens: prepared.totalTokens,
    ...computeFileLists(prepared.fileOps),
  };
}

// ---------------------------------------------------------------- human output

const leafName = (id: string | null) => id ?? "(before the first entry)";

export function formatCheckout(result: CheckoutResult, c: Colors): string {
  if (!result.changed) return `${result.targetId} already is the leaf; nothing changed`;
  const lines = [`leaf: ${c.green(leafName(result.newLeafId))} ${c.dim(`(was ${leafName(result.oldLeafId)})`)}`];
  if (result.editorText !== null) {
    lines.push("", c.bold(`message to edit and send again (${result.targetId}):`), indent(result.editorText));
  }
  if (result.summary) {
    lines.push("", c.bold(`branch summary ${result.summary.id} (${result.summary.summarizer}):`), indent(result.summary.text));
  }
  return lines.join("\n");
}

export function formatPreview(preview: CheckoutPreview, c: Colors): string {
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
  for (const row of preview.entries) {
    const mark = row.summarized ? c.green("+") : c.dim("-");
    const tokens = row.tokens > 0 ? c.dim(` ${formatCount(row.tokens)} tok`) : "";
    lines.push(`  ${mark} ${row.id} ${row.kind}${tokens} ${c.dim(clip(row.preview, 60))}`);
  }
  if (preview.readFiles.length > 0) lines.push(`read files: ${preview.readFiles.join(", ")}`);
  if (preview.modifiedFiles.length > 0) lines.push(`modified files: ${preview.modifiedFiles.join(", ")}`);
  return lines.join("\n");
}

// ---------------------------------------------------------------- command

interface CommandOptions extends SummarizerOptionValues {
  summarize?: boolean;
  instructions?: string;
  replaceInstructions?: boolean;
  dryRun?: boolean;
  json?: boolean;
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
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .argument("<id>", "entry id (unique prefix accepted)")
    .option("--summarize", "leave a summary of the abandoned branch at the destination")
    .option("--instructions <text>", "extra focus for the summary (added to the branch prompt)")
    .option("--replace-instructions", "use --instructions as the whole prompt instead of adding it")
    .option("--dry-run", "show what would be summarized (common ancestor, entries, tokens, files); write nothing")
    .option("--json", "print stable JSON");
  addSummarizerOptions(command).action(
    runAction(async (path: string, id: string, options: CommandOptions) => {
      const c = colors();
      if (options.instructions !== undefined && !options.summarize && !options.dryRun) {
        warn("--instructions has no effect without --summarize");
      }
      if (options.dryRun) {
        const preview = await previewCheckout(path, id, await previewWindow(options));
        if (options.json) printJson(preview);
        else print(formatPreview(preview, c));
        return;
      }

      const interrupt = abortOnInterrupt();
      try {
        const result = await checkoutSession(
          path,
          id,
          { summarize: options.summarize, instructions: options.instructions, replaceInstructions: options.replaceInstructions },
          () => summarizerFromOptions(options),
          interrupt.signal,
        );
        if (options.json) printJson(result);
        else print(formatCheckout(result, c));
      } catch (error) {
        if (!(error instanceof CheckoutCancelledError)) throw error;
        process.stderr.write(`bonsai: ${error.message}\n`);
        process.exitCode = INTERRUPTED;
      } finally {
        interrupt.dispose();
      }
    }),
  );
}
