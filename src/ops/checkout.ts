/**
 * Checking out an entry of a stored session: the leaf moves there (persisted), optionally with
 * a summary of the branch being left at the destination. The operation behind `bonsai checkout`;
 * the move itself is navigateTree's (ops/navigate.ts), this adds opening the session, resolving
 * the id the user typed, making the summarizer only when a summary is due, and the report.
 */
import {
  branchMessageFromEntry,
  branchSummaryBudget,
  collectEntriesForBranchSummary,
  DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS,
  prepareBranchEntries,
} from "../compaction/branch-summary.js";
import { computeFileLists } from "../compaction/file-ops.js";
import { estimateTokens } from "../compaction/tokens.js";
import type { SessionEntry } from "../format/entry-types.js";
import { clip, entryPreview } from "../messages/preview.js";
import type { SessionManager } from "../session/manager.js";
import type { Summarizer } from "../summarizer/types.js";
import { OperationCancelledError } from "./cancelled.js";
import { resolveEntryId } from "./entry-id.js";
import { destinationOf, navigateTree } from "./navigate.js";
import { openWithStableIds, readTarget, type SessionTarget, type WarningListener, withSession } from "./open-session.js";
import { resolveSummarizer, type LazySummarizer } from "./lazy-summarizer.js";

/** Thrown when the summary was interrupted through the signal; the session is unchanged. */
export class CheckoutCancelledError extends OperationCancelledError {
  override name = "CheckoutCancelledError";
  constructor(readonly file: string) {
    super(`checkout cancelled: no summary written and ${file} is unchanged`);
  }
}

export interface CheckoutOptions {
  /** leave a summary of the abandoned branch at the destination */
  summarize?: boolean;
  instructions?: string;
  /** the instructions replace the branch prompt instead of adding a focus to it */
  replaceInstructions?: boolean;
  /** `branchSummary.reserveTokens` (default 16384) */
  reserveTokens?: number;
  /** report what would be summarized; write nothing and make no summarizer */
  dryRun?: boolean;
  /** the dry run's budget comes from this window (0 or unset: the default window) */
  contextWindow?: number;
  /** needed for a summary; a function is called only when the move leaves entries behind */
  summarizer?: LazySummarizer;
  /** aborting it throws CheckoutCancelledError and leaves the session as it was */
  signal?: AbortSignal;
  onWarning?: WarningListener;
  /** right before the summarizer starts working */
  onSummarizing?: (summarizer: Summarizer) => void;
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

/** What moving the leaf of an open session to `targetId` would leave behind and summarize. Pure. */
export function previewCheckout(session: SessionManager, targetId: string, budget: number, file: string): CheckoutPreview {
  const target = session.getEntry(targetId) as SessionEntry;
  const oldLeafId = session.getLeafId();
  const destination = destinationOf(target);
  const moving = targetId !== oldLeafId;
  const { entries, commonAncestorId } = moving
    ? collectEntriesForBranchSummary(session, oldLeafId, targetId, session.getDialect())
    : { entries: [], commonAncestorId: oldLeafId };
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
    file,
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

/**
 * Moves the leaf of `target` to entry `id` (a unique prefix will do), or with `dryRun` reports
 * what the move would summarize. Older formats are refused for the move: their ids are made up
 * on each read. A location is opened and closed here; a SessionManager is left open.
 */
export function checkoutSession(target: SessionTarget, id: string, options: CheckoutOptions & { dryRun: true }): Promise<CheckoutPreview>;
export function checkoutSession(target: SessionTarget, id: string, options?: CheckoutOptions & { dryRun?: false }): Promise<CheckoutResult>;
export function checkoutSession(target: SessionTarget, id: string, options?: CheckoutOptions): Promise<CheckoutPreview | CheckoutResult>;
export async function checkoutSession(target: SessionTarget, id: string, options: CheckoutOptions = {}): Promise<CheckoutPreview | CheckoutResult> {
  if (options.dryRun) {
    const opened = await readTarget(target, options.onWarning);
    return withSession(opened, () => {
      const budget = branchSummaryBudget(options.contextWindow ?? 0, options.reserveTokens ?? DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS);
      return previewCheckout(opened.session, resolveEntryId(opened.session, id), budget, opened.file);
    });
  }
  const opened = await openWithStableIds(target, { onWarning: options.onWarning });
  return withSession(opened, () => moveLeaf(opened.session, resolveEntryId(opened.session, id), opened.file, options));
}

async function moveLeaf(session: SessionManager, targetId: string, file: string, options: CheckoutOptions): Promise<CheckoutResult> {
  const wantsSummary = options.summarize === true;
  let summarizer: Summarizer | undefined;
  if (wantsSummary && targetId !== session.getLeafId()) {
    const { entries } = collectEntriesForBranchSummary(session, session.getLeafId(), targetId, session.getDialect());
    if (entries.length > 0) summarizer = await resolveSummarizer(options.summarizer, "the branch summary");
    else options.onWarning?.(`nothing on the current branch is left behind by moving to ${targetId}; no summary written`);
  }
  if (summarizer) options.onSummarizing?.(summarizer);
  const result = await navigateTree(session, targetId, {
    summarize: wantsSummary,
    customInstructions: options.instructions,
    replaceInstructions: options.replaceInstructions,
    summarizer,
    signal: options.signal,
    reserveTokens: options.reserveTokens,
  });
  if (result.aborted || result.cancelled) throw new CheckoutCancelledError(file);
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
}
