/**
 * The text of a message's content: its text blocks joined, a string content as it is; images,
 * thinking and tool calls are left out. The one reader of message text for serialization,
 * pruned results, the editor text after a checkout, previews, the chat transcript and summarizer
 * responses: only the joiner differs between them, and each caller names its own. A preview
 * names a limit too, and reads no further.
 */
import type { TextContent } from "../format/message-types.js";

/**
 * `parts` joined by `separator`, read only up to `limit` characters (or about: a separator may
 * pass it): a preview of a megabyte of tool output neither copies nor joins the megabyte.
 */
export function joinedHead(parts: readonly string[], separator: string, limit = Number.POSITIVE_INFINITY): string {
  if (limit === Number.POSITIVE_INFINITY) return parts.join(separator);
  let out = "";
  for (const part of parts) {
    if (out.length >= limit) break;
    out += (out === "" ? "" : separator) + part.slice(0, limit - out.length);
  }
  return out;
}

export function joinTextBlocks(content: string | readonly { type: string }[], separator: string, limit = Number.POSITIVE_INFINITY): string {
  if (typeof content === "string") return content.slice(0, limit);
  const texts = content.filter((b): b is TextContent => b.type === "text").map((b) => b.text);
  return joinedHead(texts, separator, limit);
}
