/**
 * How an agent message becomes a session entry: custom (and legacy hook) messages as
 * custom_message entries, everything else the agent produces as message entries. Summary
 * messages come from entries, so they are never written back.
 */
import type { AgentMessage } from "../format/message-types.js";
import type { SessionManager } from "../session/manager.js";

export function appendAgentMessage(session: SessionManager, message: AgentMessage): void {
  switch (message.role) {
    case "custom":
    case "hookMessage":
      session.appendCustomMessageEntry(message.customType, message.content, message.display, message.details);
      return;
    case "compactionSummary":
    case "branchSummary":
      return;
    default:
      session.appendMessage(message);
  }
}

/**
 * Stores each agent message once, as it ends. A run that fails outside the model call ends
 * with messages that never had a message_end, so agent_end offers them again and only the ones
 * not yet stored may be written (by identity: the same object is the same message).
 */
export class MessageRecorder {
  private readonly stored = new WeakSet<object>();

  constructor(private readonly session: SessionManager) {}

  has(message: AgentMessage): boolean {
    return this.stored.has(message);
  }

  store(message: AgentMessage): void {
    if (this.stored.has(message)) return;
    this.stored.add(message);
    appendAgentMessage(this.session, message);
  }
}
