/**
 * compact(): turns a prepared compaction into its summary. The history (and, for a split turn,
 * the turn's beginning, in parallel) is summarized by the given Summarizer; an optional short
 * summary follows; the cumulative file lists are appended. Nothing is written here: the caller
 * appends the result with SessionManager.appendCompaction.
 */
import { convertToLlm } from "../messages/convert.js";
import { serializeConversation } from "../messages/serialize.js";
import type { AgentMessage } from "../format/message-types.js";
import { assembleSummaryPrompt } from "../prompts/assemble.js";
import {
  CHUNK_SUMMARY_PROMPT,
  COMPACTION_SYSTEM_PROMPT,
  INITIAL_SUMMARY_PROMPT,
  MERGE_SUMMARIES_PROMPT,
  MERGE_TURN_PREFIX_PROMPT,
  NO_PRIOR_HISTORY,
  SHORT_SUMMARY_PROMPT,
  SPLIT_TURN_HEADING,
  TURN_PREFIX_PROMPT,
  UPDATE_SUMMARY_PROMPT,
} from "../prompts/compaction.js";
import type { FileLists } from "../format/entry-types.js";
import { SummarizationAbortedError, type SummarizeResult, type Summarizer } from "../summarizer/types.js";
import { type ConversationSummaryRequest, estimateTextTokens, outputBudget, promptBudget, summarizeConversation } from "./chunking.js";
import { computeFileLists, formatFileOperations, stripFileOperations } from "./file-ops.js";
import type { CompactionPreparation } from "./prepare.js";
import { summaryTokenBudgets } from "./settings.js";
import { estimateMessagesTokens } from "./tokens.js";
import { errorText } from "../util/error-text.js";
import type { CoverageReport } from "../summarizer/coverage.js";
import { GUARD_WORDS } from "../summarizer/guard-language.js";
import {
  type GuardResult,
  type GuardSections,
  type GuardSettings,
  guardSummary,
  renderPinned,
  splitGuardSections,
  withoutPinned,
} from "../summarizer/summary-guard.js";
import { withLaterCorrections } from "../summarizer/later-corrections.js";
import type { NativeCompactionDetails } from "../summarizer/native-lane.js";

export interface CompactionDetails extends FileLists {
  /** what the coverage check appended (summarizer/coverage.ts); absent when the check is off */
  coverage?: CoverageReport;
  /** what the provider's own compaction billed and saved (agent/native-method.ts); absent for other methods */
  native?: NativeCompactionDetails;
}

export interface CompactionResult {
  summary: string;
  shortSummary?: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details: CompactionDetails;
  /** the coverage check's report, also in `details.coverage` (events carry it from here) */
  coverage?: CoverageReport;
}

export interface CompactOptions {
  /** the user's focus for this summary ("Additional focus: …") */
  customInstructions?: string;
  /** cancels every summarizer call; compact() then rejects with SummarizationAbortedError */
  signal?: AbortSignal;
  /** replaces the history summary's instructions (from a session.compacting hook) */
  promptOverride?: string;
  /** extra lines for the history and short summaries (from a session.compacting hook) */
  extraContext?: readonly string[];
  /** also produce a one-paragraph short summary (default true); its failure never fails the compaction */
  shortSummary?: boolean;
  /** hears problems that do not stop the compaction (a failed short summary) */
  onWarning?: (message: string) => void;
  /** longest tool result sent to the summarizer whole, in characters */
  maxToolResultChars?: number;
  /**
   * The verbatim user-requests section and the coverage check (summarizer/summary-guard.ts), both on
   * by default; `{ verbatimRequests: false, coverageCheck: false }` gives the reference's summary text.
   */
  guard?: GuardSettings;
  /**
   * A line the stored summary ends with, before the file lists (the recall tools' note): written
   * again by each compaction that is given it, taken out of the previous summary before anyone reads it.
   */
  footer?: string;
}

/** Serialized conversation, one part per message (chunking splits between parts). */
export function serializeParts(messages: readonly AgentMessage[], maxToolResultChars?: number): string[] {
  const options = maxToolResultChars !== undefined ? { maxToolResultChars } : {};
  const parts: string[] = [];
  for (const message of convertToLlm(messages)) {
    const text = serializeConversation([message], options);
    if (text) parts.push(text);
  }
  return parts;
}


/** A span of the conversation that compact() summarizes on its own. */
type Span = "history" | "turn prefix";

/**
 * The failure of one or both spans as the caller sees it: the user's cancellation stays one;
 * otherwise every failed span is named, history first, and one error shared by both is said once.
 * The message never depends on which of two parallel calls failed first.
 */
function spanFailure(failures: readonly { span: Span; error: unknown }[], userSignal: AbortSignal | undefined): Error {
  if (userSignal?.aborted) return new SummarizationAbortedError();
  const cause = failures[0]?.error;
  const texts = failures.map((f) => errorText(f.error));
  const label = (span: Span) => (span === "history" ? "Summarization failed" : "Turn prefix summarization failed");
  if (failures.length === 1) return new Error(`${label(failures[0].span)}: ${texts[0]}`, { cause });
  if (texts.every((t) => t === texts[0])) return new Error(`Summarization failed (history and turn prefix): ${texts[0]}`, { cause });
  return new Error(failures.map((f, i) => `${i === 0 ? label(f.span) : label(f.span).toLowerCase()}: ${texts[i]}`).join("; "), { cause });
}

