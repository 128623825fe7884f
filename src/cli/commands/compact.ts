/**
 * `bonsai compact FILE [--instructions T] [--keep-recent N] [--dry-run] [--json]`: summarizes the
 * older part of a session's current branch into a compaction entry; only recent entries stay
 * verbatim. `--dry-run` shows the cut and the counts without calling a summarizer. Ctrl-C while
 * the summarizer works cancels it and leaves the file byte for byte as it was.
 */
import type { Command } from "commander";
import { nonNegativeInteger } from "../numeric-options.js";
import { type CompactionResult, compact } from "../../compaction/compact.js";
import { computeFileLists } from "../../compaction/file-ops.js";
import { type CompactionPreparation, planCompaction } from "../../compaction/prepare.js";
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS } from "../../compaction/settings.js";
import { estimateTokens } from "../../compaction/tokens.js";
import type { AgentMessage } from "../../format/message-types.js";
import type { SessionManager } from "../../session/manager.js";
import { SummarizationAbortedError, type Summarizer } from "../../summarizer/types.js";
import {
  abortOnInterrupt,
  CliError,
  type Colors,
  colors,
  formatCount,
  indent,
  print,
  printJson,
  INTERRUPTED,
  runAction,
  warn,
} from "../output.js";
import { openForReading, openForWriting, persistMigration } from "../open-session.js";
import { addSummarizerOptions, type SummarizerOptionValues, summarizerFromOptions } from "../summarizer-options.js";

/** Thrown when the summarizer was interrupted; the session file is unchanged. */
export class CompactionCancelledError extends CliError {}

const sumTokens = (messages: readonly AgentMessage[]) => messages.reduce((sum, m) => sum + estimateTokens(m), 0);

export interface CompactCommandOptions {
  instructions?: string;
  keepRecentTokens?: number;
  reserveTokens?: number;
  /** ask for a short summary too (default true) */
  shortSummary?: boolean;
}

function settingsFrom(options: CompactCommandOptions): CompactionSettings {
  return {
    ...DEFAULT_COMPACTION_SETTINGS,
    ...(options.keepRecentTokens !== undefined ? { keepRecentTokens: options.keepRecentTokens } : {}),
    ...(options.reserveTokens !== undefined ? { reserveTokens: options.reserveTokens } : {}),
  };
}

/** What a compaction would do (or, when `compacted`, did) to the current branch. */
export interface CompactPlanReport {
  file: string;
  compacted: boolean;
  /** why nothing happens: "already-compacted" or "nothing-to-compact" */
  reason: string | null;
  message: string | null;
  firstKeptEntryId: string | null;
  /** index of the first kept entry on the branch (root first) */
  firstKeptEntryIndex: number | null;
  branchLength: number;
  isSplitTurn: boolean;
  messagesToSummarize: number;
  turnPrefixMessages: number;
  keptMessages: number;
  /** the context size the compaction entry records: fresh usage plus estimates */
  tokensBefore: number;
  /** estimated tokens of the context before, and of the messages that stay verbatim */
  estimatedTokensBefore: number;
  estimatedKeptTokens: number;
  keepRecentTokens: number;
  usageRatio: number | null;
  hasPreviousSummary: boolean;
  readFiles: string[];
  modifiedFiles: string[];
}

export interface CompactReport extends CompactPlanReport {
  compactionId: string | null;
  summarizer: string | null;
  /** estimated tokens of the context after the compaction (summary included) */
  estimatedTokensAfter: number | null;
  summary: string | null;
  shortSummary: string | null;
}

