/**
 * Conversation to plain text for a summarizer: one `[Role]: text` part per message, parts
 * separated by blank lines, so the model reads a transcript instead of continuing a chat.
 * Tool results are bounded (head and tail kept, the cut marked): a summarizer needs to know
 * what a command printed, not every line of a 2 MB log. Each names its tool and says when the
 * tool flagged it as failed (`[Tool result (bash, error)]: …`); one with no text says so, since a
 * run that printed nothing and passed is what shows an error fixed.
 */
import type { LlmMessage } from "../format/message-types.js";
import { joinTextBlocks } from "./text-blocks.js";

export interface SerializeOptions {
  /** longest tool result kept whole, in characters; longer ones keep head and tail (default 4000) */
  maxToolResultChars?: number;
}

export const DEFAULT_MAX_TOOL_RESULT_CHARS = 4000;

/** Keeps the first two thirds and the last third of `max` characters, and says how much was cut. */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.ceil((max * 2) / 3);
  const tail = max - head;
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n\n[... ${omitted} characters omitted ...]\n\n${tail > 0 ? text.slice(-tail) : ""}`;
}

/** What an empty tool result reads as. */
export const NO_OUTPUT = "(no output)";

/** `[Tool result (name)]: `, with `, error` when the tool flagged the result as failed. */
export function toolResultMarker(toolName: string | undefined, isError: boolean | undefined): string {
  const name = toolName?.replace(/[()[\],\s]/g, "");
  if (!name) return isError ? "[Tool result (error)]: " : "[Tool result]: ";
  return `[Tool result (${name}${isError ? ", error" : ""})]: `;
}

function formatToolCall(name: string, args: Record<string, unknown> | undefined): string {
  const rendered = Object.entries(args ?? {})
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join(", ");
  return `${name}(${rendered})`;
}

export function serializeConversation(messages: readonly LlmMessage[], options: SerializeOptions = {}): string {
  const maxToolResult = options.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS;
  const parts: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user": {
        const text = joinTextBlocks(message.content, "");
        if (text) parts.push(`[User]: ${text}`);
        break;
      }
      case "assistant": {
        const thinking: string[] = [];
        const text: string[] = [];
        const calls: string[] = [];
        for (const block of message.content) {
          if (block.type === "thinking") thinking.push(block.thinking);
          else if (block.type === "text") text.push(block.text);
          else if (block.type === "toolCall") calls.push(formatToolCall(block.name, block.arguments));
        }
        if (thinking.length > 0) parts.push(`[Assistant thinking]: ${thinking.join("\n")}`);
        if (text.length > 0) parts.push(`[Assistant]: ${text.join("\n")}`);
        if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
        break;
      }
      case "toolResult": {
        const text = joinTextBlocks(message.content, "");
        parts.push(`${toolResultMarker(message.toolName, message.isError)}${text ? truncateMiddle(text, maxToolResult) : NO_OUTPUT}`);
        break;
      }
    }
  }
  return parts.join("\n\n");
}
