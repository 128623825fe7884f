/**
 * How messages look in `bonsai chat`: each message becomes a few display blocks (thinking
 * collapsed to one line, text, a tool call on one line, a one-line result, a summary box), and an
 * answer still streaming becomes the tail of its thinking, then its text. Pure; the app turns
 * blocks into components and colors them by style.
 */
import { clip, contentForDisplay, formatToolCall } from "../messages/preview.js";
import { joinTextBlocks } from "../messages/text-blocks.js";
import type { AgentMessage, AssistantMessage, ThinkingContent } from "../format/message-types.js";
import { BRANCH_SUMMARY_PREAMBLE } from "../prompts/branch.js";
import { formatTokens } from "./footer.js";

export type BlockStyle =
  | "user"
  | "synthetic"
  | "assistant"
  | "thinking"
  | "toolCall"
  | "toolResult"
  | "toolError"
  | "summary"
  | "notice"
  | "success"
  | "warning"
  | "error";

export interface DisplayBlock {
  style: BlockStyle;
  text: string;
}

/** Lines of a summary shown under its heading; the rest is in the session file. */
export const SUMMARY_PREVIEW_LINES = 6;

/** Lines of thinking shown while the model thinks: enough to see it work, too few to flood the screen. */
export const THINKING_LIVE_LINES = 6;

/** How much of the thinking's start the collapsed line quotes. */
const THINKING_QUOTE_CHARS = 60;

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** "1 line", "3 lines". */
const lineCount = (n: number): string => `${n} ${n === 1 ? "line" : "lines"}`;

/** `read src/a.ts`, `write notes.txt (3 lines)`, `$ npm test`: one short line per call. */
export function toolCallLine(name: string, args: Record<string, unknown> | undefined): string {
  const path = str(args?.path);
  switch (name) {
    case "read": {
      const range = args?.offset ? ` from line ${args.offset}` : "";
      return path ? `read ${path}${range}` : formatToolCall(name, args);
    }
    case "write": {
      const content = str(args?.content);
      const lines = content === undefined ? "" : ` (${lineCount(content.split("\n").length)})`;
      return path ? `write ${path}${lines}` : formatToolCall(name, args);
    }
    case "edit":
      return path ? `edit ${path}` : formatToolCall(name, args);
    case "bash": {
      const command = str(args?.command);
      return command ? `$ ${clip(command, 100)}` : formatToolCall(name, args);
    }
    default:
      return formatToolCall(name, args);
  }
}

/** The first line of a tool's output, with how many lines followed it. */
export function toolResultLine(output: string, isError: boolean): string {
  const lines = output.trimEnd().split("\n");
  const first = clip(lines.find((l) => l.trim() !== "") ?? "", 100) || "(no output)";
  const more = lines.length > 1 ? ` (+${lineCount(lines.length - 1)})` : "";
  return `${isError ? "✗" : "✓"} ${first}${more}`;
}

function assistantBlocks(message: AssistantMessage, withText = true): DisplayBlock[] {
  const blocks: DisplayBlock[] = [];
  if (withText) {
    const thinking = thinkingLine(thinkingText(message));
    if (thinking) blocks.push({ style: "thinking", text: thinking });
    const text = assistantText(message);
    if (text) blocks.push({ style: "assistant", text });
  }
  for (const block of message.content) {
    if (block.type === "toolCall") blocks.push({ style: "toolCall", text: `→ ${toolCallLine(block.name, block.arguments)}` });
  }
  if (message.stopReason === "error") blocks.push({ style: "error", text: `Error: ${message.errorMessage ?? "the model call failed"}` });
  if (message.stopReason === "aborted") blocks.push({ style: "warning", text: "Stopped." });
  if (message.stopReason === "length") blocks.push({ style: "warning", text: "(the answer was cut at the output limit)" });
  return blocks;
}

/** The text blocks of an answer, joined; thinking is left out. */
export function assistantText(message: Pick<AssistantMessage, "content">): string {
  return joinTextBlocks(message.content, "\n").trim();
}

/**
 * What the model thought, its thinking blocks joined. Redacted thinking (an opaque payload the
 * provider keeps to itself, with placeholder text) and empty blocks count as none.
 */
export function thinkingText(message: Pick<AssistantMessage, "content">): string {
  return message.content
    .filter((b): b is ThinkingContent => b.type === "thinking" && !(b as { redacted?: boolean }).redacted && b.thinking.trim() !== "")
    .map((b) => b.thinking.trim())
    .join("\n");
}

const nonBlankLines = (text: string): string[] => text.split("\n").filter((line) => line.trim() !== "");

/**
 * Thinking once the answer is there: `thinking: <first words>… (N lines)`, so it stays visible
 * that (and how long) the model thought without its chain of thought taking the screen.
 */