function planReport(session: SessionManager, file: string, settings: CompactionSettings) {
  const branch = session.getBranch();
  const estimatedTokensBefore = sumTokens(session.buildSessionContext().messages);
  const plan = planCompaction(branch, settings);
  const base: CompactPlanReport = {
    file,
    compacted: false,
    reason: null,
    message: null,
    firstKeptEntryId: null,
    firstKeptEntryIndex: null,
    branchLength: branch.length,
    isSplitTurn: false,
    messagesToSummarize: 0,
    turnPrefixMessages: 0,
    keptMessages: 0,
    tokensBefore: 0,
    estimatedTokensBefore,
    estimatedKeptTokens: estimatedTokensBefore,
    keepRecentTokens: settings.keepRecentTokens,
    usageRatio: null,
    hasPreviousSummary: false,
    readFiles: [],
    modifiedFiles: [],
  };
  if (!plan.ok) return { report: { ...base, reason: plan.reason, message: plan.message }, preparation: undefined };
  const p = plan.preparation;
  const report: CompactPlanReport = {
    ...base,
    firstKeptEntryId: p.firstKeptEntryId,
    firstKeptEntryIndex: p.firstKeptEntryIndex,
    isSplitTurn: p.isSplitTurn,
    messagesToSummarize: p.messagesToSummarize.length,
    turnPrefixMessages: p.turnPrefixMessages.length,
    keptMessages: p.recentMessages.length,
    tokensBefore: p.tokensBefore,
    estimatedKeptTokens: sumTokens(p.recentMessages),
    keepRecentTokens: p.keepRecentTokens,
    usageRatio: p.usageRatio ?? null,
    hasPreviousSummary: p.previousSummary !== undefined,
    ...computeFileLists(p.fileOps),
  };
  return { report, preparation: p };
}

/** The preparation of a compaction of the session at `path`, read-only. */
export async function previewCompaction(path: string, options: CompactCommandOptions = {}): Promise<CompactPlanReport> {
  const session = await openForReading(path);
  try {
    return planReport(session, session.getLocation() ?? path, settingsFrom(options)).report;
  } finally {
    await session.close();
  }
}

export interface CompactHooks {
  /** awaited once, right before the summarizer starts working (to start a spinner) */
  onSummarizing?: (summarizer: Summarizer, preparation: CompactionPreparation) => void | Promise<void>;
}

/**
 * Compacts the current branch of the session at `path` and appends the compaction entry. The
 * summarizer is created only when there is something to summarize. An abort through `signal`
 * throws CompactionCancelledError and leaves the file unchanged.
 */
export async function compactSession(
  path: string,
  options: CompactCommandOptions,
  getSummarizer: () => Promise<Summarizer>,
  signal?: AbortSignal,
  hooks: CompactHooks = {},
): Promise<CompactReport> {
  const target = await openForWriting(path);
  const { session, file } = target;
  try {
    const { report, preparation } = planReport(session, file, settingsFrom(options));
    const unchanged = { compactionId: null, summarizer: null, estimatedTokensAfter: null, summary: null, shortSummary: null };
    if (!preparation) return { ...report, ...unchanged };
    const summarizer = await getSummarizer();
    await hooks.onSummarizing?.(summarizer, preparation);
    let result: CompactionResult;
    try {
      result = await compact(preparation, summarizer, {
        customInstructions: options.instructions,
        shortSummary: options.shortSummary !== false,
        signal,
        onWarning: warn,
      });
    } catch (error) {
      if (error instanceof SummarizationAbortedError || signal?.aborted) {
        throw new CompactionCancelledError(`compaction cancelled: ${file} is unchanged`);
      }
      throw error;
    }
    if (signal?.aborted) throw new CompactionCancelledError(`compaction cancelled: ${file} is unchanged`);
    persistMigration(target);
    const compactionId = session.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, result.details, undefined, {
      ...(result.shortSummary !== undefined ? { shortSummary: result.shortSummary } : {}),
    });
    await session.flush();
    return {
      ...report,
      compacted: true,
      compactionId,
      summarizer: summarizer.name,
      estimatedTokensAfter: sumTokens(session.buildSessionContext().messages),
      summary: result.summary,
      shortSummary: result.shortSummary ?? null,
      readFiles: result.details.readFiles,
      modifiedFiles: result.details.modifiedFiles,
    };
  } finally {
    await session.close();
  }
}

// ---------------------------------------------------------------- human output

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

