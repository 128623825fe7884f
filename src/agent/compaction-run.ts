/**
 * One compaction of a session, from plan to stored entry: the before-compact hook (which may
 * cancel or supply the compaction, validated per docs/ARCHITECTURE.md, decision 8), the
 * compacting hook (prompt override, extra context, preserved data), the summarizer with
 * per-candidate retries and the fallback through `compaction.methods` (decision 11) with the
 * no-growth guard, the append (the method in `details.method`), and the after-compact hook with
 * the entry found by id. compaction-control.ts decides when to call this; this module decides
 * how a compaction goes.
 */
import type { CompactionResult } from "../compaction/compact.js";
import { type CompactionPreparation, planCompaction } from "../compaction/prepare.js";
import { summaryTokenBudgets } from "../compaction/settings.js";
import { estimateMessagesTokens, messageTextTokens } from "../compaction/tokens.js";
import type { Settings } from "../config/settings.js";
import { appendCompactionEntry, CompactionCancelledError, summarizeCompaction } from "../ops/compact.js";
import { sessionName } from "../ops/open-session.js";
import type { SessionManager } from "../session/manager.js";
import type { CompactionEntry, SessionEntry } from "../format/entry-types.js";
import { requiredContextWindow } from "./candidates.js";
import { summaryGrew } from "./context-pressure.js";
import type {
  AgentSessionEvent,
  AutoCompactionReason,
  CompactingResult,
  CompactionMethodUsed,
  CompactionReason,
  HookCompaction,
  SessionCompactionResult,
  SessionHookEvents,
} from "./events.js";
import type { HookRunner } from "./hooks.js";
import { planSummarizerRetry, SleepAbortedError, sleep } from "./retry.js";
import type { CompactionSpan } from "./native-method.js";
import type { MethodSummarizer } from "./summarizer-source.js";
import { errorText } from "../util/error-text.js";

export type CompactionErrorCode = "already-compacted" | "nothing-to-compact" | "cancelled" | "invalid-hook-result" | "failed";

export class CompactionError extends Error {
  constructor(
    readonly code: CompactionErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "CompactionError";
  }
}

export interface CompactionRunContext {
  sessionManager: SessionManager;
  /** a line every summary ends with (compaction/compact.ts, CompactOptions.footer) */
  summaryFooter?: string;
  hooks: HookRunner<SessionHookEvents>;
  settings: Settings;
  /** summarizers to try, best first, for a request needing `requiredTokens` of context window (a native lane compacts `span`) */
  chain: (requiredTokens: number, span: CompactionSpan) => Promise<MethodSummarizer[]>;
  emit: (event: AgentSessionEvent) => void;
  now: () => number;
  /** runs right after the entry is stored, before any hook or event hears of it */
  onStored?: (entry: CompactionEntry) => void;
}

export interface CompactionRunOptions {
  reason: CompactionReason;
  customInstructions?: string;
  signal: AbortSignal;
  /** inside a turn, before the next model call (said in events and hook payloads) */
  midTurn?: boolean;
  /** a plan made elsewhere (a background summary brought up to date) instead of planning now */
  preparation?: CompactionPreparation;
  /** a summary already made for `preparation` (a ready background summary) */
  summarized?: Summarized;
  /**
   * Shown the summary before anything is written (the chat's `/compact --preview`): resolves with
   * the text to store, exactly as given, or `undefined` to cancel, which writes nothing. A summary
   * a `session_before_compact` hook supplied is shown too: the user asked to see what is written.
   */
  review?: (summary: string, signal: AbortSignal) => Promise<string | undefined>;
}

/** A summary and the method that made it. */
export interface Summarized {
  result: CompactionResult;
  method: CompactionMethodUsed;
  /** what the method stores beside the summary (a native lane's payload) */
  preserveData?: Record<string, unknown>;
}

export interface CompactionOutcome {
  result: SessionCompactionResult;
  entry: CompactionEntry;
  fromExtension: boolean;
  method: CompactionMethodUsed;
}

const cancelled = () => new CompactionError("cancelled", "Compaction cancelled");

