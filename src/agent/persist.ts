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
