/**
 * When AgentSession compacts, and the compaction in progress. The compaction rules
 * (docs/ARCHITECTURE.md, decision 5, as pure functions in overflow.ts and context-pressure.ts)
 * are applied after every run and before a prompt, and before each model call inside a run:
 * - a context overflow is compacted away once per user turn and the turn continued;
 * - a context past the threshold is compacted (inside a turn: before the next model call, the
 *   turn going on with the compacted context), then a stopped turn may be nudged on once;
 * - an answer cut at the output limit with the context past backgroundPercent is compacted and
 *   continued, at most three times in a row;
 * - past backgroundPercent of the threshold, a summary starts in the background;
 * - three failed automatic compactions in a row pause them until a manual one succeeds.
 * Manual compaction runs through the same place, so there is one record of what is compacting
 * for the turn loop to wait on and for abort() to reach.
 *
 * This module decides when; room.ts frees the room (savings, then a compaction, with the
 * guards) and compaction-run.ts decides how a compaction goes.
 */
import type { Settings } from "../config/settings.js";
import type { AgentMessage, AssistantMessage } from "../format/message-types.js";
import type { SessionManager } from "../session/manager.js";
import { AbortSlot } from "./abort-slot.js";
import { type AgentContext, type Step, userMessage } from "./agent-context.js";
import { BackgroundSummary } from "./background-summary.js";
import { type CompactionRunContext, type CompactionRunOptions, runCompaction } from "./compaction-run.js";
import { CompactionBreaker, type ContextPressure, contextPressure, contextTokensNow, MAX_TRUNCATED_CONTINUATIONS } from "./context-pressure.js";
import type { AgentSessionEvent, SessionCompactionResult, SessionHookEvents } from "./events.js";
import type { HookRunner } from "./hooks.js";
import { type CompactionTrigger, checkCompaction, isBeforeLatestCompaction, type OverflowDetector, shouldAutoContinue } from "./overflow.js";
import { RoomMaker } from "./room.js";
import type { PruneStep, SavingsStep } from "./session-prune.js";
import type { SummarizerSource } from "./summarizer-source.js";

export const AUTO_CONTINUE_PROMPT = "Continue if you have next steps.";
export const TRUNCATED_CONTINUE_PROMPT = "Your last answer was cut off at the output limit. Continue exactly where it stopped.";

const OVERFLOW_EXHAUSTED =
  "Context overflow recovery failed: the context still overflows after one compaction this turn; compact with instructions, prune, or switch to a model with a larger window";

export interface CompactionControlOptions {
  context: AgentContext;
  /** a line every summary ends with (the recall tools' note, when the agent has them) */
  summaryFooter?: string;
  sessionManager: SessionManager;
  settings: Settings;
  hooks: HookRunner<SessionHookEvents>;
  summarizers: SummarizerSource;
  prune: PruneStep;
  savings: SavingsStep;
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
  private truncatedInARow = 0;
  /** this run's context was replaced (a compaction or savings inside it): requests send the session's */
  private replacedThisRun = false;
  /** a compaction inside this run failed or freed too little: no more inside it */
  private midTurnOffThisRun = false;
  private readonly breaker = new CompactionBreaker();
  private readonly background: BackgroundSummary;
  private readonly room: RoomMaker;

  constructor(private readonly options: CompactionControlOptions) {
    this.background = new BackgroundSummary({ ...options, runContext: () => this.runContext() });
    this.room = new RoomMaker({
      ...options,
      breaker: this.breaker,
      background: this.background,
      runContext: () => this.runContext(),
      track: (start) => this.track(this.auto, start),
      abortAuto: () => this.auto.abort(),
    });
  }

  /** The compaction in progress, automatic or manual; undefined when none runs. */
  get pending(): Promise<unknown> | undefined {
    return this.running;
  }

  get isCompacting(): boolean {
    return this.auto.active || this.manual.active;
  }

  /** Automatic compaction is paused after failures in a row, until a manual one succeeds. */
  get autoCompactionPaused(): boolean {
    return this.breaker.open;
  }

  abort(): void {
    this.manual.abort();
    this.auto.abort();
    this.background.drop("aborted");
  }

  /** The leaf moved in the tree: a background summary of the old branch is of no use. */
  branchChanged(): void {
    this.background.drop("the branch changed");
  }

  /** A new user turn: it gets its own overflow recovery and its own auto-continue. */
  startTurn(): void {
    this.overflowRecoveryAttempted = false;
    this.autoContinuedThisTurn = false;
  }

  /** A new agent run (a prompt, a continue): its context is the agent's until something replaces it. */
  runStarted(): void {
    this.replacedThisRun = false;
    this.midTurnOffThisRun = false;
  }

  /** A manual compaction (the caller has stopped everything else first). Throws CompactionError. */
  async compact(customInstructions?: string, review?: CompactionRunOptions["review"]): Promise<SessionCompactionResult> {
    this.background.drop("manual compaction");
    const outcome = await this.track(this.manual, (signal) =>
      runCompaction(this.runContext(), { reason: "manual", customInstructions, signal, ...(review ? { review } : {}) }),
    );
    if (this.breaker.open) this.options.emit({ type: "warning", message: "Automatic compaction resumed after the manual compaction." });
    this.breaker.succeeded(true);
    return outcome.result;
  }

