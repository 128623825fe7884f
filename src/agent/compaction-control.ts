/**
 * When AgentSession compacts, and the compaction in progress. After every run, and before a
 * prompt, old tool output is pruned and the compaction rules (docs/ARCHITECTURE.md, decision 5,
 * as pure functions in overflow.ts) are applied: a context overflow is compacted away once per
 * user turn and the turn continued; a context past the threshold is compacted, then the turn may
 * be nudged on once. Manual compaction runs through the same place, so there is one record of
 * what is compacting for the turn loop to wait on and for abort() to reach.
 *
 * This module decides when; compaction-run.ts decides how a compaction goes.
 */
import type { Settings } from "../config/settings.js";
import type { AgentMessage, AssistantMessage } from "../format/message-types.js";
import type { SessionManager } from "../session/manager.js";
import { AbortSlot } from "./abort-slot.js";
import { type AgentContext, type Step, userMessage } from "./agent-context.js";
import { type CompactionOutcome, type CompactionRunContext, runAutoCompaction, runCompaction } from "./compaction-run.js";
import type { AgentSessionEvent, AutoCompactionReason, SessionCompactionResult, SessionHookEvents } from "./events.js";
import type { HookRunner } from "./hooks.js";
import {
  type CompactionTrigger,
  checkCompaction,
  compactionReduced,
  isBeforeLatestCompaction,
  type OverflowDetector,
  shouldAutoContinue,
} from "./overflow.js";
import type { PruneStep } from "./session-prune.js";
import type { SummarizerSource } from "./summarizer-source.js";

export const AUTO_CONTINUE_PROMPT = "Continue if you have next steps.";

const OVERFLOW_EXHAUSTED =
  "Context overflow recovery failed: the context still overflows after one compaction this turn; compact with instructions, prune, or switch to a model with a larger window";

export interface CompactionControlOptions {
  context: AgentContext;
  sessionManager: SessionManager;
  settings: Settings;
  hooks: HookRunner<SessionHookEvents>;
  summarizers: SummarizerSource;
  prune: PruneStep;
  detectOverflow: OverflowDetector;
  emit: (event: AgentSessionEvent) => void;
  now: () => number;
}

export class CompactionControl {
  private readonly auto = new AbortSlot();
  private readonly manual = new AbortSlot();
  private running: Promise<unknown> | undefined;
  private overflowRecoveryAttempted = false;
  private autoContinuedThisTurn = false;

  constructor(private readonly options: CompactionControlOptions) {}

  /** The compaction in progress, automatic or manual; undefined when none runs. */
  get pending(): Promise<unknown> | undefined {
    return this.running;
  }

  get isCompacting(): boolean {
    return this.auto.active || this.manual.active;
  }

  abort(): void {
    this.manual.abort();
    this.auto.abort();
  }

  /** A new user turn: it gets its own overflow recovery and its own auto-continue. */
  startTurn(): void {
    this.overflowRecoveryAttempted = false;
    this.autoContinuedThisTurn = false;
  }

  /** A manual compaction (the caller has stopped everything else first). Throws CompactionError. */
  async compact(customInstructions?: string): Promise<SessionCompactionResult> {
    const outcome = await this.track(this.manual, (signal) =>
      runCompaction(this.runContext(), { reason: "manual", customInstructions, signal }),
    );
    return outcome.result;
  }

  /**
   * Pruning, then the compaction rules. After a run (`beforePrompt` false) a recovered overflow
   * continues the agent and a threshold compaction may auto-continue; before a prompt, a
   * threshold compaction just makes room for it. Returns the run to start next, if any.
   */
  async check(message: AssistantMessage, beforePrompt: boolean): Promise<Step | undefined> {
    const { context, settings } = this.options;
    if (!settings.compaction.enabled) return undefined;
    const pruned = this.options.prune();
    if (pruned) {
      context.refresh();
      this.options.emit({ type: "session_pruned", tokensSaved: pruned.tokensSaved, prunedCount: pruned.prunedCount });
    }
    const trigger = this.trigger(message, beforePrompt, pruned?.tokensSaved);
    if (trigger.kind === "overflow-exhausted") {
      this.options.emit({ type: "auto_compaction_start", reason: "overflow" });
      this.options.emit({ type: "auto_compaction_end", reason: "overflow", aborted: false, willRetry: false, errorMessage: OVERFLOW_EXHAUSTED });
      return undefined;
    }
    if (trigger.kind === "overflow") return this.recoverFromOverflow(message);
    if (trigger.kind === "threshold") return this.compactAtThreshold(beforePrompt);
    return undefined;
  }

