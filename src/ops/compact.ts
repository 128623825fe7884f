/**
 * Compacting a stored session: plan the cut on the current branch, summarize the older part,
 * append the compaction entry. The operation behind `bonsai compact`, here in the library so
 * every front end compacts the same way (docs/ARCHITECTURE.md, layers). The summarize and append
 * steps are exported on their own for callers with their own policy around them (retries,
 * fallback models, hooks), such as the agent's compaction run.
 */
import { type CompactionResult, compact } from "../compaction/compact.js";
import type { CompactionPreparation } from "../compaction/prepare.js";
import { estimateMessagesTokens } from "../compaction/tokens.js";
import type { CompactionEntry } from "../format/entry-types.js";
import type { SessionManager } from "../session/manager.js";
import { SummarizationAbortedError, type Summarizer } from "../summarizer/types.js";
import { OperationCancelledError } from "./cancelled.js";
import { type CompactionBudgetOptions, type CompactPlanReport, compactionSettings, planBranchCompaction } from "./compaction-plan.js";
import {
  openForWriting,
  persistMigration,
  readTarget,
  type SessionTarget,
  type WarningListener,
  withSession,
} from "./open-session.js";
import { resolveSummarizer, type LazySummarizer } from "./lazy-summarizer.js";

export type { CompactPlanReport } from "./compaction-plan.js";

/** Thrown when the summarizer was interrupted through the signal; the session is unchanged. */
export class CompactionCancelledError extends OperationCancelledError {
  override name = "CompactionCancelledError";
  constructor(readonly file: string) {
    super(`compaction cancelled: ${file} is unchanged`);
  }
}

export interface CompactSessionOptions extends CompactionBudgetOptions {
  /** what the summary should focus on ("Additional focus: …") */
  instructions?: string;
  /** ask for a short summary too (default true) */
  shortSummary?: boolean;
  /** plan only: no summarizer is made and nothing is written, not even a format upgrade */
  dryRun?: boolean;
  /** needed unless `dryRun`; a function is called only when there is something to summarize */
  summarizer?: LazySummarizer;
  /** aborting it throws CompactionCancelledError and leaves the session as it was */
  signal?: AbortSignal;
  onWarning?: WarningListener;
  /** awaited once, right before the summarizer starts working (to start a spinner) */
  onSummarizing?: (summarizer: Summarizer, preparation: CompactionPreparation) => void | Promise<void>;
  /**
   * Shown the whole summary that would be written (file lists included) before anything is: it
   * returns the text to write instead, or undefined to cancel, which writes nothing and throws
   * CompactionCancelledError (`bonsai compact --edit`).
   */
  review?: (summary: string) => Promise<string | undefined>;
}

export interface CompactReport extends CompactPlanReport {
  compactionId: string | null;
  summarizer: string | null;
  /** estimated tokens of the context after the compaction (summary included) */
  estimatedTokensAfter: number | null;
  summary: string | null;
  shortSummary: string | null;
}

export interface SummarizeCompactionOptions {
  instructions?: string;
  shortSummary?: boolean;
  signal?: AbortSignal;
  onWarning?: WarningListener;
  /** replaces the history summary's instructions (a session.compacting hook's prompt) */
  promptOverride?: string;
  extraContext?: readonly string[];
  /** a line the summary ends with (CompactOptions.footer) */
  footer?: string;
  /** names the session in the cancellation message */
  file: string;
}

/**
 * The summary of a prepared compaction. An abort, whether the summarizer noticed it or not,
 * throws CompactionCancelledError: nothing is to be written after it.
 */
