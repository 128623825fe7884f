/**
 * AgentSession: a pi-agent-core Agent bound to a SessionManager. Every message is stored as it
 * ends; after each run the session retries transient errors, recovers from a context overflow
 * (compact, then continue), and compacts when the context passes the threshold. Rules live in
 * the pure modules next to this one (overflow, retry, candidates) and the compaction itself in
 * compaction-run; this class only sequences them and keeps the agent's context in step with
 * the file.
 *
 * pi-agent-core awaits its listeners, so nothing may start a new agent run from inside one.
 * A "drive" loop therefore runs outside the agent: it starts a run, waits for it to settle,
 * then decides the follow-up (retry, continue after recovery, auto-continue), and repeats.
 */
import type { Agent, AgentEvent, AgentOptions, AgentTool, StreamFn, ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Api, ImageContent, Model } from "@mariozechner/pi-ai";
import { estimateContextTokens } from "../compaction/tokens.js";
import { resolveSettings, type Settings, type SettingsInput } from "../config/settings.js";
import { convertToLlm } from "../messages/convert.js";
import type { AgentMessage, AssistantMessage, UserMessage } from "../messages/types.js";
import type { SessionManager } from "../session/manager.js";
import { destinationOf, type NavigateTreeResult, navigateTree } from "../session/navigate.js";
import type { Summarizer } from "../summarizer/types.js";
import { modelRef, selectCandidates } from "./candidates.js";
import { CompactionError, type CompactionOutcome, runCompaction } from "./compaction-run.js";
import type {
  AgentSessionEvent,
  AgentSessionListener,
  AutoCompactionReason,
  SessionCompactionResult,
  SessionHookEvents,
} from "./events.js";
import { type HookHandler, HookRunner } from "./hooks.js";
import {
  checkCompaction,
  compactionReduced,
  isBeforeLatestCompaction,
  type OverflowDetector,
  shouldAutoContinue,
} from "./overflow.js";
import { backoffDelay, isRetryableError, parseRetryAfter, SleepAbortedError, sleep } from "./retry.js";
import { type PruneStep, pruneStep } from "./session-prune.js";
import type { PruneConfig } from "../compaction/prune.js";

export const AUTO_CONTINUE_PROMPT = "Continue if you have next steps.";

export interface AgentSessionOptions {
  sessionManager: SessionManager;
  /** the model the agent talks to */
  model: Model<Api>;
  systemPrompt?: string;
  tools?: AgentTool[];
  thinkingLevel?: ThinkingLevel;
  /** defaults with these applied (loadSettings() gives the user's and project's) */
  settings?: SettingsInput;
  getApiKey?: (provider: string) => string | undefined | Promise<string | undefined>;
  /** always summarize with this (tests, offline use); otherwise the remote endpoint or the models */
  summarizer?: Summarizer;
  /** how a candidate model becomes a summarizer (default: pi-ai's completeSimple, no SDK retries) */
  createSummarizer?: (model: Model<Api>, apiKey: string | undefined) => Summarizer | Promise<Summarizer>;
  /** looks up `compaction.models` entries (default: pi-ai's model registry) */
  resolveModel?: (provider: string, id: string) => Model<Api> | undefined;
  /** the agent's stream function (default: pi-ai's streamSimple) */
  streamFn?: StreamFn;
  agentOptions?: Omit<AgentOptions, "initialState" | "convertToLlm" | "getApiKey" | "streamFn">;
  /** default: pi-ai's isContextOverflow */
  detectOverflow?: OverflowDetector;
  /** tool-output pruning before each compaction check (default: the engine's defaults); false turns it off */
  prune?: Partial<PruneConfig> | false;
  now?: () => number;
}

type Step = () => Promise<void>;

export class AgentSession {
  readonly agent: Agent;
  readonly sessionManager: SessionManager;
  readonly settings: Settings;
  private readonly hooks = new HookRunner<SessionHookEvents>();
  private readonly listeners = new Set<AgentSessionListener>();
  private readonly persisted = new WeakSet<object>();
  private readonly now: () => number;
  private readonly prune: PruneStep;
  private lastAssistant: AssistantMessage | undefined;
  private driving: Promise<void> | undefined;
  private compacting: Promise<unknown> | undefined;
  private autoController: AbortController | undefined;
  private manualController: AbortController | undefined;
  private branchController: AbortController | undefined;
  private retryController: AbortController | undefined;
  private retryAttempt = 0;
  private overflowRecoveryAttempted = false;
  private autoContinuedThisTurn = false;