export function thinkingLine(thinking: string): string | undefined {
  const lines = nonBlankLines(thinking);
  if (lines.length === 0) return undefined;
  const words = lines[0].trim().split(/\s+/);
  let quote = "";
  for (const word of words) {
    if (quote && quote.length + 1 + word.length > THINKING_QUOTE_CHARS) break;
    quote = quote ? `${quote} ${word}` : word;
  }
  if (quote.length > THINKING_QUOTE_CHARS) quote = quote.slice(0, THINKING_QUOTE_CHARS);
  const more = quote.length < lines[0].trim().replace(/\s+/g, " ").length || lines.length > 1 ? "…" : "";
  return `thinking: ${quote}${more} (${lineCount(lines.length)})`;
}

/** The last lines of thinking in progress (the app also cuts them to as many screen rows). */
export function thinkingTail(thinking: string, maxLines = THINKING_LIVE_LINES): string {
  return nonBlankLines(thinking).slice(-maxLines).join("\n");
}

/**
 * An answer while it streams: while the model is still thinking (nothing after its last thinking
 * block yet), the tail of that thinking; once text or a tool call follows, or the message has
 * `ended`, the collapsed line. `text` is the answer's text so far.
 */
export function streamingView(
  partial: Pick<AssistantMessage, "content">,
  ended = false,
): { thinking: DisplayBlock | undefined; text: string; thinkingNow: boolean } {
  const thinking = thinkingText(partial);
  const text = assistantText(partial);
  if (!thinking) return { thinking: undefined, text, thinkingNow: false };
  if (!ended && partial.content.at(-1)?.type === "thinking") {
    return { thinking: { style: "thinking", text: thinkingTail(thinking) }, text, thinkingNow: true };
  }
  return { thinking: { style: "thinking", text: thinkingLine(thinking)! }, text, thinkingNow: false };
}

/** A stored branch summary without the preamble that tells the model it describes a detour. */
export function withoutBranchPreamble(summary: string): string {
  const text = summary.trimStart();
  return text.startsWith(BRANCH_SUMMARY_PREAMBLE) ? text.slice(BRANCH_SUMMARY_PREAMBLE.length).trimStart() : summary;
}

/** A heading and the first non-blank lines of a summary. */
export function summaryBlock(heading: string, summary: string): DisplayBlock {
  const lines = nonBlankLines(summary.trim());
  const shown = lines.slice(0, SUMMARY_PREVIEW_LINES);
  const rest = lines.length - shown.length;
  const tail = rest > 0 ? [`… ${rest} more lines (bonsai context shows all)`] : [];
  return { style: "summary", text: [heading, ...shown.map((l) => `  ${l}`), ...tail.map((l) => `  ${l}`)].join("\n") };
}

export function compactionHeading(tokensBefore: number): string {
  return `[compaction] ${formatTokens(tokensBefore)} tokens of history summarized:`;
}

export const BRANCH_SUMMARY_HEADING = "[branch summary] what happened on the branch left behind:";

/** Blocks for one message of the context, as shown when a session is (re)drawn. */
export function messageBlocks(message: AgentMessage): DisplayBlock[] {
  switch (message.role) {
    case "user": {
      const text = contentForDisplay(message.content);
      return [{ style: message.synthetic ? "synthetic" : "user", text: message.synthetic ? `(auto) ${text}` : text }];
    }
    case "assistant":
      return assistantBlocks(message);
    case "toolResult":
      return [{ style: message.isError ? "toolError" : "toolResult", text: `  ${toolResultLine(contentForDisplay(message.content), message.isError)}` }];
    case "compactionSummary":
      return [summaryBlock(compactionHeading(message.tokensBefore), message.summary)];
    case "branchSummary":
      return [summaryBlock(BRANCH_SUMMARY_HEADING, withoutBranchPreamble(message.summary))];
    case "bashExecution":
      return [
        { style: "toolCall", text: `$ ${clip(message.command, 100)}` },
        { style: message.exitCode ? "toolError" : "toolResult", text: `  ${toolResultLine(message.output, Boolean(message.exitCode))}` },
      ];
    case "custom":
    case "hookMessage":
      return message.display ? [{ style: "notice", text: `[${message.customType}] ${clip(contentForDisplay(message.content), 200)}` }] : [];
    case "fileMention":
      return [{ style: "notice", text: message.files.map((f) => `@${f.path}`).join(" ") }];
    default:
      return [];
  }
}

/** The tool-call and status lines that follow a streamed answer (its thinking and text are already on screen). */
export function assistantTrailer(message: AssistantMessage): DisplayBlock[] {
  return assistantBlocks(message, false);
}