export async function summarizeCompaction(
  preparation: CompactionPreparation,
  summarizer: Summarizer,
  options: SummarizeCompactionOptions,
): Promise<CompactionResult> {
  const { signal } = options;
  let result: CompactionResult;
  try {
    result = await compact(preparation, summarizer, {
      customInstructions: options.instructions,
      shortSummary: options.shortSummary !== false,
      signal,
      onWarning: options.onWarning,
      ...(options.promptOverride !== undefined ? { promptOverride: options.promptOverride } : {}),
      ...(options.extraContext !== undefined ? { extraContext: options.extraContext } : {}),
      ...(options.footer !== undefined ? { footer: options.footer } : {}),
    });
  } catch (error) {
    if (error instanceof SummarizationAbortedError || signal?.aborted) throw new CompactionCancelledError(options.file);
    throw error;
  }
  if (signal?.aborted) throw new CompactionCancelledError(options.file);
  return result;
}

/** A compaction to store: compact()'s result, or one a hook supplied. */
export interface CompactionRecord extends Omit<CompactionResult, "details"> {
  details?: unknown;
  preserveData?: Record<string, unknown>;
}

/**
 * Appends the compaction entry and returns it as stored. `fromExtension` is recorded only when
 * given, so a plain compaction's line carries no hook fields.
 */
export function appendCompactionEntry(session: SessionManager, record: CompactionRecord, fromExtension?: boolean): CompactionEntry {
  const extras: { shortSummary?: string; preserveData?: Record<string, unknown> } = {};
  if (record.shortSummary !== undefined) extras.shortSummary = record.shortSummary;
  if (record.preserveData !== undefined) extras.preserveData = record.preserveData;
  const id = session.appendCompaction(record.summary, record.firstKeptEntryId, record.tokensBefore, record.details, fromExtension, extras);
  return session.getEntry(id) as CompactionEntry;
}

const NOT_COMPACTED = { compactionId: null, summarizer: null, estimatedTokensAfter: null, summary: null, shortSummary: null };

/**
 * Compacts the current branch of `target` and appends the compaction entry, or with `dryRun`
 * only reports the plan. The summarizer is made only when there is something to summarize; an
 * older format is upgraded on disk only right before the entry is written. A location is opened
 * and closed here; a SessionManager is left open, and its writes flushed.
 */
export function compactSession(target: SessionTarget, options: CompactSessionOptions & { dryRun: true }): Promise<CompactPlanReport>;
export function compactSession(target: SessionTarget, options?: CompactSessionOptions & { dryRun?: false }): Promise<CompactReport>;
export function compactSession(target: SessionTarget, options?: CompactSessionOptions): Promise<CompactPlanReport | CompactReport>;
export async function compactSession(target: SessionTarget, options: CompactSessionOptions = {}): Promise<CompactPlanReport | CompactReport> {
  const settings = compactionSettings(options);
  if (options.dryRun) {
    const opened = await readTarget(target, options.onWarning);
    return withSession(opened, () => planBranchCompaction(opened.session, opened.file, settings).report);
  }
  const writable = await openForWriting(target, options.onWarning);
  const { session, file } = writable;
  return withSession(writable, async () => {
    const { report, preparation } = planBranchCompaction(session, file, settings);
    if (!preparation) return { ...report, ...NOT_COMPACTED };
    const summarizer = await resolveSummarizer(options.summarizer, "the compaction");
    await options.onSummarizing?.(summarizer, preparation);
    const { instructions, shortSummary, signal, onWarning } = options;
    const result = await summarizeCompaction(preparation, summarizer, { instructions, shortSummary, signal, onWarning, file });
    if (options.review) {
      const reviewed = await options.review(result.summary);
      if (reviewed === undefined) throw new CompactionCancelledError(file ?? session.getLocation() ?? "the session");
      result.summary = reviewed;
    }
    persistMigration(writable, options.onWarning);
    const entry = appendCompactionEntry(session, result);
    await session.flush();
    return {
      ...report,
      compacted: true,
      compactionId: entry.id,
      summarizer: summarizer.name,
      estimatedTokensAfter: estimateMessagesTokens(session.buildSessionContext().messages),
      summary: result.summary,
      shortSummary: result.shortSummary ?? null,
      readFiles: result.details.readFiles,
      modifiedFiles: result.details.modifiedFiles,
    };
  });
}