  private constructor(
    private readonly options: AgentSessionOptions,
    AgentClass: typeof Agent,
    private readonly detectOverflow: OverflowDetector,
    private readonly resolveModel: (provider: string, id: string) => Model<Api> | undefined,
  ) {
    this.sessionManager = options.sessionManager;
    this.settings = resolveSettings(options.settings);
    this.now = options.now ?? Date.now;
    this.prune = pruneStep(this.sessionManager, options.prune, this.now);
    const context = this.sessionManager.buildSessionContext();
    this.agent = new AgentClass({
      ...options.agentOptions,
      initialState: {
        systemPrompt: options.systemPrompt ?? "",
        model: options.model,
        thinkingLevel: options.thinkingLevel ?? (context.thinkingLevel as ThinkingLevel),
        tools: options.tools ?? [],
        messages: context.messages as never,
      },
      convertToLlm: (messages) => convertToLlm(messages as AgentMessage[]) as never,
      ...(options.getApiKey ? { getApiKey: options.getApiKey } : {}),
      ...(options.streamFn ? { streamFn: options.streamFn } : {}),
    });
    this.agent.subscribe((event) => this.onAgentEvent(event));
    this.hooks.setErrorHandler(({ event, index, error }) =>
      this.emit({ type: "hook_error", event, index, error: error instanceof Error ? error.message : String(error) }),
    );
  }

  /** Loads pi-agent-core and pi-ai (lazily: the CLI's inspection commands never need them). */
  static async create(options: AgentSessionOptions): Promise<AgentSession> {
    const [{ Agent }, piAi] = await Promise.all([import("@mariozechner/pi-agent-core"), import("@mariozechner/pi-ai")]);
    const detect = options.detectOverflow ?? (piAi.isContextOverflow as unknown as OverflowDetector);
    const registry = piAi.getModel as unknown as (provider: string, id: string) => Model<Api> | undefined;
    return new AgentSession(options, Agent, detect, options.resolveModel ?? registry);
  }

  // ---------------------------------------------------------------- public surface

  get model(): Model<Api> {
    return this.agent.state.model as Model<Api>;
  }

  get messages(): AgentMessage[] {
    return this.agent.state.messages as AgentMessage[];
  }

  get isCompacting(): boolean {
    return this.autoController !== undefined || this.manualController !== undefined;
  }

  get isStreaming(): boolean {
    return this.agent.state.isStreaming;
  }

  /** Registers a hook handler; returns a function that removes it. */
  on<K extends keyof SessionHookEvents>(
    event: K,
    handler: HookHandler<SessionHookEvents[K]["payload"], SessionHookEvents[K]["result"]>,
  ): () => void {
    return this.hooks.on(event, handler);
  }

