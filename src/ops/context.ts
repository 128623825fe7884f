/**
 * What the model would be sent at a leaf of a session: the report of `bonsai context`, agent
 * messages or (`llm`) the messages after convertToLlm, with their estimated tokens.
 */
import { estimateMessagesTokens } from "../compaction/tokens.js";
import type { SessionContext } from "../format/entry-types.js";
import type { AgentMessage, LlmMessage } from "../format/message-types.js";
import { convertToLlm } from "../messages/convert.js";
import { resolveEntryId } from "./entry-id.js";
import { readTarget, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

export interface ContextReport {
  leafId: string | null;
  thinkingLevel: string;
  model: SessionContext["model"];
  /** agent-level messages, or LLM messages with `llm` */
  llm: boolean;
  /** messages in the whole context; more than `messages.length` when `last` cut it */
  messageCount: number;
  /** estimated tokens of the whole context */
  estimatedTokens: number;
  messages: (AgentMessage | LlmMessage)[];
}

export interface ContextReportOptions {
  /** the messages after convertToLlm, as the provider receives them */
  llm?: boolean;
  /** keep only the newest N messages (the counts and tokens still cover all) */
  last?: number;
}

/** The context at a leaf as `context` reports it. Pure. */
export function contextReport(context: SessionContext, leafId: string | null, options: ContextReportOptions = {}): ContextReport {
  const messages: (AgentMessage | LlmMessage)[] = options.llm ? convertToLlm(context.messages) : context.messages;
  const estimatedTokens = estimateMessagesTokens(messages as AgentMessage[]);
  const shown = options.last !== undefined ? messages.slice(Math.max(0, messages.length - options.last)) : messages;
  return {
    leafId,
    thinkingLevel: context.thinkingLevel,
    model: context.model,
    llm: options.llm === true,
    messageCount: messages.length,
    estimatedTokens,
    messages: shown,
  };
}

/**
 * The context report of `target` at its current leaf, or at entry `leaf` (a unique prefix will
 * do). A location is opened read-only.
 */
export async function sessionContextReport(
  target: SessionTarget,
  options: ContextReportOptions & { leaf?: string; onWarning?: WarningListener } = {},
): Promise<ContextReport> {
  const opened = await readTarget(target, options.onWarning);
  const { session } = opened;
  return withSession(opened, () => {
    const leafId = options.leaf !== undefined ? resolveEntryId(session, options.leaf) : session.getLeafId();
    return contextReport(session.buildSessionContext(leafId), leafId, options);
  });
}
