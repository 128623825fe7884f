/**
 * AgentSession's turn loop. pi-agent-core awaits its listeners, so nothing may start a new agent
 * run from inside one. The loop therefore runs outside the agent: it starts a run, waits for it
 * to settle, then decides the follow-up (a retry of a transient error, a continue after overflow
 * recovery, an auto-continue after a threshold compaction, or the messages queued meanwhile)
 * and repeats until there is none. What a run ended with is learned from the agent's events,
 * which is also where each message is stored in the session as it ends.
 */
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { AgentMessage, AssistantMessage } from "../format/message-types.js";
import type { AgentContext, Step } from "./agent-context.js";
import type { CompactionControl } from "./compaction-control.js";
import type { OverflowDetector } from "./overflow.js";
import type { MessageRecorder } from "./persist.js";
import { isRetryableError } from "./retry.js";
import type { TurnRetry } from "./turn-retry.js";

export interface TurnLoopOptions {
  context: AgentContext;
  compaction: CompactionControl;
  retry: TurnRetry;
  recorder: MessageRecorder;
  detectOverflow: OverflowDetector;
}

export class TurnLoop {
  /** the assistant message the current run ended with, as the agent's events reported it */
  private lastAssistant: AssistantMessage | undefined;
  private driving: Promise<void> | undefined;

  constructor(private readonly options: TurnLoopOptions) {}

  /** Stores what the agent produced and notes how the run ended; called for every agent event. */
  observe(event: AgentEvent): void {
    const { recorder, retry } = this.options;
    if (event.type === "message_end") {
      const message = event.message as AgentMessage;
      recorder.store(message);
      if (message.role === "assistant") {
        this.lastAssistant = message;
        if (message.stopReason !== "error") retry.succeeded();
      }
    } else if (event.type === "agent_end") {
      // A run that failed outside the model call ends with an assistant that had no message_end.
      for (const message of event.messages as AgentMessage[]) {
        if (recorder.has(message)) continue;
        recorder.store(message);
        if (message.role === "assistant") this.lastAssistant = message;
      }
    }
  }

  /**
   * Readies a new user turn: waits for pending work, lets the compaction rules make room after
   * the last answer, and resets the turn's overflow recovery and auto-continue.
   */
  async startTurn(): Promise<void> {
    await this.waitForPendingWork();
    const last = this.options.context.lastAssistant();
    if (last) await this.options.compaction.check(last, true);
    this.options.compaction.startTurn();
  }

  /** Runs `first`, then every follow-up it calls for; resolves when there is none left. */
  async drive(first: Step): Promise<void> {
    const { context } = this.options;
    const run = async () => {
      let step: Step | undefined = first;
      while (step) {
        this.lastAssistant = undefined;
        this.options.compaction.runStarted();
        await step();
        step = this.lastAssistant ? await this.afterRun(this.lastAssistant) : undefined;
        if (!step && context.agent.hasQueuedMessages() && context.lastIs("assistant")) step = () => context.continue();
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

  /** Resolves when no run, retry or compaction is in progress. */
  async waitForIdle(): Promise<void> {
    const { compaction } = this.options;
    while (this.driving || compaction.pending) {
      await Promise.allSettled([this.driving, compaction.pending]);
    }
  }

  /** Waits for pending work; a tree move must not happen while the model answers. */
  async waitUntilIdleForMove(): Promise<void> {
    await this.waitForPendingWork();
    if (this.options.context.agent.state.isStreaming) {
      throw new Error("The agent is answering: abort() or wait before moving in the tree");
    }
  }

  /** Waits for a compaction or a retry wait to end; throws while the model is answering. */
  private async waitForPendingWork(): Promise<void> {
    const { compaction, context } = this.options;
    for (;;) {
      if (compaction.pending) {
        await Promise.allSettled([compaction.pending]);
        continue;
      }
      if (this.driving) {
        if (context.agent.state.isStreaming) {
          throw new Error("The agent is already answering: use steer() or followUp() to queue a message, or wait");
        }
        await Promise.allSettled([this.driving]);
        continue;
      }
      return;
    }
  }

  /** What follows a finished run: a retry, a recovery, an auto-continue, or nothing. */
  private async afterRun(message: AssistantMessage): Promise<Step | undefined> {
    const { context, retry, detectOverflow } = this.options;
    if (isRetryableError(message, (m) => detectOverflow(m as AssistantMessage, context.model.contextWindow))) {
      // The failed answer leaves the context (it stays in the file) so the retry does not see it.
      const again = await retry.afterError(message.errorMessage ?? "", () => context.dropTrailing(message));
      if (again && !context.lastIs("assistant")) return () => context.continue();
    }
    return this.options.compaction.check(message, false);
  }
}