  subscribe(listener: AgentSessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Sends a user prompt and resolves when the agent, and any retry or compaction that follows,
   * is done. A prompt sent while a compaction or retry is pending waits for it; one sent while
   * the model is answering throws (use steer or followUp).
   */
  async prompt(input: string | AgentMessage, images?: ImageContent[]): Promise<void> {
    await this.waitForPendingWork();
    const last = this.lastAssistantInContext();
    if (last) await this.checkAfterRun(last, true);
    // A new user turn: it gets its own overflow recovery and its own auto-continue.
    this.overflowRecoveryAttempted = false;
    this.autoContinuedThisTurn = false;
    const message: AgentMessage =
      typeof input === "string"
        ? { role: "user", content: [{ type: "text", text: input }, ...(images ?? [])], timestamp: this.now() }
        : input;
    await this.drive(() => this.agent.prompt(message as never));
  }

  steer(message: string | AgentMessage): void {
    this.agent.steer(this.asMessage(message) as never);
  }

  followUp(message: string | AgentMessage): void {
    this.agent.followUp(this.asMessage(message) as never);
  }

  /** Stops whatever runs: the model's answer, a retry wait, a compaction. */
  async abort(): Promise<void> {
    this.retryController?.abort();
    this.abortCompaction();
    this.agent.abort();
    await this.waitForIdle();
  }

  abortRetry(): void {
    this.retryController?.abort();
  }

  abortCompaction(): void {
    this.manualController?.abort();
    this.autoController?.abort();
  }

  abortBranchSummary(): void {
    this.branchController?.abort();
  }

  /** Resolves when no run, retry or compaction is in progress. */
  async waitForIdle(): Promise<void> {
    while (this.driving || this.compacting) {
      await Promise.allSettled([this.driving, this.compacting]);
    }
  }

  /**
   * Compacts now, with optional focus instructions. Aborts the running operation first, then
   * summarizes with the same candidates and retries as automatic compaction. Throws
   * CompactionError ("Already compacted", "Nothing to compact…", "Compaction cancelled", …).
   */
  async compact(customInstructions?: string): Promise<SessionCompactionResult> {
    await this.abort();
    const controller = new AbortController();
    this.manualController = controller;
    const work = runCompaction(this.compactionContext(), { reason: "manual", customInstructions, signal: controller.signal });
    this.compacting = work;
    try {
      const outcome = await work;
      this.refreshMessages();
      return outcome.result;
    } finally {
      if (this.manualController === controller) this.manualController = undefined;
      if (this.compacting === work) this.compacting = undefined;
    }
  }

  /**
   * Moves to another entry of the session tree (spec 8.5), optionally summarizing the branch
   * being left; the agent's context then follows the new leaf.
   */
  async navigateTree(
    targetId: string,
    options: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean } = {},
  ): Promise<NavigateTreeResult> {
    await this.waitForPendingWork();
    if (this.isStreaming) throw new Error("The agent is answering: abort() or wait before moving in the tree");
    const controller = new AbortController();
    this.branchController = controller;
    try {
      const summarizer = options.summarize ? await this.branchSummarizer() : undefined;
      const result = await navigateTree(this.sessionManager, targetId, {
        ...options,
        summarizer,
        signal: controller.signal,
        reserveTokens: this.settings.branchSummary.reserveTokens,
        hooks: {
          beforeTree: (preparation, signal) =>
            this.hooks.hasHandlers("session_before_tree")
              ? this.hooks.run("session_before_tree", { preparation }, signal)
              : undefined,
        },
      });
      if (!result.cancelled && result.newLeafId !== result.oldLeafId) {
        this.refreshMessages();
        await this.hooks.run("session_tree", {
          newLeafId: result.newLeafId,
          oldLeafId: result.oldLeafId,
          ...(result.summaryEntry ? { summaryEntry: result.summaryEntry, fromExtension: result.fromExtension } : {}),
        });
      }
      return result;
    } finally {
      if (this.branchController === controller) this.branchController = undefined;
    }
  }

  /**
   * Forks the conversation before a user message (spec 12.13), so it can be edited and sent
   * again: the path up to its parent becomes a new session file (createBranchedSession). The
   * first message has no path to copy: the leaf moves before it instead, in the same file.
   */
  async branch(entryId: string): Promise<{ selectedText: string; cancelled: boolean }> {
    await this.waitForPendingWork();
    if (this.isStreaming) throw new Error("The agent is answering: abort() or wait before branching");
    const entry = this.sessionManager.getEntry(entryId);
    if (entry?.type !== "message" || entry.message.role !== "user") {
      throw new Error(`Entry ${entryId} is not a user message: branch from a user message`);
    }
    const selectedText = destinationOf(entry).editorText ?? "";
    if (entry.parentId === null) this.sessionManager.checkout(null);
    else this.sessionManager.createBranchedSession(entry.parentId);
    this.refreshMessages();
    return { selectedText, cancelled: false };
  }

