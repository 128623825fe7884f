/**
 * A summary made ahead of the threshold (docs/ARCHITECTURE.md, decision 5): when the context
 * passes `compaction.backgroundPercent` of the threshold, the span a compaction would summarize
 * now is summarized without anyone waiting, abortable and after the current work has yielded.
 * When the threshold is crossed the summary is used at once:
 * - nothing appended since it started: as it is;
 * - entries appended: the same cut, the new entries kept verbatim, when they fit the keep
 *   budget (the kept part within keepRecentTokens, or kept part and summary within half the
 *   threshold, so the next compaction is not due at once);
 * - otherwise a fresh cut whose summary updates the ready one with the delta only.
 * A summary whose branch changed under it (a tree move, another compaction) is dropped.
 */
import { messagesOfPath } from "../format/context.js";
import type { SessionEntry } from "../format/entry-types.js";
import { type CompactionPreparation, contextTokensOfPath, planCompaction } from "../compaction/prepare.js";
import { estimateMessagesTokens, messageTextTokens } from "../compaction/tokens.js";
import type { Settings } from "../config/settings.js";
import type { SessionManager } from "../session/manager.js";
import { errorText } from "../util/error-text.js";
import { type CompactionRunContext, type Summarized, summarizeWithFallback } from "./compaction-run.js";
import { combineCompactingResults } from "./compaction-run.js";
import type { AgentSessionEvent, CompactingResult, SessionHookEvents } from "./events.js";
import type { HookRunner } from "./hooks.js";

/** Share of the threshold that a reused summary and the entries kept behind it may fill. */
export const REUSE_RATIO = 0.5;

export interface BackgroundSummaryOptions {
  sessionManager: SessionManager;
  settings: Settings;
  hooks: HookRunner<SessionHookEvents>;
  emit: (event: AgentSessionEvent) => void;
  /** the run context of a compaction now (its summarizer chain follows the current model) */
  runContext: () => CompactionRunContext;
}

/** What a compaction at the threshold starts from: a plan, and its summary when ready. */
export interface ReadySummary {
  preparation: CompactionPreparation;
  summarized?: Summarized;
}

interface Job {
  /** the leaf when the summary started, and its position on the branch */
  leafId: string;
  leafIndex: number;
  preparation: CompactionPreparation;
  controller: AbortController;
  done: Promise<void>;
  summarized?: Summarized;
  failed?: string;
}


export class BackgroundSummary {
  private job: Job | undefined;

  constructor(private readonly options: BackgroundSummaryOptions) {}

  get running(): boolean {
    return this.job !== undefined && !this.job.summarized && !this.job.failed;
  }

  get ready(): boolean {
    return this.job?.summarized !== undefined;
  }

  /** Starts a summary of what a compaction would summarize now, unless one is under way for this branch. */
  maybeStart(): void {
    // One at a time; whether its branch still holds is checked when it is taken (and a tree move drops it).
    if (this.job) return;
    const branch = this.options.sessionManager.getBranch();
    // A hook that supplies its own compaction decides at the threshold; nothing to prepare.
    if (this.options.hooks.hasHandlers("session_before_compact")) return;
    const plan = planCompaction(branch, this.options.settings.compaction, this.options.sessionManager.getDialect());
    if (!plan.ok) return;
    const leaf = branch[branch.length - 1];
    const controller = new AbortController();
    const job: Job = { leafId: leaf.id, leafIndex: branch.length - 1, preparation: plan.preparation, controller, done: Promise.resolve() };
    job.done = this.summarize(job);
    this.job = job;
    this.options.emit({ type: "background_summary", status: "started" });
  }

