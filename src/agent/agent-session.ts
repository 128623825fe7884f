/**
 * AgentSession: a pi-agent-core Agent bound to a SessionManager. Every message is stored as it
 * ends; after each run the session retries transient errors, recovers from a context overflow
 * (compact, then continue), and compacts when the context passes the threshold, also inside a
 * run before the next model call (mid-turn, through pi-agent-core's transformContext).
 *
 * This class is the public surface and the wiring. The concerns live next to it: the turn loop
 * (turn-loop.ts), when to compact (compaction-control.ts), making room (room.ts, background-summary.ts)
 * and how a compaction goes (compaction-run.ts), the mid-turn seam (mid-turn.ts), tree moves
 * (session-tree.ts), the agent's context (agent-context.ts), subscribers (event-hub.ts), and the
 * pure rules (overflow, retry, candidates).
 */
import type { Agent, AgentEvent, StreamFn, ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Api, ImageContent, Model } from "@mariozechner/pi-ai";
import { resolveSettings, type Settings } from "../config/settings.js";
import { convertToLlm } from "../messages/convert.js";
import { withoutStrayToolResults } from "../messages/tool-pairing.js";
import type { AgentMessage } from "../format/message-types.js";
import type { SessionManager } from "../session/manager.js";
import type { NavigateTreeResult } from "../ops/navigate.js";
import { type UncompactResult, type UndoneSummary, uncompactSession } from "../ops/uncompact.js";
import { AgentContext, userMessage } from "./agent-context.js";
import { CompactionControl } from "./compaction-control.js";
import type { CompactionRunOptions } from "./compaction-run.js";
import { EventHub } from "./event-hub.js";
import type { AgentSessionListener, SessionCompactionResult, SessionHookEvents } from "./events.js";
import { type HookHandler, HookRunner } from "./hooks.js";
import { type ContextUsage, contextUsage, type OverflowDetector } from "./overflow.js";
import { MessageRecorder } from "./persist.js";
import { RECALL_NOTE, recallTools } from "./recall.js";
import { SummarizerSource } from "./summarizer-source.js";
import { TurnLoop } from "./turn-loop.js";
import { TurnRetry } from "./turn-retry.js";
import { type TreeMoveOptions, TreeMoves } from "./session-tree.js";
import { pruneStep, savingsStep } from "./session-prune.js";
import { midTurnTransform } from "./mid-turn.js";
import { nativeOfContext } from "./native-method.js";
import { nativeReplay } from "./native-replay.js";
import type { AgentSessionOptions } from "./session-options.js";
import { errorText } from "../util/error-text.js";

export type { AgentSessionOptions } from "./session-options.js";
export { AUTO_CONTINUE_PROMPT } from "./compaction-control.js";

export class AgentSession {
  readonly agent: Agent;
  readonly sessionManager: SessionManager;
  readonly settings: Settings;
  private readonly hooks = new HookRunner<SessionHookEvents>();
  private readonly events = new EventHub();
  private readonly now: () => number;
  private readonly context: AgentContext;
  private readonly retry: TurnRetry;
  private readonly compaction: CompactionControl;
  private readonly loop: TurnLoop;
  private readonly tree: TreeMoves;

  private constructor(
    options: AgentSessionOptions,
    AgentClass: typeof Agent,
    detectOverflow: OverflowDetector,
    resolveModel: (provider: string, id: string) => Model<Api> | undefined,
    stream: StreamFn,
  ) {
    this.sessionManager = options.sessionManager;
    this.settings = resolveSettings(options.settings);
    this.now = options.now ?? Date.now;
    const emit = this.events.emit.bind(this.events);
    this.retry = new TurnRetry(() => this.settings.retry, emit, this.now);
    const { remoteEndpoint, models, model: compactionModel, methods } = this.settings.compaction;
    // a native compaction's payload goes back to the model that made it, in its requests and in the next compaction's
    const replay = nativeReplay(nativeOfContext(this.sessionManager, () => this.agent.state.messages as AgentMessage[]), (message) => emit({ type: "warning", message }));
    const summarizers = new SummarizerSource({
      ...options,
      remoteEndpoint,
      models,
      model: compactionModel,
      methods,
      resolveModel,
      onSkip: (message) => emit({ type: "warning", message }),
      now: this.now,
      requestShape: () => ({
        systemPrompt: this.agent.state.systemPrompt,
        tools: this.agent.state.tools as never,
        options: { reasoning: this.agent.state.thinkingLevel === "off" ? undefined : this.agent.state.thinkingLevel, sessionId: this.agent.sessionId },
        rewrite: (body) => replay.rewrite(this.agent.state.model as Model<Api>, body),
      }),
    });
    const sessionContext = this.sessionManager.buildSessionContext();
    this.agent = new AgentClass({
      ...options.agentOptions,
      initialState: {
        systemPrompt: options.systemPrompt ?? "",
        model: options.model,
        thinkingLevel: options.thinkingLevel ?? (sessionContext.thinkingLevel as ThinkingLevel),
        tools: [...(options.tools ?? []), ...(options.recall ? recallTools(options.sessionManager) : [])],
        messages: sessionContext.messages as never,
      },
      // before each model call: a compaction inside the turn may replace the run's context
      transformContext: midTurnTransform(() => this.compaction, options.agentOptions?.transformContext),
      // the session keeps every entry; a request leaves out tool results a provider would refuse
      convertToLlm: (messages) => withoutStrayToolResults(convertToLlm(messages as AgentMessage[])) as never,
      ...(options.getApiKey ? { getApiKey: options.getApiKey } : {}),
      streamFn: replay.stream(stream),
    });
    this.context = new AgentContext(this.agent, this.sessionManager);
    const shared = { context: this.context, sessionManager: this.sessionManager, settings: this.settings, hooks: this.hooks, summarizers };
    this.compaction = new CompactionControl({
      ...shared,
      ...(options.recall ? { summaryFooter: RECALL_NOTE } : {}),
      prune: pruneStep(this.sessionManager, options.prune, this.now),
      savings: savingsStep(this.sessionManager, this.settings.pruning, options.prune, this.now),
      detectOverflow,
      emit,
      now: this.now,
    });
    this.loop = new TurnLoop({
      context: this.context,
      compaction: this.compaction,
      retry: this.retry,
      recorder: new MessageRecorder(this.sessionManager),
      detectOverflow,
    });
    this.tree = new TreeMoves({ ...shared, waitUntilIdle: () => this.loop.waitUntilIdleForMove() });
    this.agent.subscribe((event) => this.onAgentEvent(event));
    this.hooks.setErrorHandler(({ event, index, error }) => emit({ type: "hook_error", event, index, error: errorText(error) }));
  }