export function formatReport(report: CompactReport, c: Colors): string {
  if (!report.compacted) return report.message ?? report.reason ?? "nothing done";
  const after = report.estimatedTokensAfter ?? 0;
  return [
    c.bold(`compacted ${report.file} with ${report.summarizer}`),
    `tokens: ${formatCount(report.estimatedTokensBefore)} before, ${c.green(formatCount(after))} after (estimated context)`,
    cutLine(report),
    `messages: ${report.messagesToSummarize + report.turnPrefixMessages} summarized, ${report.keptMessages} kept verbatim`,
    `compaction entry: ${report.compactionId}`,
    "",
    c.bold("summary:"),
    indent(report.summary ?? ""),
  ].join("\n");
}

// ---------------------------------------------------------------- command

interface CommandOptions extends SummarizerOptionValues {
  instructions?: string;
  keepRecent?: number;
  reserve?: number;
  shortSummary?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

/**
 * A spinner with elapsed seconds on stderr, only for a terminal that reports its width (the
 * spinner measures lines by it). Returns its stop function, which may be called more than once.
 */
async function startSpinner(text: string): Promise<(ok: boolean) => void> {
  if (!process.stderr.isTTY || !(process.stderr.columns > 0)) return () => {};
  const { createSpinner } = await import("nanospinner");
  const started = Date.now();
  const own = { SIGINT: new Set(process.listeners("SIGINT")), SIGTERM: new Set(process.listeners("SIGTERM")) };
  const spinner = createSpinner(text, { stream: process.stderr }).start();
  // nanospinner exits the process on Ctrl-C; the command's own handler cancels cleanly instead.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    for (const listener of process.listeners(signal)) if (!own[signal].has(listener)) process.off(signal, listener);
  }
  const timer = setInterval(() => spinner.update({ text: `${text} ${Math.floor((Date.now() - started) / 1000)}s` }), 1000);
  let stopped = false;
  return (ok) => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    const done = `${text} ${((Date.now() - started) / 1000).toFixed(1)}s`;
    if (ok) spinner.success({ text: done });
    else spinner.stop();
  };
}

export function register(program: Command): void {
  const command = program
    .command("compact")
    .description("summarize the older part of the current branch into a compaction entry, keeping recent entries verbatim")
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .option("--instructions <text>", "what the summary should focus on")
    .option("--keep-recent <tokens>", `estimated tokens kept verbatim (default ${DEFAULT_COMPACTION_SETTINGS.keepRecentTokens})`, nonNegativeInteger)
    .option("--reserve <tokens>", `tokens reserved for replies; sizes the summaries (default ${DEFAULT_COMPACTION_SETTINGS.reserveTokens})`, nonNegativeInteger)
    .option("--no-short-summary", "skip the two-sentence short summary")
    .option("--dry-run", "show the cut, the counts and the tokens; call no summarizer and write nothing")
    .option("--json", "print stable JSON");
  addSummarizerOptions(command).action(
    runAction(async (path: string, options: CommandOptions) => {
      const c = colors();
      const settings: CompactCommandOptions = {
        instructions: options.instructions,
        keepRecentTokens: options.keepRecent,
        reserveTokens: options.reserve,
        shortSummary: options.shortSummary,
      };
      if (options.dryRun) {
        const plan = await previewCompaction(path, settings);
        if (options.json) printJson(plan);
        else print(formatPlan(plan, c));
        return;
      }

      const interrupt = abortOnInterrupt();
      let stopSpinner: (ok: boolean) => void = () => {};
      try {
        const report = await compactSession(path, settings, () => summarizerFromOptions(options), interrupt.signal, {
          onSummarizing: async (summarizer) => {
            stopSpinner = await startSpinner(`summarizing with ${summarizer.name}…`);
          },
        });
        stopSpinner(report.compacted);
        if (options.json) printJson(report);
        else print(formatReport(report, c));
      } catch (error) {
        stopSpinner(false);
        if (!(error instanceof CompactionCancelledError)) throw error;
        process.stderr.write(`bonsai: ${error.message}\n`);
        process.exitCode = INTERRUPTED;
      } finally {
        interrupt.dispose();
      }
    }),
  );
}
