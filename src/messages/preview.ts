/**
 * Short, plain-text views of entries and messages for human output. Pure: data in, strings out.
 */
import type { AgentMessage, ImageContent, TextContent } from "../format/message-types.js";
import { modelFromChange } from "../format/context.js";
import type { SessionEntry } from "../format/entry-types.js";
import { joinedHead, joinTextBlocks } from "./text-blocks.js";
import { codePointWidth } from "../util/display-width.js";
import { formatCount } from "../util/count.js";

/** `/\s/` of one character, without the regex for ASCII (tree rows clip 50,000 texts). */
function isSpace(char: string): boolean {
  const code = char.charCodeAt(0);
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return /\s/.test(char);
}

/**
 * Collapses whitespace and cuts to `max` terminal columns (a CJK character or an emoji takes
 * two), marking the cut with an ellipsis. Reads only as far into the text as the preview shows,
 * so a preview of a megabyte of tool output costs what the preview costs.
 */
export function clip(text: string, max: number): string {
  return plainClip(text, max) ?? clipWalk(text, max);
}

/** Printable ASCII that starts with a character: a column each, nothing to collapse but double spaces. */
const PLAIN = /^[\x21-\x7e][\x20-\x7e]*$/;

/**
 * clip() of the usual preview, words of printable ASCII one space apart, without walking it a
 * character at a time (a tree of 50,000 rows spent 0.2 s there); undefined for any other text.
 */
function plainClip(text: string, max: number): string | undefined {
  if (max < 1) return undefined;
  const head = text.length > max ? text.slice(0, max + 1) : text;
  if (!PLAIN.test(head) || head.includes("  ")) return undefined;
  if (text.length <= max) return detached(text.endsWith(" ") ? text.slice(0, -1) : text);
  // a space after `max` columns: whether a word follows is further on than this looks
  if (head.charCodeAt(max) === 32) return undefined;
  return `${detached(head.slice(0, max - 1).trimEnd())}…`;
}

/**
 * A copy of ASCII `text` that holds nothing of what it was cut from: the engine keeps a slice as a
 * view of the whole string, so 50,000 previews sliced from message bodies kept every body alive.
 */
const detached = (text: string): string => Buffer.from(text, "latin1").toString("latin1");

/** clip() of any text, a character at a time. Exported for the test that holds plainClip to it. */
export function clipWalk(text: string, max: number): string {
  // pieces joined once at the end: a string grown a character at a time is a chain of as many
  // string nodes, which a tree of 50,000 previews keeps alive (about 3 KB a preview)
  const out: string[] = [];
  let length = 0;
  let width = 0;
  let space = false; // whitespace seen since the last character kept
  let cut = 0; // length of the longest prefix that leaves a column for "…" (it ends with a character, not a space)
  for (const char of text) {
    if (isSpace(char)) {
      space = length > 0;
      continue;
    }
    const adding = space ? ` ${char}` : char;
    const added = (space ? 1 : 0) + codePointWidth(char.codePointAt(0) as number);
    if (width + added > max) return max < 1 ? "" : `${out.join("").slice(0, cut)}…`;
    if (width + added <= max - 1) cut = length + adding.length;
    out.push(adding);
    length += adding.length;
    width += added;
    space = false;
  }
  return out.join("");
}

/**
 * Content as a person reads it: text blocks and a mark for each image, one per line; with
 * `limit`, only its first `limit` characters (or about: a separator may pass it).
 */
export function contentForDisplay(content: string | readonly (TextContent | ImageContent | { type: string })[], limit = Number.POSITIVE_INFINITY): string {
  if (typeof content === "string") return content.slice(0, limit);
  const parts: string[] = [];
  for (const block of content) {
    if (block.type === "text") parts.push((block as TextContent).text);
    else if (block.type === "image") parts.push(`[image ${(block as ImageContent).mimeType}]`);
  }
  return joinedHead(parts, "\n", limit);
}

/** A value as JSON, clipped to `max` characters; a long string is serialized only as far as is shown. */
function clippedJson(value: unknown, max: number): string {
  const json = JSON.stringify(typeof value === "string" && value.length > max ? value.slice(0, max) : value) ?? "undefined";
  return json.length > max ? `${json.slice(0, max - 1)}…` : json;
}

