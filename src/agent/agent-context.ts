/**
 * The agent's in-memory context, kept in step with the session file. The file keeps every entry;
 * the agent's context is what the next request sends. After a compaction, prune or tree move it
 * is rebuilt from the file, and a failed answer is taken off its end (it stays in the file) so a
 * retry or a continue does not send it again. The turn loop, the compaction triggers and the
 * tree moves all edit the context through this one place.
 */
import type { Agent } from "@mariozechner/pi-agent-core";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { AgentMessage, AssistantMessage, ImageContent, UserMessage } from "../format/message-types.js";
import type { SessionManager } from "../session/manager.js";

/** One agent run to start next: a prompt, or a continue of the context as it stands. */
export type Step = () => Promise<void>;

/** A user message of plain text (images after it); `synthetic` marks one bonsai sent itself. */
export function userMessage(text: string, timestamp: number, options: { images?: ImageContent[]; synthetic?: boolean } = {}): UserMessage {
  return {
    role: "user",
    content: [{ type: "text", text }, ...(options.images ?? [])],
    ...(options.synthetic ? { synthetic: true } : {}),
    timestamp,
  };
}

export class AgentContext {
  constructor(
    readonly agent: Agent,
    private readonly sessionManager: SessionManager,
  ) {}

  get model(): Model<Api> {
    return this.agent.state.model as Model<Api>;
  }

  get messages(): AgentMessage[] {
    return this.agent.state.messages as AgentMessage[];
  }

  /** Rebuilds the agent's context from the session (after a compaction, prune or move). */
  refresh(): void {
    this.agent.state.messages = this.sessionManager.buildSessionContext().messages as never;
  }

  /** Removes `message` from the end of the agent's context (it stays in the file). */
  dropTrailing(message: AgentMessage): void {
    const messages = this.messages;
    if (messages[messages.length - 1] === message) this.agent.state.messages = messages.slice(0, -1) as never;
  }

  lastIs(role: AgentMessage["role"]): boolean {
    const messages = this.messages;
    return messages[messages.length - 1]?.role === role;
  }

  lastAssistant(): AssistantMessage | undefined {
    return this.messages.findLast((m): m is AssistantMessage => m.role === "assistant");
  }

  /** Lets the agent go on from the context as it stands (the run a retry or recovery starts). */
  continue(): Promise<void> {
    return this.agent.continue();
  }
}