function nonEmpty(result: SummarizeResult): SummarizeResult {
  if (!result.text.trim()) throw new Error("the summarizer returned an empty summary");
  return { ...result, text: result.text.trim() };
}

export async function compact(
  preparation: CompactionPreparation,
  summarizer: Summarizer,
  options: CompactOptions = {},
): Promise<CompactionResult> {
  if (options.signal?.aborted) throw new SummarizationAbortedError();
  if (!preparation.firstKeptEntryId) throw new Error("First kept entry has no id: run `bonsai migrate` on the session first");

  // The user's signal reaches every call. A failing span does not stop the other, so that the
  // error names every span that fails (spanFailure).
  return run(preparation, summarizer, options);
}

/** The previous summary without the footer line this compaction writes again. */
const withoutFooter = (summary: string, footer: string | undefined) => (footer ? summary.split(`\n\n${footer}`).join("").split(footer).join("").trimEnd() : summary);

async function run(
  preparation: CompactionPreparation,
  summarizer: Summarizer,
  options: CompactOptions,
): Promise<CompactionResult> {
  const signal = options.signal;
  const budgets = summaryTokenBudgets(preparation.settings.reserveTokens);
  const reasoning = summarizer.reasoning ? ("high" as const) : undefined;
  // The stored summary ends with file tags; they are re-derived below, so the model never sees them twice.
  // and the pinned section is written again from the path
  const storedPrevious = preparation.previousSummary ? withoutFooter(withoutPinned(stripFileOperations(preparation.previousSummary)), options.footer) : undefined;
  // The guard's sections are read back out and merged by guardSummary, never handed to the summarizer.
  const guardOn = options.guard?.verbatimRequests !== false || options.guard?.coverageCheck !== false;
  const previousGuard: GuardSections | undefined = storedPrevious !== undefined && guardOn ? splitGuardSections(storedPrevious) : undefined;
  const previousSummary = previousGuard ? previousGuard.body : storedPrevious;
  const extraContext = options.extraContext ?? [];

  // One span of the conversation, summarized with this run's summarizer, reasoning and signal.
  const summarizeSpan = async (
    messages: readonly AgentMessage[],
    prompts: Pick<ConversationSummaryRequest, "buildPrompt" | "buildChunkPrompt" | "buildMergePrompt">,
    span: Pick<ConversationSummaryRequest, "maxTokens" | "purpose">,
  ): Promise<SummarizeResult> => {
    const parts = serializeParts(messages, options.maxToolResultChars);
    return nonEmpty(await summarizeConversation({ summarizer, systemPrompt: COMPACTION_SYSTEM_PROMPT, parts, ...prompts, ...span, reasoning, signal }));
  };

  const history = (): Promise<SummarizeResult> =>
    summarizeSpan(
      preparation.messagesToSummarize,
      {
        buildPrompt: (conversation) =>
          assembleSummaryPrompt({
            conversation,
            previousSummary,
            extraContext,
            instructions: options.promptOverride ?? (previousSummary ? UPDATE_SUMMARY_PROMPT : INITIAL_SUMMARY_PROMPT),
            customInstructions: options.customInstructions,
          }),
        buildChunkPrompt: (conversation) =>
          assembleSummaryPrompt({ conversation, instructions: CHUNK_SUMMARY_PROMPT, customInstructions: options.customInstructions }),
        buildMergePrompt: (partialSummaries, final) =>
          assembleSummaryPrompt({
            previousSummary: final ? previousSummary : undefined,
            partialSummaries,
            extraContext: final ? extraContext : [],
            instructions: MERGE_SUMMARIES_PROMPT,
            customInstructions: options.customInstructions,
          }),
      },
      { maxTokens: budgets.history, purpose: "history" },
    );

  const turnPrefix = (): Promise<SummarizeResult> =>
    summarizeSpan(
      preparation.turnPrefixMessages,
      {
        buildPrompt: (conversation) => assembleSummaryPrompt({ conversation, instructions: TURN_PREFIX_PROMPT }),
        buildChunkPrompt: (conversation) => assembleSummaryPrompt({ conversation, instructions: TURN_PREFIX_PROMPT }),
        buildMergePrompt: (partialSummaries) => assembleSummaryPrompt({ partialSummaries, instructions: MERGE_TURN_PREFIX_PROMPT }),
      },
      { maxTokens: budgets.turnPrefix, purpose: "turn-prefix" },
    );

  // Nothing older to summarize: keep what the previous compaction said (docs/ARCHITECTURE.md, decision 2).
  const olderHistory = (): Promise<SummarizeResult> =>
    preparation.messagesToSummarize.length > 0
      ? history()
      : Promise.resolve({ text: previousSummary ?? NO_PRIOR_HISTORY });

  let summary: string;
  let remoteShortSummary: string | undefined;
  if (preparation.isSplitTurn && preparation.turnPrefixMessages.length > 0) {
    // Both spans run to their end, so a failure names every span that failed, whichever failed first.
    const [older, prefix] = await Promise.allSettled([olderHistory(), turnPrefix()]);
    if (older.status === "rejected" || prefix.status === "rejected") {
      throw spanFailure(
        [
          ...(older.status === "rejected" ? [{ span: "history" as const, error: older.reason }] : []),
          ...(prefix.status === "rejected" ? [{ span: "turn prefix" as const, error: prefix.reason }] : []),
        ],
        signal,
      );
    }
    // the turn's beginning may correct what the history states (an offline history is updated for it)
    const history = withLaterCorrections(older.value.text, serializeParts(preparation.turnPrefixMessages, options.maxToolResultChars).join("\n\n"));
    summary = `${history}\n\n---\n\n${SPLIT_TURN_HEADING}\n\n${prefix.value.text}`;
    remoteShortSummary = older.value.shortSummary;
  } else {
    const older = await olderHistory().catch((error: unknown) => {
      throw spanFailure([{ span: "history", error }], signal);
    });
    summary = older.text;
    remoteShortSummary = older.shortSummary;
  }
  if (signal?.aborted) throw new SummarizationAbortedError();

  let shortSummary: string | undefined;
  if (options.shortSummary !== false) {
    shortSummary = remoteShortSummary?.trim() || (await generateShortSummary(preparation, summary, summarizer, options, signal));
  }

  const { readFiles, modifiedFiles } = computeFileLists(preparation.fileOps);
  const guarded: Pick<GuardResult, "text"> & Partial<GuardResult> = guardOn
    ? guardSummary(
        {
          summary,
          conversation: serializeParts([...preparation.messagesToSummarize, ...preparation.turnPrefixMessages], options.maxToolResultChars).join("\n\n"),
          modifiedFiles,
          pinned: (preparation.pinned ?? []).map((p) => p.text),
          replacedTokens:
            estimateMessagesTokens(preparation.messagesToSummarize) +
            estimateMessagesTokens(preparation.turnPrefixMessages) +
            estimateTextTokens(storedPrevious ?? ""),
          summaryBudget: budgets.history,
          ...(previousGuard ? { previous: previousGuard } : {}),
        },
        options.guard ?? {},
        estimateTextTokens,
      )
    : { text: summary };
  const details: CompactionDetails = { readFiles, modifiedFiles };
  if (guarded.coverage) details.coverage = guarded.coverage;
  const result: CompactionResult = {
    summary:
      [guarded.text, renderPinned(preparation.pinned ?? [], estimateTextTokens, guarded.language && GUARD_WORDS[guarded.language]), options.footer].filter(Boolean).join("\n\n") +
      formatFileOperations(readFiles, modifiedFiles),
    firstKeptEntryId: preparation.firstKeptEntryId,
    tokensBefore: preparation.tokensBefore,
    details,
  };
  if (guarded.coverage) result.coverage = guarded.coverage;
  if (shortSummary) result.shortSummary = shortSummary;
  return result;
}