  /**
   * What a compaction at the threshold can use now: waits for a summary still under way, then
   * returns it fitted to the entries appended since (see the module comment), or undefined
   * (none, failed, or its branch changed: a compaction then starts from scratch).
   */
  async take(threshold: number): Promise<ReadySummary | undefined> {
    const job = this.job;
    if (!job) return undefined;
    await job.done;
    if (this.job !== job) return undefined;
    this.job = undefined;
    const branch = this.options.sessionManager.getBranch();
    if (!this.isValid(job, branch)) {
      job.controller.abort();
      this.options.emit({ type: "background_summary", status: "dropped", detail: "the branch changed" });
      return undefined;
    }
    if (!job.summarized) return undefined;
    this.options.emit({ type: "background_summary", status: "used" });
    return this.fit(job, job.summarized, branch, threshold);
  }

  /** Stops and forgets the summary under way (abort, tree move, manual compaction). */
  drop(reason = "dropped"): void {
    const job = this.job;
    if (!job) return;
    this.job = undefined;
    job.controller.abort();
    this.options.emit({ type: "background_summary", status: "dropped", detail: reason });
  }

  /** The leaf it started from is still on the branch, with no compaction after it. */
  private isValid(job: Job, branch: readonly SessionEntry[]): boolean {
    if (branch[job.leafIndex]?.id !== job.leafId) return false;
    for (let i = job.leafIndex + 1; i < branch.length; i++) if (branch[i].type === "compaction") return false;
    return true;
  }

  private async summarize(job: Job): Promise<void> {
    // Low priority: the turn's own work (storing, the next request) goes first.
    await new Promise((resolve) => setImmediate(resolve));
    const signal = job.controller.signal;
    const ctx = this.options.runContext();
    try {
      let compacting: CompactingResult = {};
      const { hooks, sessionManager } = this.options;
      if (hooks.hasHandlers("session.compacting")) {
        const messages = [...job.preparation.messagesToSummarize, ...job.preparation.turnPrefixMessages];
        const payload = { sessionId: sessionManager.getSessionId(), reason: "threshold" as const, messages };
        compacting = combineCompactingResults(await hooks.collect("session.compacting", payload, signal));
      }
      if (signal.aborted) return;
      job.summarized = await summarizeWithFallback(ctx, job.preparation, { signal, guardGrowth: true }, compacting);
      if (!signal.aborted) this.options.emit({ type: "background_summary", status: "ready" });
    } catch (error) {
      job.failed = errorText(error);
      if (!signal.aborted) this.options.emit({ type: "background_summary", status: "failed", detail: job.failed });
    }
  }

  private fit(job: Job, summarized: Summarized, branch: readonly SessionEntry[], threshold: number): ReadySummary {
    const base = job.preparation;
    if (branch.length - 1 === job.leafIndex) return { preparation: base, summarized };
    const tokensBefore = contextTokensOfPath(branch);
    const recentMessages = messagesOfPath(branch, base.firstKeptEntryIndex, branch.length);
    const keptTokens = estimateMessagesTokens(recentMessages);
    const withSummary = keptTokens + messageTextTokens(summarized.result.summary);
    if (!(threshold > 0) || keptTokens <= base.keepRecentTokens || withSummary <= threshold * REUSE_RATIO) {
      // Same cut: the new entries are kept verbatim behind the ready summary.
      return {
        preparation: { ...base, recentMessages, tokensBefore },
        summarized: { ...summarized, result: { ...summarized.result, tokensBefore } },
      };
    }
    const fresh = planCompaction(branch, this.options.settings.compaction, this.options.sessionManager.getDialect());
    if (!fresh.ok || fresh.preparation.firstKeptEntryIndex <= base.firstKeptEntryIndex) {
      return { preparation: { ...base, recentMessages, tokensBefore }, summarized: { ...summarized, result: { ...summarized.result, tokensBefore } } };
    }
    // Update the ready summary with the delta only: what lies between the two cuts.
    const covered = new Set(messagesOfPath(branch, base.boundaryStart, base.firstKeptEntryIndex));
    const preparation: CompactionPreparation = {
      ...fresh.preparation,
      messagesToSummarize: fresh.preparation.messagesToSummarize.filter((m) => !covered.has(m)),
      turnPrefixMessages: fresh.preparation.turnPrefixMessages.filter((m) => !covered.has(m)),
      previousSummary: summarized.result.summary,
    };
    return { preparation };
  }
}
