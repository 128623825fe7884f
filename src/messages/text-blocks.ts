/**
 * The text of a message's content: its text blocks joined, a string content as it is; images,
 * thinking and tool calls are left out. The one reader of message text for serialization,
 * pruned results, the editor text after a checkout, previews, the chat transcript and summarizer
 * responses: only the joiner differs between them, and each caller names its own.
 */
import type { TextContent } from "../format/message-types.js";

export function joinTextBlocks(content: string | readonly { type: string }[], separator: string): string {
  if (typeof content === "string") return content;
  return content
    .filter((b): b is TextContent => b.type === "text")
    .map((b) => b.text)
    .join(separator);
}