  private trigger(message: AssistantMessage, beforePrompt: boolean, prunedTokens: number | undefined): CompactionTrigger {
    const { context, settings } = this.options;
    const model = context.model;
    const branch = this.options.sessionManager.getBranch();
    const isStale = (m: AgentMessage) => isBeforeLatestCompaction(branch, m);
    return checkCompaction({
      message,
      settings: settings.compaction,
      model: { provider: model.provider, id: model.id, contextWindow: model.contextWindow ?? 0 },
      messageIsStale: isStale(message),
      overflowRecoveryAttempted: this.overflowRecoveryAttempted,
      messages: context.messages,
      isStale,
      prunedTokens,
      includeAborted: beforePrompt,
      detectOverflow: this.options.detectOverflow,
    });
  }

  /** Compacts once, then continues the turn without the answer that overflowed. */
  private async recoverFromOverflow(message: AssistantMessage): Promise<Step | undefined> {
    const { context } = this.options;
    this.overflowRecoveryAttempted = true;
    context.dropTrailing(message);
    const outcome = await this.autoCompact("overflow", true);
    if (!outcome) return undefined;
    // The failed answer is back in the context rebuilt from the file; the retry must not see it.
    context.dropTrailing(message);
    return context.lastIs("assistant") ? undefined : () => context.continue();
  }

  /** Compacts, then nudges the turn on when it stopped with work announced but not done. */
  private async compactAtThreshold(beforePrompt: boolean): Promise<Step | undefined> {
    const { context, settings } = this.options;
    const before = context.messages;
    const outcome = await this.autoCompact("threshold", false);
    if (!outcome || beforePrompt) return undefined;
    const reduced = compactionReduced(before, context.messages);
    if (!reduced) {
      this.options.emit({
        type: "warning",
        message: "Compaction did not reduce the context; not continuing automatically. Lower compaction.keepRecentTokens or prune.",
      });
    }
    const continueTurn = shouldAutoContinue({
      autoContinue: settings.compaction.autoContinue,
      lastMessage: before[before.length - 1],
      alreadyContinuedThisTurn: this.autoContinuedThisTurn,
      compactionReduced: reduced,
    });
    if (!continueTurn) return undefined;
    this.autoContinuedThisTurn = true;
    const nudge = userMessage(AUTO_CONTINUE_PROMPT, this.options.now(), { synthetic: true });
    return () => context.agent.prompt(nudge as never);
  }

  /** Automatic compaction with its start/end events; undefined when it did not happen. */
  private autoCompact(reason: AutoCompactionReason, willRetry: boolean): Promise<CompactionOutcome | undefined> {
    this.auto.abort();
    return this.track(this.auto, (signal) => runAutoCompaction(this.runContext(), reason, willRetry, signal));
  }

  /** Runs a compaction in `slot` and records it as the one in progress until it settles. */
  private async track<T>(slot: AbortSlot, start: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const work = slot.run(start);
    this.running = work;
    try {
      return await work;
    } finally {
      if (this.running === work) this.running = undefined;
    }
  }

  private runContext(): CompactionRunContext {
    const { context, sessionManager, hooks, settings, summarizers, emit, now } = this.options;
    return {
      sessionManager,
      hooks,
      settings,
      candidates: (requiredTokens: number) => summarizers.candidates(context.model, requiredTokens),
      emit,
      now,
      onStored: () => context.refresh(),
    };
  }
}
