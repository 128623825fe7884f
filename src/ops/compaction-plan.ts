/**
 * What a compaction of a session's current branch would do, as a report: the cut, the message
 * counts, the tokens and the files. Pure over an open session; `bonsai compact --dry-run --json`
 * prints it as it is, and the report of a real compaction extends it.
 */
import { computeFileLists } from "../compaction/file-ops.js";
import { type CompactionPreparation, planCompaction } from "../compaction/prepare.js";
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS } from "../compaction/settings.js";
import { estimateMessagesTokens } from "../compaction/tokens.js";
import type { SessionManager } from "../session/manager.js";

export interface CompactionBudgetOptions {
  /** estimated tokens kept verbatim (default DEFAULT_COMPACTION_SETTINGS.keepRecentTokens) */
  keepRecentTokens?: number;
  /** tokens reserved for replies; sizes the summaries */
  reserveTokens?: number;
  /** the first user message counts as pinned (compaction.pinFirstRequest) */
  pinFirstRequest?: boolean;
}

export function compactionSettings(options: CompactionBudgetOptions, base: Readonly<CompactionSettings> = DEFAULT_COMPACTION_SETTINGS): CompactionSettings {
  return {
    ...base,
    ...(options.keepRecentTokens !== undefined ? { keepRecentTokens: options.keepRecentTokens } : {}),
    ...(options.reserveTokens !== undefined ? { reserveTokens: options.reserveTokens } : {}),
    ...(options.pinFirstRequest !== undefined ? { pinFirstRequest: options.pinFirstRequest } : {}),
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

/**
 * The plan for the current branch of `session` (named `file` in the report), with the
 * preparation to summarize when there is something to compact.
 */
export function planBranchCompaction(
  session: SessionManager,
  file: string,
  settings: CompactionSettings,
): { report: CompactPlanReport; preparation?: CompactionPreparation } {
  const branch = session.getBranch();
  const estimatedTokensBefore = estimateMessagesTokens(session.buildSessionContext().messages);
  const plan = planCompaction(branch, settings, session.getDialect());
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
  if (!plan.ok) return { report: { ...base, reason: plan.reason, message: plan.message } };
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
    estimatedKeptTokens: estimateMessagesTokens(p.recentMessages),
    keepRecentTokens: p.keepRecentTokens,
    usageRatio: p.usageRatio ?? null,
    hasPreviousSummary: p.previousSummary !== undefined,
    ...computeFileLists(p.fileOps),
  };
  return { report, preparation: p };
}
