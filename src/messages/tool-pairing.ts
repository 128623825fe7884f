/**
 * Tool results a provider would refuse, left out of a request. Every provider wants a tool
 * result right after the assistant message that called the tool, once per call; a result with
 * no such call (a session written by another tool, a hand-edited file, a call in an answer that
 * failed or was stopped, which pi-ai drops before sending) makes the request fail with a 400, and
 * the session is stuck there for good. Pure: the session keeps every entry; only the request
 * leaves the stray results out. The opposite case, a call with no result, pi-ai already answers
 * with a synthetic "no result" for every provider.
 */
import type { LlmMessage } from "../format/message-types.js";

/** `messages` without the tool results that answer no open call of the assistant message before them. */
export function withoutStrayToolResults(messages: readonly LlmMessage[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  // calls of the latest assistant message still waiting for their result; a user message closes them
  let open = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant") {
      open = new Set();
      // pi-ai drops failed and stopped answers from requests, so their calls answer nothing
      if (message.stopReason !== "error" && message.stopReason !== "aborted") {
        for (const block of message.content) if (block.type === "toolCall") open.add(block.id);
      }
    } else if (message.role === "user") {
      open = new Set();
    } else if (!open.delete(message.toolCallId)) {
      continue; // no open call with this id: a stray result, or a second one for the same call
    }
    out.push(message);
  }
  return out;
}