/** Throws a clear error when a hook's compaction could not be stored as it is. */
export function validateHookCompaction(value: unknown, branch: readonly SessionEntry[]): HookCompaction {
  const problem = (what: string) =>
    new CompactionError("invalid-hook-result", `session_before_compact hook returned an invalid compaction: ${what}`);
  if (typeof value !== "object" || value === null) throw problem("expected an object");
  const c = value as Partial<Record<keyof HookCompaction, unknown>>;
  if (typeof c.summary !== "string" || c.summary.trim() === "") throw problem("summary must be a non-empty string");
  if (typeof c.firstKeptEntryId !== "string") throw problem("firstKeptEntryId must be a string");
  const kept = branch.find((e) => e.id === c.firstKeptEntryId);
  if (!kept) {
    throw problem(
      `firstKeptEntryId "${c.firstKeptEntryId}" is not on the current branch; use preparation.firstKeptEntryId or an id from branchEntries`,
    );
  }
  if (kept.type === "compaction") throw problem(`firstKeptEntryId "${c.firstKeptEntryId}" is a compaction entry`);
  if (typeof c.tokensBefore !== "number" || !Number.isFinite(c.tokensBefore) || c.tokensBefore < 0) {
    throw problem("tokensBefore must be a non-negative number");
  }
  if (c.shortSummary !== undefined && typeof c.shortSummary !== "string") throw problem("shortSummary must be a string");
  if (c.preserveData !== undefined && (typeof c.preserveData !== "object" || c.preserveData === null)) {
    throw problem("preserveData must be an object");
  }
  return c as HookCompaction;
}

/** Several compacting hooks: context lines add up, the last prompt wins, preserved data merges. */
export function combineCompactingResults(results: readonly CompactingResult[]): CompactingResult {
  const combined: CompactingResult = {};
  for (const result of results) {
    if (Array.isArray(result.context)) combined.context = [...(combined.context ?? []), ...result.context.map(String)];
    if (typeof result.prompt === "string") combined.prompt = result.prompt;
    if (result.preserveData && typeof result.preserveData === "object") {
      combined.preserveData = { ...combined.preserveData, ...result.preserveData };
    }
  }
  return combined;
}

/** Tokens the summary replaces: the messages leaving the context and the previous summary. */
export function replacedTokens(preparation: CompactionPreparation): number {
  return (
    estimateMessagesTokens(preparation.messagesToSummarize) +
    estimateMessagesTokens(preparation.turnPrefixMessages) +
    messageTextTokens(preparation.previousSummary ?? "")
  );
}

/** The messages a compaction of `preparation` replaces (`replaced` tokens), as a native lane sends them: the previous summary first. */
function spanOf(preparation: CompactionPreparation, replaced: number, customInstructions: string | undefined): CompactionSpan {
  const previous = preparation.previousSummary
    ? [{ role: "compactionSummary" as const, summary: preparation.previousSummary, tokensBefore: 0, timestamp: 0 }]
    : [];
  return {
    messages: [...previous, ...preparation.messagesToSummarize, ...preparation.turnPrefixMessages],
    tokens: replaced,
    hasHistory: preparation.messagesToSummarize.length > 0,
    ...(customInstructions ? { customInstructions } : {}),
  };
}

/** Tokens a summarizer's window must hold, in one request, for a preparation that replaces `replaced` tokens. */
function requiredTokens(preparation: CompactionPreparation, replaced: number): number {
  return requiredContextWindow(replaced, summaryTokenBudgets(preparation.settings.reserveTokens).history);
}

/**
 * Summarizes with each summarizer of the chain in turn, retrying transient failures with
 * backoff; a summary larger than what it replaces is discarded and the next method runs. One
 * attempt is ops/compact.ts's summarizeCompaction, as `bonsai compact` runs it; the retries,
 * the fallback and the hooks' prompt and context are the agent's policy around it.
 */