  /**
   * Context size as the model last reported it plus estimates of what came after. `tokens` is
   * null after a compaction until a response reports fresh usage; undefined without a window.
   */
  getContextUsage(): { tokens: number | null; contextWindow: number; percent: number | null } | undefined {
    const contextWindow = this.model.contextWindow ?? 0;
    if (!(contextWindow > 0)) return undefined;
    const messages = this.messages;
    const estimate = estimateContextTokens(messages);
    const branch = this.sessionManager.getBranch();
    const hasCompaction = branch.some((entry) => entry.type === "compaction");
    const usageMessage = estimate.lastUsageIndex === null ? undefined : messages[estimate.lastUsageIndex];
    if (hasCompaction && (!usageMessage || isBeforeLatestCompaction(branch, usageMessage) || estimate.usageTokens === 0)) {
      return { tokens: null, contextWindow, percent: null };
    }
    return { tokens: estimate.tokens, contextWindow, percent: (estimate.tokens / contextWindow) * 100 };
  }

  /** Switches the model for the next turns and records the change in the session. */
  setModel(model: Model<Api>): void {
    this.agent.state.model = model;
    this.sessionManager.appendModelChange(model.provider, model.id);
  }

  // ---------------------------------------------------------------- agent events and persistence

  private async onAgentEvent(event: AgentEvent): Promise<void> {
    if (event.type === "message_end") {
      this.persist(event.message as AgentMessage);
      const message = event.message as AgentMessage;
      if (message.role === "assistant") {
        this.lastAssistant = message;
        if (message.stopReason !== "error" && this.retryAttempt > 0) {
          this.emit({ type: "auto_retry_end", success: true, attempt: this.retryAttempt });
          this.retryAttempt = 0;
        }
      }
    } else if (event.type === "agent_end") {
      // A run that failed outside the model call ends with an assistant that had no message_end.
      for (const message of event.messages as AgentMessage[]) {
        if (this.persisted.has(message)) continue;
        this.persist(message);
        if (message.role === "assistant") this.lastAssistant = message;
      }
    }
    this.emit(event);
  }

  private persist(message: AgentMessage): void {
    if (this.persisted.has(message)) return;
    this.persisted.add(message);
    switch (message.role) {
      case "custom":
      case "hookMessage":
        this.sessionManager.appendCustomMessageEntry(message.customType, message.content, message.display, message.details);
        break;
      case "compactionSummary":
      case "branchSummary":
        break; // these come from entries, never from the agent
      default:
        this.sessionManager.appendMessage(message);
    }
  }

