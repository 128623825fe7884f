/**
 * The mid-turn seam: pi-agent-core calls transformContext before every model call of a run, with
 * the run's own message list. AgentSession checks the context there (compaction-control.ts
 * beforeModelCall); once a compaction or savings inside the run rebuilt the agent's context from
 * the session, every later request of the run sends that context instead, so the same turn goes
 * on compacted, with no synthetic "continue" message. A caller's own transformContext runs after.
 */
import type { AgentMessage } from "../format/message-types.js";

/** pi-agent-core's transformContext, over its own message type `M` (bonsai's AgentMessage in another dress). */
export type TransformContext<M> = (messages: M[], signal?: AbortSignal) => Promise<M[]>;

export interface MidTurnControl {
  /** the messages to send instead of the run's, or undefined to send the run's */
  beforeModelCall(signal?: AbortSignal): Promise<AgentMessage[] | undefined>;
}

export function midTurnTransform<M>(control: () => MidTurnControl, next?: TransformContext<M>): TransformContext<M> {
  return async (messages, signal) => {
    const replaced = await control().beforeModelCall(signal);
    const out = (replaced as M[] | undefined) ?? messages;
    return next ? next(out, signal) : out;
  };
}