  /** Loads pi-agent-core and pi-ai (lazily: the CLI's inspection commands never need them). */
  static async create(options: AgentSessionOptions): Promise<AgentSession> {
    const [{ Agent }, piAi] = await Promise.all([import("@mariozechner/pi-agent-core"), import("@mariozechner/pi-ai")]);
    const detect = options.detectOverflow ?? (piAi.isContextOverflow as unknown as OverflowDetector);
    const registry = piAi.getModel as unknown as (provider: string, id: string) => Model<Api> | undefined;
    return new AgentSession(options, Agent, detect, options.resolveModel ?? registry, options.streamFn ?? (piAi.streamSimple as StreamFn));
  }

  get model(): Model<Api> {
    return this.context.model;
  }

  get messages(): AgentMessage[] {
    return this.context.messages;
  }

  get isCompacting(): boolean {
    return this.compaction.isCompacting;
  }

  /** True after three failed automatic compactions in a row, until a manual compaction succeeds. */
  get isAutoCompactionPaused(): boolean {
    return this.compaction.autoCompactionPaused;
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
    return this.events.subscribe(listener);
  }

  /**
   * Sends a user prompt and resolves when the agent, and any retry or compaction that follows,
   * is done. A prompt sent while a compaction or retry is pending waits for it; one sent while
   * the model is answering throws (use steer or followUp).
   */
  async prompt(input: string | AgentMessage, images?: ImageContent[]): Promise<void> {
    await this.loop.startTurn();
    const message = typeof input === "string" ? userMessage(input, this.now(), { images }) : input;
    await this.loop.drive(() => this.agent.prompt(message as never));
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

  // each stops one kind of work only
  abortRetry(): void { this.retry.abort(); }
  abortCompaction(): void { this.compaction.abort(); }
  abortBranchSummary(): void { this.tree.abortSummary(); }

  /** Resolves when no run, retry or compaction is in progress. */
  waitForIdle(): Promise<void> {
    return this.loop.waitForIdle();
  }

  /**
   * Compacts now, with optional focus instructions. Aborts the running operation first, then
   * summarizes with the same candidates and retries as automatic compaction. Throws
   * CompactionError ("Already compacted", "Nothing to compact…", "Compaction cancelled", …).
   * `review` sees the summary before it is written and returns the text to store, or `undefined`
   * to cancel (nothing written).
   */
  async compact(customInstructions?: string, options: { review?: CompactionRunOptions["review"] } = {}): Promise<SessionCompactionResult> {
    await this.abort();
    return this.compaction.compact(customInstructions, options.review);
  }

  /**
   * Moves to another entry of the session tree, optionally summarizing the branch being left;
   * the agent's context then follows the new leaf.
   */
  async navigateTree(targetId: string, options: TreeMoveOptions = {}): Promise<NavigateTreeResult> {
    const result = await this.tree.navigate(targetId, options);
    if (result.newLeafId !== result.oldLeafId) this.compaction.branchChanged();
    return result;
  }

  /**
   * Undoes the latest compaction on the branch (or `compactionId`, or with `type: "branch_summary"`
   * the latest branch summary) on a new branch, nothing rewritten (ops/uncompact.ts); the agent's
   * context then follows the new leaf.
   */
  async uncompact(compactionId?: string, type: UndoneSummary = "compaction"): Promise<UncompactResult> {
    await this.abort();
    const result = await uncompactSession(this.sessionManager, { ...(compactionId === undefined ? {} : { compactionId }), type });
    this.context.refresh();
    this.compaction.branchChanged();
    return result;
  }

  /** Forks before a user message; returns its text for editing. */
  async branch(entryId: string): Promise<{ selectedText: string; cancelled: boolean }> {
    const result = await this.tree.branch(entryId);
    this.compaction.branchChanged();
    return result;
  }

  /** Context size: tokens null after a compaction until a fresh answer; undefined without a window. */
  getContextUsage(): ContextUsage | undefined {
    return contextUsage(this.messages, this.sessionManager.getContextBranch(), this.model.contextWindow ?? 0);
  }

  /** Switches the model for the next turns and records the change in the session. */
  setModel(model: Model<Api>): void {
    this.agent.state.model = model;
    this.sessionManager.appendModelChange(model.provider, model.id);
  }

  /** Stores and notes the outcome first, so a subscriber sees the session already up to date. */
  private async onAgentEvent(event: AgentEvent): Promise<void> {
    this.loop.observe(event);
    this.events.emit(event);
  }

  private asMessage(message: string | AgentMessage): AgentMessage {
    return typeof message === "string" ? userMessage(message, this.now()) : message;
  }
}