  private emit(event: AgentSessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A subscriber's failure must not break the agent loop that called us.
      }
    }
  }

  // ---------------------------------------------------------------- the drive loop

  private async waitForPendingWork(): Promise<void> {
    for (;;) {
      if (this.compacting) {
        await Promise.allSettled([this.compacting]);
        continue;
      }
      if (this.driving) {
        if (this.agent.state.isStreaming) {
          throw new Error("The agent is already answering: use steer() or followUp() to queue a message, or wait");
        }
        await Promise.allSettled([this.driving]);
        continue;
      }
      return;
    }
  }

  private async drive(first: Step): Promise<void> {
    const run = async () => {
      let step: Step | undefined = first;
      while (step) {
        this.lastAssistant = undefined;
        await step();
        step = this.lastAssistant ? await this.afterRun(this.lastAssistant) : undefined;
        if (!step && this.agent.hasQueuedMessages() && this.lastMessageIs("assistant")) step = () => this.agent.continue();
      }
    };
    const driving = run();
    this.driving = driving;
    try {
      await driving;
    } finally {
      if (this.driving === driving) this.driving = undefined;
    }
  }

  /** What follows a finished run: a retry, a recovery, an auto-continue, or nothing. */
  private async afterRun(message: AssistantMessage): Promise<Step | undefined> {
    if (isRetryableError(message, (m) => this.detectOverflow(m as AssistantMessage, this.model.contextWindow))) {
      const retry = await this.retryAfterError(message);
      if (retry) return retry;
    }
    return this.checkAfterRun(message, false);
  }

  private async retryAfterError(message: AssistantMessage): Promise<Step | undefined> {
    const { enabled, maxRetries, baseDelayMs } = this.settings.retry;
    if (!enabled) return undefined;
    this.retryAttempt++;
    const errorMessage = message.errorMessage ?? "";
    if (this.retryAttempt > maxRetries) {
      this.emit({ type: "auto_retry_end", success: false, attempt: this.retryAttempt - 1, finalError: errorMessage });
      this.retryAttempt = 0;
      return undefined;
    }
    const delayMs = backoffDelay(this.retryAttempt - 1, baseDelayMs, parseRetryAfter(errorMessage, this.now()));
    this.emit({ type: "auto_retry_start", attempt: this.retryAttempt, maxAttempts: maxRetries, delayMs, errorMessage });
    this.dropTrailing(message);
    const controller = new AbortController();
    this.retryController = controller;
    try {
      await sleep(delayMs, controller.signal);
    } catch (error) {
      if (!(error instanceof SleepAbortedError)) throw error;
      this.emit({ type: "auto_retry_end", success: false, attempt: this.retryAttempt, finalError: "Retry cancelled" });
      this.retryAttempt = 0;
      return undefined;
    } finally {
      if (this.retryController === controller) this.retryController = undefined;
    }
    return () => this.agent.continue();
  }

  /**
   * Pruning, then the compaction rules of decision 5. After a run (`beforePrompt` false) a
   * recovered overflow continues the agent and a threshold compaction may auto-continue; before
   * a prompt, a threshold compaction just makes room for it.
   */
  private async checkAfterRun(message: AssistantMessage, beforePrompt: boolean): Promise<Step | undefined> {
    if (!this.settings.compaction.enabled) return undefined;
    const pruned = this.prune();
    if (pruned) {
      this.refreshMessages();
      this.emit({ type: "session_pruned", tokensSaved: pruned.tokensSaved, prunedCount: pruned.prunedCount });
    }
    const branch = this.sessionManager.getBranch();
    const isStale = (m: AgentMessage) => isBeforeLatestCompaction(branch, m);
    const trigger = checkCompaction({
      message,
      settings: this.settings.compaction,
      model: { provider: this.model.provider, id: this.model.id, contextWindow: this.model.contextWindow ?? 0 },
      messageIsStale: isStale(message),
      overflowRecoveryAttempted: this.overflowRecoveryAttempted,
      messages: this.messages,
      isStale,
      prunedTokens: pruned?.tokensSaved,
      includeAborted: beforePrompt,
      detectOverflow: this.detectOverflow,
    });

    if (trigger.kind === "overflow-exhausted") {
      this.emit({ type: "auto_compaction_start", reason: "overflow" });
      this.emit({
        type: "auto_compaction_end",
        reason: "overflow",
        aborted: false,
        willRetry: false,
        errorMessage:
          "Context overflow recovery failed: the context still overflows after one compaction this turn; compact with instructions, prune, or switch to a model with a larger window",
      });
      return undefined;
    }
    if (trigger.kind === "overflow") {
      this.overflowRecoveryAttempted = true;
      this.dropTrailing(message);
      const outcome = await this.autoCompact("overflow", true);
      if (!outcome) return undefined;
      // The failed answer is back in the context rebuilt from the file; the retry must not see it.
      this.dropTrailing(message);
      return this.lastMessageIs("assistant") ? undefined : () => this.agent.continue();
    }
    if (trigger.kind !== "threshold") return undefined;

    const before = this.messages;
    const outcome = await this.autoCompact("threshold", false);
    if (!outcome || beforePrompt) return undefined;
    const reduced = compactionReduced(before, this.messages);
    if (!reduced) {
      this.emit({
        type: "warning",
        message: "Compaction did not reduce the context; not continuing automatically. Lower compaction.keepRecentTokens or prune.",
      });
    }
    const continueTurn = shouldAutoContinue({
      autoContinue: this.settings.compaction.autoContinue,
      lastMessage: before[before.length - 1],
      alreadyContinuedThisTurn: this.autoContinuedThisTurn,
      compactionReduced: reduced,
    });
    if (!continueTurn) return undefined;
    this.autoContinuedThisTurn = true;
    const nudge: UserMessage = {
      role: "user",
      content: [{ type: "text", text: AUTO_CONTINUE_PROMPT }],
      synthetic: true,
      timestamp: this.now(),
    };
    return () => this.agent.prompt(nudge as never);
  }

  /** Automatic compaction with its start/end events; undefined when it did not happen. */
  private async autoCompact(reason: AutoCompactionReason, willRetry: boolean): Promise<CompactionOutcome | undefined> {
    this.emit({ type: "auto_compaction_start", reason });
    this.autoController?.abort();
    const controller = new AbortController();
    this.autoController = controller;
    const work = runCompaction(this.compactionContext(), { reason, signal: controller.signal });
    this.compacting = work;
    try {
      const outcome = await work;
      this.refreshMessages();
      this.emit({ type: "auto_compaction_end", reason, result: outcome.result, aborted: false, willRetry });
      return outcome;
    } catch (error) {
      const code = error instanceof CompactionError ? error.code : "failed";
      const text = error instanceof Error ? error.message : String(error);
      if (code === "cancelled" || controller.signal.aborted) {
        this.emit({ type: "auto_compaction_end", reason, aborted: true, willRetry: false });
      } else {
        this.emit({ type: "auto_compaction_end", reason, aborted: false, willRetry: false, errorMessage: this.failure(reason, text) });
      }
      return undefined;
    } finally {
      if (this.autoController === controller) this.autoController = undefined;
      if (this.compacting === work) this.compacting = undefined;
    }
  }

  private failure(reason: AutoCompactionReason, text: string): string {
    return reason === "overflow" ? `Context overflow recovery failed: ${text}` : `Auto-compaction failed: ${text}`;
  }

  // ---------------------------------------------------------------- summarizers

  private compactionContext() {
    return {
      sessionManager: this.sessionManager,
      hooks: this.hooks,
      settings: this.settings,
      candidates: (requiredTokens: number) => this.summarizerCandidates(requiredTokens),
      emit: (event: AgentSessionEvent) => this.emit(event),
      now: this.now,
    };
  }

  private async summarizerFor(model: Model<Api>): Promise<Summarizer> {
    const apiKey = await this.options.getApiKey?.(model.provider);
    if (this.options.createSummarizer) return this.options.createSummarizer(model, apiKey);
    const { piAiSummarizer } = await import("../summarizer/pi-ai.js");
    // Retries are ours (with fallback to the next model), so the SDK must not retry as well.
    return piAiSummarizer(model, { apiKey, maxRetries: 0 });
  }

  private async fixedSummarizer(): Promise<Summarizer | undefined> {
    if (this.options.summarizer) return this.options.summarizer;
    const url = this.settings.compaction.remoteEndpoint;
    if (!url) return undefined;
    const { remoteSummarizer } = await import("../summarizer/remote.js");
    return remoteSummarizer({ url, maxRetries: 0 });
  }

  private async summarizerCandidates(requiredTokens: number): Promise<Summarizer[]> {
    const fixed = await this.fixedSummarizer();
    if (fixed) return [fixed];
    const { candidates, skipped } = selectCandidates({
      current: this.model,
      configured: this.settings.compaction.models,
      resolve: (provider, id) => (provider === this.model.provider && id === this.model.id ? this.model : this.resolveModel(provider, id)),
      requiredTokens,
    });
    for (const skip of skipped) this.emit({ type: "warning", message: `compaction model ${skip.ref} skipped: ${skip.reason}` });
    return Promise.all(candidates.map((model) => this.summarizerFor(model)));
  }

  private async branchSummarizer(): Promise<Summarizer> {
    return (await this.fixedSummarizer()) ?? this.summarizerFor(this.model);
  }

  // ---------------------------------------------------------------- agent context helpers

  /** Rebuilds the agent's context from the session (after a compaction, prune or move). */
  private refreshMessages(): void {
    this.agent.state.messages = this.sessionManager.buildSessionContext().messages as never;
  }

  /** Removes `message` from the end of the agent's context (it stays in the file). */
  private dropTrailing(message: AgentMessage): void {
    const messages = this.messages;
    if (messages[messages.length - 1] === message) this.agent.state.messages = messages.slice(0, -1) as never;
  }

  private lastMessageIs(role: AgentMessage["role"]): boolean {
    const messages = this.messages;
    return messages[messages.length - 1]?.role === role;
  }

  private lastAssistantInContext(): AssistantMessage | undefined {
    const messages = this.messages;
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i];
      if (message.role === "assistant") return message;
    }
    return undefined;
  }

  private asMessage(message: string | AgentMessage): AgentMessage {
    return typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }], timestamp: this.now() } : message;
  }

  /** For messages like "anthropic/claude-sonnet-4-5". */
  get modelName(): string {
    return modelRef(this.model);
  }
}