  /**
   * Before each model call inside a run (pi-agent-core's transformContext): past the threshold,
   * savings then a compaction at a safe cut point (never between a tool call and its result);
   * past backgroundPercent, a background summary. Returns the agent's rebuilt context when the
   * request must carry it instead of the run's own list; aborting `signal` aborts the compaction.
   */
  async beforeModelCall(signal?: AbortSignal): Promise<AgentMessage[] | undefined> {
    const { settings, context } = this.options;
    const current = () => (this.replacedThisRun ? [...context.messages] : undefined);
    // Mid-turn means between tool calls and the next answer; a prompt is checked before it is sent.
    if (!settings.compaction.enabled || this.running || this.midTurnOffThisRun || !context.lastIs("toolResult")) return current();
    const pressure = this.pressure(contextTokensNow(context.messages));
    if (pressure.level === "background") this.startBackground();
    if (pressure.level !== "threshold" || !settings.compaction.midTurn || this.breaker.open) return current();
    const stop = () => this.auto.abort();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const room = await this.room.make(pressure, { reason: "threshold", willRetry: false, midTurn: true });
      if (room.changed) this.replacedThisRun = true;
      if (room.compacted ? !room.progress : !room.enough) this.midTurnOffThisRun = true;
    } finally {
      signal?.removeEventListener("abort", stop);
    }
    return current();
  }

  /**
   * Pruning, then the compaction rules. After a run (`beforePrompt` false) a recovered overflow
   * continues the agent, a threshold compaction may auto-continue, and a truncated answer may
   * be continued; before a prompt, a threshold compaction just makes room for it. Returns the
   * run to start next, if any.
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
    if (!beforePrompt) {
      const truncated = message.stopReason === "length" ? await this.continueTruncated(trigger) : undefined;
      if (message.stopReason !== "length") this.truncatedInARow = 0;
      if (truncated) return truncated.step;
    }
    if (trigger.kind === "threshold") return this.compactAtThreshold(beforePrompt, trigger.contextTokens);
    const tokens = contextTokensNow(context.messages);
    if (this.pressure(tokens).level === "background") this.startBackground();
    return undefined;
  }

  private pressure(tokens: number): ContextPressure {
    return contextPressure(tokens, this.options.context.model.contextWindow ?? 0, this.options.settings.compaction);
  }

  private startBackground(): void {
    if (this.options.settings.compaction.backgroundPercent > 0 && !this.breaker.open && !this.running) this.background.maybeStart();
  }

  private trigger(message: AssistantMessage, beforePrompt: boolean, prunedTokens: number | undefined): CompactionTrigger {
    const { context, settings } = this.options;
    const model = context.model;
    // the latest compaction and everything after it: enough to tell a message from before it
    const branch = this.options.sessionManager.getContextBranch();
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
    const tokens = contextTokensNow(context.messages);
    const room = await this.room.make({ ...this.pressure(tokens), level: "threshold" }, { reason: "overflow", willRetry: true });
    if (!room.compacted && !room.enough) return undefined;
    // The failed answer is back in the context rebuilt from the file; the retry must not see it.
    context.dropTrailing(message);
    return context.lastIs("assistant") ? undefined : () => context.continue();
  }

  /** Compacts, then nudges the turn on when it stopped with work announced but not done. */
  private async compactAtThreshold(beforePrompt: boolean, contextTokens: number): Promise<Step | undefined> {
    const { context, settings } = this.options;
    if (this.breaker.open) return undefined;
    const before = context.messages;
    const room = await this.room.make(this.pressure(contextTokens), { reason: "threshold", willRetry: false });
    if (!room.compacted || beforePrompt) return undefined;
    const continueTurn = shouldAutoContinue({
      autoContinue: settings.compaction.autoContinue,
      lastMessage: before[before.length - 1],
      alreadyContinuedThisTurn: this.autoContinuedThisTurn,
      compactionReduced: room.progress,
    });
    if (!continueTurn) return undefined;
    this.autoContinuedThisTurn = true;
    return this.nudge(AUTO_CONTINUE_PROMPT);
  }

  /**
   * An answer cut at the output limit while the context is past backgroundPercent (or the
   * threshold): compact, then one continuation, at most MAX_TRUNCATED_CONTINUATIONS in a row.
   * Undefined when the rule does not apply (the threshold rule may still).
   */
  private async continueTruncated(trigger: CompactionTrigger): Promise<{ step: Step | undefined } | undefined> {
    const { context, settings } = this.options;
    if (this.breaker.open || this.truncatedInARow >= MAX_TRUNCATED_CONTINUATIONS) return undefined;
    const tokens = trigger.kind === "threshold" ? trigger.contextTokens : contextTokensNow(context.messages);
    const pressure = this.pressure(tokens);
    if (pressure.level === "below") return undefined;
    this.truncatedInARow++;
    const room = await this.room.make({ ...pressure, level: "threshold" }, { reason: "threshold", willRetry: false });
    if (!(room.compacted ? room.progress : room.enough) || !settings.compaction.autoContinue) return { step: undefined };
    this.autoContinuedThisTurn = true;
    return { step: this.nudge(TRUNCATED_CONTINUE_PROMPT) };
  }

  private nudge(text: string): Step {
    const nudge = userMessage(text, this.options.now(), { synthetic: true });
    return () => this.options.context.agent.prompt(nudge as never);
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
    const { context, sessionManager, hooks, settings, summarizers, emit, now, summaryFooter } = this.options;
    return {
      ...(summaryFooter ? { summaryFooter } : {}),
      sessionManager,
      hooks,
      settings,
      chain: (requiredTokens, span) => summarizers.chain(context.model, requiredTokens, span),
      emit,
      now,
      onStored: () => context.refresh(),
    };
  }
}
