/**
 * Branch summaries: when the user moves the leaf to another part of the tree, the entries of the
 * branch being left are summarized so what was learned there is not lost.
 * `collectEntriesForBranchSummary` and `prepareBranchEntries` are pure; `generateBranchSummary`
 * makes the one summarizer call.
 */
import { convertToLlm } from "../messages/convert.js";
import { serializeConversation } from "../messages/serialize.js";
import type { AgentMessage } from "../format/message-types.js";
import {
  BRANCH_SUMMARY_PREAMBLE,
  BRANCH_SUMMARY_SYSTEM_PROMPT,
  branchSummaryInstructions,
  branchSummaryPrompt,
} from "../prompts/branch.js";
import {
  branchSummaryMessageFromEntry,
  compactionSummaryMessageFromEntry,
  customMessageFromEntry,
  shownMessages,
} from "../format/context.js";
import type { FileLists, SessionEntry } from "../format/entry-types.js";
import type { Dialect } from "../format/dialects/index.js";
import { SummarizationAbortedError, type Summarizer } from "../summarizer/types.js";
import { addFileLists, carriesFileLists, computeFileLists, createFileOps, extractFileOpsFromMessage, type FileOps, formatFileOperations } from "./file-ops.js";
import { estimateTokens } from "./tokens.js";

/** What collection needs from a session: any SessionManager-like store will do. */
export interface BranchSource {
  getBranch(fromId: string): readonly SessionEntry[];
  getEntry(id: string): SessionEntry | undefined;
}

export interface CollectedBranchEntries {
  /** the abandoned entries, oldest first */
  entries: SessionEntry[];
  /** the deepest entry both paths share; null when they share nothing (or there is no old leaf) */
  commonAncestorId: string | null;
}

/**
 * The entries on the path of `oldLeafId` below its deepest common ancestor with `targetId`,
 * oldest first. Compactions are not a boundary: they are collected like any other entry, and
 * their summaries stand for the history they replaced. With the session's `dialect`, each is as
 * the old leaf's context showed it (see visibleAsContext): what the agent dropped stays dropped.
 */
export function collectEntriesForBranchSummary(
  session: BranchSource,
  oldLeafId: string | null | undefined,
  targetId: string,
  dialect?: Dialect,
): CollectedBranchEntries {
  if (!oldLeafId) return { entries: [], commonAncestorId: null };
  const oldPath = new Set(session.getBranch(oldLeafId).map((e) => e.id));
  const targetPath = session.getBranch(targetId);
  let commonAncestorId: string | null = null;
  for (let i = targetPath.length - 1; i >= 0; i--) {
    if (oldPath.has(targetPath[i].id)) {
      commonAncestorId = targetPath[i].id;
      break;
    }
  }
  const entries: SessionEntry[] = [];
  // `seen` guards against a parent cycle in a damaged file: the walk stops instead of looping.
  const seen = new Set<string>();
  let current: string | null = oldLeafId;
  while (current && current !== commonAncestorId && !seen.has(current)) {
    const entry = session.getEntry(current);
    if (!entry) break;
    seen.add(current);
    entries.push(entry);
    current = entry.parentId;
  }
  entries.reverse();
  return { entries: dialect ? visibleAsContext(entries, session.getBranch(oldLeafId), dialect) : entries, commonAncestorId };
}

/**
 * Abandoned entries as the context of the old leaf showed them: an entry it did not show (cleared
 * by a /clear, left out by a context edit, a failed turn) is left out, an edited one carries its
 * edit, and a compaction stays (its summary stands for what it replaced).
 */
function visibleAsContext(entries: readonly SessionEntry[], oldPath: readonly SessionEntry[], dialect: Dialect): SessionEntry[] {
  const shown = shownMessages(oldPath, dialect);
  return entries.flatMap((entry): SessionEntry[] => {
    if (entry.type === "compaction") return [entry];
    const message = shown.get(entry.id);
    if (!message) return [];
    if (entry.type === "message") return [{ ...entry, message }];
    if (entry.type === "custom_message" && message.role === "custom") return [{ ...entry, content: message.content }];
    return [entry];
  });
}

export interface PreparedBranchEntries {
  /** messages to summarize, oldest first */
  messages: AgentMessage[];
  /** files read and changed, cumulative over earlier summaries in the range */
  fileOps: FileOps;
  /** estimated tokens of `messages` */
  totalTokens: number;
}

/**
 * The message an abandoned entry contributes to its summary. Tool results are left out (the
 * calls that produced them say enough, and they are the bulk); compactions and branch summaries
 * speak for the history they stand for.
 */
export function branchMessageFromEntry(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message.role === "toolResult" ? undefined : entry.message;
    case "custom_message":
      return customMessageFromEntry(entry);
    case "branch_summary":
      return branchSummaryMessageFromEntry(entry);
    case "compaction":
      return compactionSummaryMessageFromEntry(entry);
    default:
      return undefined;
  }
}

/** Share of the budget under which a summary entry is still admitted even if it overshoots. */
const SUMMARY_ADMISSION_SHARE = 0.9;

/**
 * Chooses what of the abandoned entries fits `tokenBudget` (0: no limit), newest first, so a
 * long branch keeps its end. File lists of earlier summaries in the range (branch summaries and,
 * unlike the reference, compactions: ARCHITECTURE.md decision 9) are carried over whatever the budget.
 */
