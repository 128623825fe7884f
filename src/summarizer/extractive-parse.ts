/**
 * Reading a summarization prompt back into data, for the extractive summarizer: the transcript
 * inside `<conversation>` (as written by `serializeConversation`), the `<previous-summary>`, the
 * `<additional-context>` lines and an "Additional focus:" instruction. Pure functions.
 */

import { type PartRole, readTranscriptForm, type TranscriptPart } from "./transcript-forms.js";

export type { PartRole, TranscriptPart };

export interface ToolCallText {
  name: string;
  args: Record<string, unknown>;
}

export interface ParsedPrompt {
  /** undefined when the prompt has no `<conversation>` block */
  conversation?: TranscriptPart[];
  previousSummary?: string;
  additionalContext: string[];
  /** the text after "Additional focus:", if the user gave instructions */
  focus?: string;
  /** every other `<tag>…</tag>` block, in order (chunk summaries of a merge, for instance) */
  otherBlocks: { tag: string; content: string }[];
}

const MARKERS: [string, PartRole][] = [
  ["[User]: ", "user"],
  ["[Assistant]: ", "assistant"],
  ["[Assistant thinking]: ", "thinking"],
  ["[Assistant tool calls]: ", "toolCalls"],
  ["[Tool result]: ", "toolResult"],
];

/**
 * Parts are separated by blank lines, but their text may hold blank lines too; a new part starts
 * only where a blank line is followed by a role marker.
 */
const PART_BOUNDARY = /\n\n(?=\[(?:User|Assistant|Assistant thinking|Assistant tool calls|Tool result(?: \([^()\n]*\))?)\]: )/;
/** A tool result's marker with its tool and error flag: `[Tool result (bash, error)]: `. */
const TOOL_RESULT = /^\[Tool result \(([^()\n]*)\)\]: /;

function toolResultPart(chunk: string): TranscriptPart | undefined {
  const m = TOOL_RESULT.exec(chunk);
  if (!m) return undefined;
  const words = m[1].split(",").map((w) => w.trim());
  const isError = words.includes("error");
  const name = words.find((w) => w !== "error" && w !== "");
  const part: TranscriptPart = { role: "toolResult", text: chunk.slice(m[0].length), isError };
  if (name) part.toolName = name;
  return part;
}

export function parseTranscript(text: string): TranscriptPart[] {
  // a transcript in a model's own markup (oh-my-pi writes ten), read by its form
  return readTranscriptForm(text) ?? parseLayout(text);
}

/** A transcript in pi's and bonsai's layout (`[User]: …`, as serializeConversation writes it) into its parts. */
export function parseLayout(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const chunk of text.split(PART_BOUNDARY)) {
    const marker = MARKERS.find(([prefix]) => chunk.startsWith(prefix));
    const result = marker ? undefined : toolResultPart(chunk);
    if (marker) parts.push({ role: marker[1], text: chunk.slice(marker[0].length) });
    else if (result) parts.push(result);
    else if (parts.length > 0) parts[parts.length - 1].text += `\n\n${chunk}`;
    else if (chunk.trim()) parts.push({ role: "user", text: chunk });
  }
  return parts;
}

/** Where a JSON value that starts at `start` ends (exclusive), scanning strings and nesting. */
function jsonValueEnd(text: string, start: number): number {
  const first = text[start];
  if (first === '"') {
    for (let i = start + 1; i < text.length; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === '"') return i + 1;
    }
    return text.length;
  }
  if (first === "{" || first === "[") {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (c === '"') i = jsonValueEnd(text, i) - 1;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return text.length;
  }
  let i = start;
  while (i < text.length && text[i] !== "," && text[i] !== ")") i++;
  return i;
}

/** `name(k=<json>, …); name2(…)` back into calls. Unparsable values are kept as raw text. */
export function parseToolCalls(text: string): ToolCallText[] {
  const calls: ToolCallText[] = [];
  const head = /([^\s();]+)\(/y;
  let i = 0;
  while (i < text.length) {
    head.lastIndex = i;
    const match = head.exec(text);
    if (!match) break;
    const call: ToolCallText = { name: match[1], args: {} };
    i = head.lastIndex;
    while (i < text.length && text[i] !== ")") {
      const eq = text.indexOf("=", i);
      if (eq < 0) {
        i = text.length;
        break;
      }
      const key = text.slice(i, eq);
      const end = jsonValueEnd(text, eq + 1);
      const raw = text.slice(eq + 1, end);
      try {
        call.args[key] = JSON.parse(raw);
      } catch {
        call.args[key] = raw;
      }
      i = end;
      if (text.startsWith(", ", i)) i += 2;
    }
    calls.push(call);
    i++; // the closing parenthesis
    if (text.startsWith("; ", i)) i += 2;
  }
  return calls;
}

/** The content of the first `<tag>\n…\n</tag>` block at or after `from`. */
function block(prompt: string, tag: string, from = 0): { content: string; end: number } | undefined {
  const open = prompt.indexOf(`<${tag}>\n`, from);
  if (open < 0) return undefined;
  const start = open + tag.length + 3;
  const close = prompt.indexOf(`\n</${tag}>`, start);
  if (close < 0) return undefined;
  return { content: prompt.slice(start, close), end: close + tag.length + 4 };
}

/**
 * The conversation may itself quote `</conversation>` (a tool result reading a prompt file), so
 * its block ends at the last closing tag before the blocks that follow it.
 */
function conversationBlock(prompt: string): { content: string; start: number; end: number } | undefined {
  const open = prompt.indexOf("<conversation>\n");
  if (open < 0) return undefined;
  const start = open + "<conversation>\n".length;
  const after = prompt.indexOf("\n<previous-summary>\n", start);
  const limit = after >= 0 ? after : prompt.length;
  const close = prompt.lastIndexOf("\n</conversation>", limit);
  if (close < start - 1) return undefined;
  return { content: prompt.slice(start, Math.max(start, close)), start: open, end: close + "\n</conversation>".length };
}

export function parsePrompt(prompt: string): ParsedPrompt {
  const parsed: ParsedPrompt = { additionalContext: [], otherBlocks: [] };
  let rest = prompt;
  const conversation = conversationBlock(prompt);
  if (conversation) {
    parsed.conversation = parseTranscript(conversation.content);
    rest = prompt.slice(0, conversation.start) + prompt.slice(conversation.end);
  }
  const previous = block(rest, "previous-summary");
  if (previous) parsed.previousSummary = previous.content;
  const extra = block(rest, "additional-context");
  if (extra) {
    parsed.additionalContext = extra.content
      .split("\n")
      .map((line) => line.replace(/^\s*-\s*/, "").trim())
      .filter(Boolean);
  }
  const known = new Set(["previous-summary", "additional-context"]);
  for (const match of rest.matchAll(/<([a-z][a-z0-9-]*)(?:\s[^>\n]*)?>\n([\s\S]*?)\n<\/\1>/g)) {
    if (!known.has(match[1])) parsed.otherBlocks.push({ tag: match[1], content: match[2] });
  }
  const focus = /(?:^|\n)Additional focus:\s*([\s\S]+?)\s*$/.exec(rest);
  if (focus) parsed.focus = focus[1];
  return parsed;
}