/** `name(key=value, …)` with JSON values, each value clipped so one call stays one line. */
export function formatToolCall(name: string, args: Record<string, unknown> | undefined, maxValue = 60): string {
  const parts = Object.entries(args ?? {}).map(([key, value]) => `${key}=${clippedJson(value, maxValue)}`);
  return `${name}(${parts.join(", ")})`;
}

/**
 * The most telling one-line text of a message: its words, else its tool calls. With `limit`, the
 * texts it is made of are read only as far as that many characters (what a preview can show).
 */
export function messagePreview(message: AgentMessage, limit = Number.POSITIVE_INFINITY): string {
  switch (message.role) {
    case "user":
    case "custom":
    case "hookMessage":
      return contentForDisplay(message.content, limit);
    case "assistant": {
      const text = joinTextBlocks(message.content, " ", limit).trim();
      const calls = message.content.flatMap((b) => (b.type === "toolCall" ? [formatToolCall(b.name, b.arguments, 40)] : []));
      if (text && calls.length > 0) return `${text} → ${calls.join(", ")}`;
      if (text) return text;
      if (calls.length > 0) return `→ ${calls.join(", ")}`;
      const thinking = message.content.find((b) => b.type === "thinking");
      if (thinking) return `(thinking) ${thinking.thinking.slice(0, limit)}`;
      return message.errorMessage ? `(${message.stopReason}) ${message.errorMessage.slice(0, limit)}` : `(${message.stopReason})`;
    }
    case "toolResult":
      return `${message.toolName}${message.isError ? " (error)" : ""}: ${contentForDisplay(message.content, limit)}`;
    case "bashExecution":
      return `$ ${message.command.slice(0, limit)}${message.exitCode ? ` (exit ${message.exitCode})` : ""}`;
    case "pythonExecution":
      return `>>> ${message.code.slice(0, limit)}`;
    case "branchSummary":
    case "compactionSummary":
      return message.summary.slice(0, limit);
    case "fileMention":
      return message.files.map((f) => `@${f.path}`).join(" ");
    default:
      return "";
  }
}

export interface EntryPreview {
  /** what kind of entry this is: a message role, or the entry type */
  kind: string;
  text: string;
  /** compactions and branch summaries: shown so they stand out */
  summary?: "compaction" | "branch";
}

/**
 * How far into its texts a preview of `columns` columns reads: past what it shows, since runs of
 * whitespace collapse, yet bounded, so a row never costs its whole tool output. A text that opens
 * with more whitespace, or zero-width and control characters, than that previews as empty.
 */
export const previewReach = (columns: number): number => 400 + 4 * columns;

/** The preview of an entry; with `limit`, its texts are read only as far as that many characters (messagePreview). */
export function entryPreview(entry: SessionEntry, limit = Number.POSITIVE_INFINITY): EntryPreview {
  switch (entry.type) {
    case "message":
      return { kind: entry.message.role, text: messagePreview(entry.message, limit) };
    case "compaction":
      return {
        kind: "compaction",
        summary: "compaction",
        text: `context of ${formatCount(entry.tokensBefore)} tokens compacted, keeps from ${entry.firstKeptEntryId}: ${entry.summary.slice(0, limit)}`,
      };
    case "branch_summary":
      return { kind: "branch_summary", summary: "branch", text: `from ${entry.fromId}: ${entry.summary.slice(0, limit)}` };
    case "model_change": {
      const model = modelFromChange(entry);
      const name = model ? `${model.provider}/${model.modelId}` : (entry.model ?? "?");
      return { kind: "model_change", text: entry.role && entry.role !== "default" ? `${entry.role}: ${name}` : name };
    }
    case "thinking_level_change":
      return { kind: "thinking", text: entry.thinkingLevel ?? "off" };
    case "label":
      return { kind: "label", text: entry.label ? `${entry.targetId} = "${entry.label}"` : `${entry.targetId} cleared` };
    case "session_info":
      return { kind: "name", text: entry.name ?? "" };
    case "custom":
      return { kind: "custom", text: entry.customType };
    case "custom_message":
      return { kind: entry.customType, text: contentForDisplay(entry.content, limit) };
    default:
      return { kind: (entry as { type: string }).type, text: "" };
  }
}
