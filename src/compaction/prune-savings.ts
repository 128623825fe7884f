/**
 * The free savings tried before any summary (docs/ARCHITECTURE.md, pruning): tool output that
 * no longer says anything true or that is too large to be worth its room.
 * - A read is superseded when the same file (same range) is read again later, or written or
 *   edited after it: the older result becomes a notice pointing at the newer entry.
 * - A result over `maxResultTokens` keeps its head and tail, with a notice of what was cut.
 * Pure plans over entries; ops/prune.ts archives the originals before anything is rewritten.
 */
import type { SessionEntry } from "../format/entry-types.js";
import type { TextContent, ToolResultMessage } from "../format/message-types.js";
import type { PruneCandidate } from "./prune.js";
import { estimateTokens, messageTextTokens } from "./tokens.js";

export type SavingKind = "superseded" | "oversized";

/** A pruning whose replacement is given, not the standard notice. */
export interface SavingCandidate extends PruneCandidate {
  kind: SavingKind;
  /** what the result says instead of its output */
  content: TextContent[];
}

export interface SavingsConfig {
  /** tools that read a file (the path argument names it) */
  readTools: readonly string[];
  /** tools that change a file */
  writeTools: readonly string[];
  /** 0 turns the head-and-tail cut off */
  maxResultTokens: number;
  supersededReads: boolean;
  /** where the cut middle of an oversized result can be found, said in its notice */
  wholeOutputAt: string;
}

export const DEFAULT_SAVINGS_CONFIG: Readonly<SavingsConfig> = Object.freeze({
  readTools: Object.freeze(["read", "read_file"]),
  writeTools: Object.freeze(["write", "edit", "write_file", "edit_file", "multi_edit"]),
  maxResultTokens: 8000,
  supersededReads: true,
  wholeOutputAt: "the session's prune archive",
});

type ToolResultEntry = SessionEntry & { type: "message"; message: ToolResultMessage };

const isToolResultEntry = (entry: SessionEntry): entry is ToolResultEntry =>
  entry.type === "message" && entry.message.role === "toolResult";

/** The file a tool call names, normalized so `./a.ts` and `a.ts` match; undefined without one. */
function pathArgument(args: Record<string, unknown>): string | undefined {
  const value = args.path ?? args.file_path ?? args.filePath;
  if (typeof value !== "string" || value.trim() === "") return undefined;
  return value.trim().replace(/^\.\//, "");
}

/** The range a read covered: reads of different ranges do not supersede each other. */
function rangeOf(args: Record<string, unknown>): string {
  return `${String(args.offset ?? "")}:${String(args.limit ?? "")}`;
}

export function supersededNotice(path: string, newerEntryId: string, how: "read" | "changed", toolName: string): string {
  return how === "read"
    ? `[Superseded: ${path} was read again later (entry ${newerEntryId}); that result is current]`
    : `[Superseded: ${path} was changed later by ${toolName} (entry ${newerEntryId}); read it again for its current content]`;
}

const candidate = (entry: ToolResultEntry, index: number, kind: SavingKind, text: string): SavingCandidate | undefined => {
  const tokens = estimateTokens(entry.message);
  const savings = tokens - messageTextTokens(text);
  if (savings <= 0) return undefined;
  return { entryId: entry.id, index, toolName: entry.message.toolName, tokens, savings, kind, content: [{ type: "text", text }] };
};

/** Older read results made stale by a later read of the same range or a later change of the file. */
export function planSupersededReads(entries: readonly SessionEntry[], config: Partial<SavingsConfig> = {}): SavingCandidate[] {
  const { readTools, writeTools } = { ...DEFAULT_SAVINGS_CONFIG, ...config };
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  /** path -> the read results of it not yet superseded: range and entry position */
  const openReads = new Map<string, { range: string; index: number }[]>();
  const superseded = new Map<number, SavingCandidate>();
  entries.forEach((entry, index) => {
    if (entry.type !== "message") return;
    const message = entry.message;
    if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type === "toolCall") calls.set(block.id, { name: block.name, args: block.arguments ?? {} });
      }
      return;
    }
    if (!isToolResultEntry(entry) || entry.message.isError) return;
    const call = calls.get(entry.message.toolCallId);
    const path = call && pathArgument(call.args);
    if (!call || !path) return;
    const isRead = readTools.includes(call.name);
    if (!isRead && !writeTools.includes(call.name)) return;
    const range = rangeOf(call.args);
    const reads = openReads.get(path) ?? [];
    const stillOpen: { range: string; index: number }[] = [];
    for (const read of reads) {
      if (isRead && read.range !== range) {
        stillOpen.push(read);
        continue;
      }
      const older = entries[read.index] as ToolResultEntry;
      const made = older.message.prunedAt === undefined && candidate(older, read.index, "superseded", supersededNotice(path, entry.id, isRead ? "read" : "changed", call.name));
      if (made) superseded.set(read.index, made);
    }
    if (isRead) stillOpen.push({ range, index });
    openReads.set(path, stillOpen);
  });
  return [...superseded.values()].sort((a, b) => b.index - a.index);
}

export function oversizedNotice(cutTokens: number, tokens: number, wholeOutputAt = DEFAULT_SAVINGS_CONFIG.wholeOutputAt): string {
  return `[... ${cutTokens} of ${tokens} tokens cut from the middle of this output; the whole output is in ${wholeOutputAt} ...]`;
}

/** The head and tail of a long text with the notice between them, about `maxTokens` in all. */
export function headAndTail(text: string, tokens: number, maxTokens: number, wholeOutputAt?: string): string {
  const keepChars = Math.max(0, maxTokens * 4 - 200);
  const head = text.slice(0, Math.ceil(keepChars * 0.6));
  const tail = text.slice(text.length - Math.floor(keepChars * 0.4));
  const cut = Math.max(0, tokens - messageTextTokens(head) - messageTextTokens(tail));
  return `${head}\n\n${oversizedNotice(cut, tokens, wholeOutputAt)}\n\n${tail}`;
}

/** Results over `maxResultTokens`, cut to their head and tail (images dropped). */
export function planOversizedResults(entries: readonly SessionEntry[], maxResultTokens: number, wholeOutputAt?: string): SavingCandidate[] {
  if (!(maxResultTokens > 0)) return [];
  const found: SavingCandidate[] = [];
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (!isToolResultEntry(entry) || entry.message.prunedAt !== undefined) continue;
    const tokens = estimateTokens(entry.message);
    if (tokens <= maxResultTokens) continue;
    const text = entry.message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
    const made = candidate(entry, index, "oversized", headAndTail(text, tokens, maxResultTokens, wholeOutputAt));
    if (made) found.push(made);
  }
  return found;
}

/** Both kinds; a result both superseded and oversized gets the (smaller) superseded notice. Newest first. */
export function planSavings(entries: readonly SessionEntry[], config: Partial<SavingsConfig> = {}): SavingCandidate[] {
  const settings = { ...DEFAULT_SAVINGS_CONFIG, ...config };
  const chosen = new Map<number, SavingCandidate>();
  if (settings.supersededReads) for (const c of planSupersededReads(entries, settings)) chosen.set(c.index, c);
  for (const c of planOversizedResults(entries, settings.maxResultTokens, settings.wholeOutputAt)) if (!chosen.has(c.index)) chosen.set(c.index, c);
  return [...chosen.values()].sort((a, b) => b.index - a.index);
}