/**
 * Two or three sentences on what the kept part of the session changed, read with the new summary.
 * Optional (docs/ARCHITECTURE.md, decision 7): a failure is reported and the compaction goes on without it.
 */
async function generateShortSummary(
  preparation: CompactionPreparation,
  summary: string,
  summarizer: Summarizer,
  options: CompactOptions,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  const maxTokens = summaryTokenBudgets(preparation.settings.reserveTokens).short;
  const build = (parts: readonly string[]) =>
    assembleSummaryPrompt({
      conversation: parts.join("\n\n"),
      previousSummary: summary,
      extraContext: options.extraContext ?? [],
      instructions: SHORT_SUMMARY_PROMPT,
    });
  let parts = serializeParts(preparation.recentMessages, options.maxToolResultChars);
  const window = summarizer.contextWindow;
  if (window > 0) {
    // The newest messages say most about what changed: drop the oldest until the prompt fits.
    const budget = promptBudget(window, maxTokens, COMPACTION_SYSTEM_PROMPT);
    let size = estimateTextTokens(build(parts));
    let first = 0;
    while (size > budget && first < parts.length) {
      size -= estimateTextTokens(parts[first]);
      first++;
    }
    parts = parts.slice(first);
  }
  try {
    const result = await summarizer.summarize({
      systemPrompt: COMPACTION_SYSTEM_PROMPT,
      prompt: build(parts),
      maxTokens: outputBudget(maxTokens, window),
      purpose: "short",
      signal,
      ...(summarizer.reasoning ? { reasoning: "high" as const } : {}),
    });
    return result.text.trim() || undefined;
  } catch (error) {
    if (options.signal?.aborted) throw new SummarizationAbortedError();
    options.onWarning?.(`Short summary failed: ${errorText(error)}`);
    return undefined;
  }
}
