/**
 * AgentSession's subscribers (UIs, SDK users) and how events reach them: in subscription order,
 * each listener isolated from the others. Events are emitted from inside pi-agent-core's own
 * listener and from the turn loop, so a subscriber that throws must not break the loop that
 * called it; its failure is swallowed here.
 */
import type { AgentSessionEvent, AgentSessionListener } from "./events.js";

export class EventHub {
  private readonly listeners = new Set<AgentSessionListener>();

  /** Adds a listener; returns a function that removes it. */
  subscribe(listener: AgentSessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: AgentSessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A subscriber's failure must not break the agent loop that called us.
      }
    }
  }
}