export function prepareBranchEntries(entries: readonly SessionEntry[], tokenBudget = 0): PreparedBranchEntries {
  const fileOps = createFileOps();
  for (const entry of entries) {
    if ((entry.type === "branch_summary" || entry.type === "compaction") && carriesFileLists(entry)) {
      addFileLists(fileOps, entry.details as Partial<FileLists> | undefined);
    }
  }

  const messages: AgentMessage[] = [];
  let totalTokens = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    const message = branchMessageFromEntry(entry);
    if (!message) continue;
    // The first message that does not fit still reports its files: the summary will not
    // describe it, but the file lists should not forget what it touched.
    extractFileOpsFromMessage(message, fileOps);
    const tokens = estimateTokens(message);
    if (tokenBudget > 0 && totalTokens + tokens > tokenBudget) {
      // A summary condenses everything older than itself: worth overshooting for, as long as
      // there is still real room left.
      const isSummary = entry.type === "compaction" || entry.type === "branch_summary";
      if (isSummary && totalTokens < tokenBudget * SUMMARY_ADMISSION_SHARE) {
        messages.push(message);
        totalTokens += tokens;
      }
      break;
    }
    messages.push(message);
    totalTokens += tokens;
  }
  messages.reverse();
  return { messages, fileOps, totalTokens };
}

export const DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS = 16384;
/** Window assumed when the summarizer does not know its own. */
export const DEFAULT_SUMMARIZER_WINDOW = 128000;
export const BRANCH_SUMMARY_MAX_TOKENS = 2048;
export const NO_CONTENT_SUMMARY = "No content to summarize";
export const NO_SUMMARY_GENERATED = "No summary generated";

export interface GenerateBranchSummaryOptions {
  summarizer: Summarizer;
  signal?: AbortSignal;
  /** appended as "Additional focus" to the branch prompt, or replacing it with `replaceInstructions` */
  customInstructions?: string;
  replaceInstructions?: boolean;
  /** tokens of the summarizer's window kept free for the prompt and the answer (default 16384) */
  reserveTokens?: number;
}

export interface BranchSummaryResult {
  /** the text to store: preamble, blank line, summary, file tags */
  summary?: string;
  readFiles?: string[];
  modifiedFiles?: string[];
  /** the signal fired: nothing was produced */
  aborted?: boolean;
  /** the summarizer failed; the message says why */
  error?: string;
}

/**
 * The token budget for the abandoned branch: the summarizer's window (or 128,000 when unknown)
 * minus the reserve. A reserve as large as the window would leave no budget, which the
 * preparation reads as "no limit"; half the window is used instead so the request still fits.
 */
export function branchSummaryBudget(contextWindow: number, reserveTokens = DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS): number {
  const window = contextWindow > 0 ? contextWindow : DEFAULT_SUMMARIZER_WINDOW;
  const budget = window - reserveTokens;
  return budget > 0 ? budget : Math.floor(window / 2);
}

/** The stored text: preamble, a blank line, the summary, then the file tags (ARCHITECTURE.md decision 6). */
export function formatBranchSummary(text: string, lists: FileLists): string {
  const body = text.trim() ? text : NO_SUMMARY_GENERATED;
  return `${BRANCH_SUMMARY_PREAMBLE}\n\n${body}${formatFileOperations(lists.readFiles, lists.modifiedFiles)}`;
}

/**
 * Summarizes abandoned entries (oldest first) with one summarizer call. Never throws for a
 * failed or cancelled call: the result says `aborted` or `error`. When nothing in the range has
 * text, the result is "No content to summarize" and still carries the file lists (ARCHITECTURE.md decision 9).
 */
export async function generateBranchSummary(
  entries: readonly SessionEntry[],
  options: GenerateBranchSummaryOptions,
): Promise<BranchSummaryResult> {
  const { summarizer, signal } = options;
  if (signal?.aborted) return { aborted: true };
  const budget = branchSummaryBudget(summarizer.contextWindow, options.reserveTokens);
  const { messages, fileOps } = prepareBranchEntries(entries, budget);
  const lists = computeFileLists(fileOps);
  if (messages.length === 0) {
    return {
      summary: NO_CONTENT_SUMMARY + formatFileOperations(lists.readFiles, lists.modifiedFiles),
      ...lists,
    };
  }

  const conversation = serializeConversation(convertToLlm(messages));
  const instructions = branchSummaryInstructions(options.customInstructions, options.replaceInstructions);
  let text: string;
  try {
    const result = await summarizer.summarize({
      systemPrompt: BRANCH_SUMMARY_SYSTEM_PROMPT,
      prompt: branchSummaryPrompt(conversation, instructions),
      maxTokens: BRANCH_SUMMARY_MAX_TOKENS,
      signal,
      purpose: "branch",
    });
    text = result.text;
  } catch (error) {
    if (error instanceof SummarizationAbortedError || signal?.aborted) return { aborted: true };
    return { error: error instanceof Error && error.message ? error.message : "Summarization failed" };
  }
  // A summarizer that ignores the signal still must not get its answer stored after an abort.
  if (signal?.aborted) return { aborted: true };
  return { summary: formatBranchSummary(text, lists), ...lists };
}
