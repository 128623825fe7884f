/**
 * What the oracle suite compares of a context: the leaf, the thinking level, the model and every
 * message as JSON holds it (fields set to undefined are absent). Two things are left out, each
 * because the agents disagree with each other on them and neither reaches the model as it is:
 * the extra fields omp puts on summary messages for its own display (method, tokensAfter,
 * shortSummary, blocks, warning) and the form of a summary's timestamp (ms or ISO).
 */
import type { AgentContext } from "./agents.js";

const SUMMARY_DISPLAY_FIELDS = ["shortSummary", "method", "tokensAfter", "blocks", "warning", "providerPayload"];

function comparableMessage(message: unknown): unknown {
  const m = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
  if (m.role === "compactionSummary" || m.role === "branchSummary") {
    for (const field of SUMMARY_DISPLAY_FIELDS) delete m[field];
    if (typeof m.timestamp === "string") m.timestamp = Date.parse(m.timestamp);
  }
  return m;
}

export function comparable(context: AgentContext): unknown {
  return {
    leafId: context.leafId,
    thinkingLevel: context.thinkingLevel,
    model: context.model,
    messages: context.messages.map(comparableMessage),
  };
}