export async function summarizeWithFallback(
  ctx: Pick<CompactionRunContext, "chain" | "emit" | "settings" | "now" | "sessionManager" | "summaryFooter">,
  preparation: CompactionPreparation,
  options: Pick<CompactionRunOptions, "customInstructions" | "signal"> & {
    /** refuse summaries larger than what they replace (automatic compactions) */
    guardGrowth: boolean;
    /** accept the chain's last summary even when it grew: an overflow must recover */
    lastResort?: boolean;
  },
  compacting: CompactingResult,
): Promise<Summarized> {
  // what the summary replaces, estimated once: it sizes the chain, the native span and the no-growth guard
  const replaced = replacedTokens(preparation);
  const chain = await ctx.chain(requiredTokens(preparation, replaced), spanOf(preparation, replaced, options.customInstructions));
  if (chain.length === 0) throw new CompactionError("failed", "no summarizer available (no model to summarize with)");
  let lastError: unknown;
  let skipMethod: string | undefined;
  for (let i = 0; i < chain.length; i++) {
    const link = chain[i];
    const { summarizer, method } = link;
    if (method === skipMethod) continue;
    // a method's own figures and stored data join the summary it made
    const made = (result: CompactionResult): Summarized => {
      const extras = link.extras?.(result, replaced) ?? {};
      const details = extras.native ? { ...result.details, native: extras.native } : result.details;
      return { result: { ...result, details }, method, ...(extras.preserveData ? { preserveData: extras.preserveData } : {}) };
    };
    for (let attempt = 0; ; attempt++) {
      if (options.signal.aborted) throw cancelled();
      try {
        const result = await summarizeCompaction(preparation, summarizer, {
          instructions: options.customInstructions,
          signal: options.signal,
          onWarning: (message) => ctx.emit({ type: "warning", message }),
          promptOverride: compacting.prompt,
          extraContext: compacting.context,
          ...(ctx.summaryFooter ? { footer: ctx.summaryFooter } : {}),
          file: sessionName(ctx.sessionManager),
        });
        if (!options.guardGrowth || !summaryGrew(result.summary, replaced)) return made(result);
        const isLast = !chain.slice(i + 1).some((c) => c.method !== method);
        if (isLast && options.lastResort) {
          ctx.emit({ type: "warning", message: `Compaction: the summary of ${summarizer.name} (${method}) is larger than the messages it replaces; kept as the last resort` });
          return made(result);
        }
        lastError = new Error(`the summary of ${summarizer.name} (${method}) is larger than the messages it replaces; discarded`);
        ctx.emit({ type: "warning", message: `Compaction: ${errorText(lastError)}` });
        skipMethod = method;
        break;
      } catch (error) {
        if (options.signal.aborted || error instanceof CompactionCancelledError) throw cancelled();
        lastError = error;
        if (link.retry === false) {
          link.onFailure?.(error);
          ctx.emit({ type: "compaction_retry", summarizer: summarizer.name, attempt, errorMessage: errorText(error), action: "next-candidate" });
          break;
        }
        const plan = planSummarizerRetry({
          errorText: errorText(error),
          attempt,
          retry: ctx.settings.retry,
          hasNextCandidate: i < chain.length - 1,
          now: ctx.now(),
        });
        ctx.emit({
          type: "compaction_retry",
          summarizer: summarizer.name,
          attempt,
          errorMessage: errorText(error),
          action: plan.action,
          ...(plan.action === "retry" ? { delayMs: plan.delayMs } : {}),
        });
        if (plan.action === "next-candidate") break;
        try {
          await sleep(plan.delayMs, options.signal);
        } catch (sleepError) {
          if (sleepError instanceof SleepAbortedError) throw cancelled();
          throw sleepError;
        }
      }
    }
  }
  throw new CompactionError("failed", errorText(lastError), { cause: lastError });
}

/**
 * Compacts the current branch of `ctx.sessionManager`. Throws CompactionError: "already
 * compacted", "nothing to compact", "cancelled" (signal or hook), an invalid hook result, or
 * the last summarizer failure.
 */
