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
import type { Agent, AgentEvent, ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Api, ImageContent, Model } from "@mariozechner/pi-ai";
import { resolveSettings, type Settings } from "../config/settings.js";
import { convertToLlm } from "../messages/convert.js";
import { withoutStrayToolResults } from "../messages/tool-pairing.js";
import type { AgentMessage, AssistantMessage, UserMessage } from "../format/message-types.js";
import type { SessionManager } from "../session/manager.js";
import type { NavigateTreeResult } from "../ops/navigate.js";
import { type CompactionOutcome, runAutoCompaction, runCompaction } from "./compaction-run.js";
import type {
  AgentSessionEvent,
  AgentSessionListener,
  AutoCompactionReason,
  SessionCompactionResult,
  SessionHookEvents,
} from "./events.js";
import { type HookHandler, HookRunner } from "./hooks.js";
import {
  type ContextUsage,
  checkCompaction,
  compactionReduced,
  contextUsage,
  isBeforeLatestCompaction,
  type OverflowDetector,
  shouldAutoContinue,
} from "./overflow.js";
import { isRetryableError } from "./retry.js";
import { SummarizerSource } from "./summarizer-source.js";
import { TurnRetry } from "./turn-retry.js";
import { branchBefore, navigateWithHooks, type TreeMoveOptions } from "./session-tree.js";
import { type PruneStep, pruneStep } from "./session-prune.js";
import type { AgentSessionOptions } from "./session-options.js";
import { appendAgentMessage } from "./persist.js";
import { errorText } from "../util/error-text.js";

export type { AgentSessionOptions } from "./session-options.js";

export const AUTO_CONTINUE_PROMPT = "Continue if you have next steps.";

const OVERFLOW_EXHAUSTED =
  "Context overflow recovery failed: the context still overflows after one compaction this turn; compact with instructions, prune, or switch to a model with a larger window";

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
  private readonly retry: TurnRetry;
  private readonly summarizers: SummarizerSource;
  private overflowRecoveryAttempted = false;
  private autoContinuedThisTurn = false;

  private constructor(
    options: AgentSessionOptions,
    AgentClass: typeof Agent,
    private readonly detectOverflow: OverflowDetector,
    resolveModel: (provider: string, id: string) => Model<Api> | undefined,
  ) {
    this.sessionManager = options.sessionManager;
    this.settings = resolveSettings(options.settings);
    this.now = options.now ?? Date.now;
    this.prune = pruneStep(this.sessionManager, options.prune, this.now);
    this.retry = new TurnRetry(() => this.settings.retry, (event) => this.emit(event), this.now);
    this.summarizers = new SummarizerSource({
      ...options,
      ...this.settings.compaction,
      resolveModel,
      onSkip: (message) => this.emit({ type: "warning", message }),
    });
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
      // the session keeps every entry; a request leaves out tool results a provider would refuse
      convertToLlm: (messages) => withoutStrayToolResults(convertToLlm(messages as AgentMessage[])) as never,
      ...(options.getApiKey ? { getApiKey: options.getApiKey } : {}),
      ...(options.streamFn ? { streamFn: options.streamFn } : {}),
    });
    this.agent.subscribe((event) => this.onAgentEvent(event));
    this.hooks.setErrorHandler(({ event, index, error }) =>
      this.emit({ type: "hook_error", event, index, error: errorText(error) }),
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
    this.retry.abort();
    this.abortCompaction();
    this.agent.abort();
    await this.waitForIdle();
  }

  abortRetry(): void {
    this.retry.abort();
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
      return (await work).result;
    } finally {
      if (this.manualController === controller) this.manualController = undefined;
      if (this.compacting === work) this.compacting = undefined;
    }
  }

  /**
   * Moves to another entry of the session tree (spec 8.5), optionally summarizing the branch
   * being left; the agent's context then follows the new leaf.
   */
  async navigateTree(targetId: string, options: TreeMoveOptions = {}): Promise<NavigateTreeResult> {
    await this.waitUntilIdleForMove();
    const controller = new AbortController();
    this.branchController = controller;
    try {
      return await navigateWithHooks(this.sessionManager, this.hooks, targetId, {
        ...options,
        summarizer: () => this.summarizers.forBranch(this.model),
        signal: controller.signal,
        reserveTokens: this.settings.branchSummary.reserveTokens,
        onMoved: () => this.refreshMessages(),
      });
    } finally {
      if (this.branchController === controller) this.branchController = undefined;
    }
  }

  /** Forks before a user message (spec 12.13); returns its text for editing. */
  async branch(entryId: string): Promise<{ selectedText: string; cancelled: boolean }> {
    await this.waitUntilIdleForMove();
    const selectedText = branchBefore(this.sessionManager, entryId);
    this.refreshMessages();
    return { selectedText, cancelled: false };
  }

  /** Context size: tokens null after a compaction until a fresh answer; undefined without a window. */
  getContextUsage(): ContextUsage | undefined {
    return contextUsage(this.messages, this.sessionManager.getBranch(), this.model.contextWindow ?? 0);
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
        if (message.stopReason !== "error") this.retry.succeeded();
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
    appendAgentMessage(this.sessionManager, message);
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

  private async waitUntilIdleForMove(): Promise<void> {
    await this.waitForPendingWork();
    if (this.isStreaming) throw new Error("The agent is answering: abort() or wait before moving in the tree");
  }

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
      // The failed answer leaves the context (it stays in the file) so the retry does not see it.
      const again = await this.retry.afterError(message.errorMessage ?? "", () => this.dropTrailing(message));
      if (again && !this.lastMessageIs("assistant")) return () => this.agent.continue();
    }
    return this.checkAfterRun(message, false);
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
      this.emit({ type: "auto_compaction_end", reason: "overflow", aborted: false, willRetry: false, errorMessage: OVERFLOW_EXHAUSTED });
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
    const nudge: UserMessage = { role: "user", content: [{ type: "text", text: AUTO_CONTINUE_PROMPT }], synthetic: true, timestamp: this.now() };
    return () => this.agent.prompt(nudge as never);
  }

  /** Automatic compaction with its start/end events; undefined when it did not happen. */
  private async autoCompact(reason: AutoCompactionReason, willRetry: boolean): Promise<CompactionOutcome | undefined> {
    this.autoController?.abort();
    const controller = new AbortController();
    this.autoController = controller;
    const work = runAutoCompaction(this.compactionContext(), reason, willRetry, controller.signal);
    this.compacting = work;
    try {
      return await work;
    } finally {
      if (this.autoController === controller) this.autoController = undefined;
      if (this.compacting === work) this.compacting = undefined;
    }
  }

  // ---------------------------------------------------------------- summarizers

  private compactionContext() {
    return {
      sessionManager: this.sessionManager,
      hooks: this.hooks,
      settings: this.settings,
      candidates: (requiredTokens: number) => this.summarizers.candidates(this.model, requiredTokens),
      emit: (event: AgentSessionEvent) => this.emit(event),
      now: this.now,
      onStored: () => this.refreshMessages(),
    };
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
    return this.messages.findLast((m): m is AssistantMessage => m.role === "assistant");
  }

  private asMessage(message: string | AgentMessage): AgentMessage {
    return typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }], timestamp: this.now() } : message;
  }
}