export async function runCompaction(ctx: CompactionRunContext, options: CompactionRunOptions): Promise<CompactionOutcome> {
  const { sessionManager: session, hooks } = ctx;
  const { signal } = options;
  const branch = session.getBranch();
  let preparation = options.preparation;
  if (!preparation) {
    const plan = planCompaction(branch, ctx.settings.compaction, session.getDialect());
    if (!plan.ok) {
      throw new CompactionError(plan.reason, plan.reason === "already-compacted" ? "Already compacted" : plan.message);
    }
    preparation = plan.preparation;
  }
  const midTurn = options.midTurn ? { midTurn: true } : {};

  let hookCompaction: HookCompaction | undefined;
  if (hooks.hasHandlers("session_before_compact")) {
    const answer = await hooks.run(
      "session_before_compact",
      { reason: options.reason, preparation, branchEntries: [...branch], customInstructions: options.customInstructions, ...midTurn },
      signal,
    );
    if (answer?.cancel) throw cancelled();
    if (answer?.compaction) hookCompaction = validateHookCompaction(answer.compaction, branch);
  }
  if (signal.aborted) throw cancelled();

  let result: SessionCompactionResult;
  let method: CompactionMethodUsed = "hook";
  if (hookCompaction) {
    result = { ...hookCompaction };
  } else if (options.summarized) {
    method = options.summarized.method;
    result = { ...options.summarized.result, details: { ...options.summarized.result.details, method } };
    if (options.summarized.preserveData) result.preserveData = options.summarized.preserveData;
  } else {
    let compacting: CompactingResult = {};
    if (hooks.hasHandlers("session.compacting")) {
      const messages = [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages];
      compacting = combineCompactingResults(
        await hooks.collect("session.compacting", { sessionId: session.getSessionId(), reason: options.reason, messages, ...midTurn }, signal),
      );
    }
    // The no-growth guard is for automatic compactions; a manual one does what was asked.
    const summarized = await summarizeWithFallback(ctx, preparation, { ...options, guardGrowth: options.reason !== "manual", lastResort: options.reason === "overflow" }, compacting);
    method = summarized.method;
    result = { ...summarized.result, details: { ...summarized.result.details, method } };
    const preserveData = { ...summarized.preserveData, ...compacting.preserveData };
    if (Object.keys(preserveData).length > 0) result.preserveData = preserveData;
  }
  if (signal.aborted) throw cancelled();
  if (options.review) {
    const reviewed = await options.review(result.summary, signal);
    if (reviewed === undefined || signal.aborted) throw cancelled();
    // an edited summary is what the user wants sent: a provider's payload of the unedited one is not kept to replay
    if (reviewed !== result.summary && result.preserveData?.native) {
      const { native: _unedited, ...preserveData } = result.preserveData;
      result = { ...result, preserveData };
      if (Object.keys(preserveData).length === 0) delete result.preserveData;
    }
    result = { ...result, summary: reviewed };
  }

  const fromExtension = hookCompaction !== undefined;
  const entry = appendCompactionEntry(session, result, fromExtension);
  ctx.onStored?.(entry);
  if (hooks.hasHandlers("session_compact")) {
    await hooks.run("session_compact", { reason: options.reason, compactionEntry: entry, fromExtension, ...midTurn }, signal);
  }
  return { result, entry, fromExtension, method };
}

/** How an automatic compaction ended: stored (outcome), aborted, or failed (errorMessage). */
export interface AutoCompactionEnd {
  outcome?: CompactionOutcome;
  aborted: boolean;
  errorMessage?: string;
}

/**
 * An automatic compaction as UIs see it: `auto_compaction_start`, then `auto_compaction_end`
 * with the result and its method, `aborted`, or an error message naming what failed ("Context
 * overflow recovery failed: …" or "Auto-compaction failed: …"); `midTurn: true` inside a turn.
 * Never throws.
 */
export async function runAutoCompaction(
  ctx: CompactionRunContext,
  reason: AutoCompactionReason,
  willRetry: boolean,
  signal: AbortSignal,
  extra: {
    midTurn?: boolean;
    /** a plan and summary made ahead (a background summary), looked up once the start is announced */
    ready?: () => Promise<Pick<CompactionRunOptions, "preparation" | "summarized"> | undefined>;
  } = {},
): Promise<AutoCompactionEnd> {
  const midTurn = extra.midTurn ? { midTurn: true } : {};
  ctx.emit({ type: "auto_compaction_start", reason, ...midTurn });
  try {
    const ready = (await extra.ready?.()) ?? {};
    const outcome = await runCompaction(ctx, { reason, signal, midTurn: extra.midTurn, ...ready });
    ctx.emit({ type: "auto_compaction_end", reason, result: outcome.result, method: outcome.method, aborted: false, willRetry, ...midTurn });
    return { outcome, aborted: false };
  } catch (error) {
    if (signal.aborted || (error instanceof CompactionError && error.code === "cancelled")) {
      ctx.emit({ type: "auto_compaction_end", reason, aborted: true, willRetry: false, ...midTurn });
      return { aborted: true };
    }
    const prefix = reason === "overflow" ? "Context overflow recovery failed" : "Auto-compaction failed";
    const errorMessage = `${prefix}: ${errorText(error)}`;
    ctx.emit({ type: "auto_compaction_end", reason, aborted: false, willRetry: false, errorMessage, ...midTurn });
    return { aborted: false, errorMessage };
  }
}
