/**
 * What the session page needs of an entry whose body stays in the file until asked for (a message
 * or a custom message) besides that body: its row (kind, preview, tokens, flags, model), what the
 * timeline reads (tokens, the context the provider reported) and the sizes bounding an export
 * starts from (body-measure.ts). Such bodies are most of a session's bytes; a digest is worked out
 * from the body once and kept across reads (view/source.ts, storage/derived-cache.ts), so
 * exporting a large session again, or drawing its tree, does not parse every body again. Pure.
 */
import { calculateContextTokens, estimateTokens, usageOf } from "../compaction/tokens.js";
import { messageFromEntry } from "../format/context.js";
import type { SessionEntry } from "../format/entry-types.js";
import { clip, entryPreview, previewReach } from "../messages/preview.js";
import { type Block, entryBlocks } from "./blocks.js";
import { type BodyLengths, bodyLengths } from "./body-measure.js";

/** Row flags, for the page's filters and marks. */
export interface NodeFlags {
  user?: true;
  tool?: true;
  error?: true;
  pruned?: true;
  thinking?: true;
}

/** An entry whose body the index leaves in the file (storage/session-reader.ts): what a digest stands for. */
export type DigestedEntry = SessionEntry & { type: "message" | "custom_message" };

export const isDigested = (entry: SessionEntry): entry is DigestedEntry => entry.type === "message" || entry.type === "custom_message";

/** An entry whose body was not read (a stand-in: type, id and parent id): its digest stands for it. */
export const isStandIn = (entry: SessionEntry): boolean =>
  (entry.type === "message" && (entry as { message?: unknown }).message === undefined) || (entry.type === "custom_message" && (entry as { content?: unknown }).content === undefined);

export interface EntryDigest {
  /** absent when the entry has none (a line may leave it out) */
  timestamp?: string;
  /** the message's role, or the custom message's type (entryPreview's kind) */
  kind: string;
  /** clipped to DIGEST_COLUMNS; narrower views clip it again (clip of a clip is the same clip) */
  preview: string;
  /** estimated tokens of the message */
  tokens: number;
  /** a custom message that the context leaves out (messageFromEntry gives none) */
  noMessage?: true;
  flags: NodeFlags;
  /** an assistant message: the model that wrote it, and its provider */
  model?: string;
  provider?: string;
  /** the context tokens the provider reported for this turn, when it reported any */
  usage?: number;
  /** the sizes of its blocks (bodyLengths); absent for a pruned result, whose blocks hold an archived original */
  lengths?: BodyLengths;
}

/** Columns a digest's preview keeps: the page's rows, the widest view. */
export const DIGEST_COLUMNS = 100;

/** Bump when what a digest holds, or how it is worked out, changes: it names the digests a cache keeps. */
export const DIGEST_FORMAT = 1;

export function flagsOf(entry: SessionEntry): NodeFlags {
  const flags: NodeFlags = {};
  if (entry.type !== "message") return flags;
  const m = entry.message;
  if (m.role === "user" && !m.synthetic) flags.user = true;
  if (m.role === "toolResult" || m.role === "bashExecution" || m.role === "pythonExecution") flags.tool = true;
  if (m.role === "toolResult" && m.isError) flags.error = true;
  if (m.role === "toolResult" && m.prunedAt !== undefined) flags.pruned = true;
  if (m.role === "bashExecution" && m.exitCode !== undefined && m.exitCode !== null && m.exitCode !== 0) flags.error = true;
  if (m.role === "assistant") {
    if (m.stopReason === "error" || m.errorMessage) flags.error = true;
    if (m.content.some((c) => c.type === "thinking")) flags.thinking = true;
  }
  return flags;
}

/** What a row of the page shows of any entry, its body read or (digestRow) not. */
export interface EntryRow {
  kind: string;
  /** clipped to DIGEST_COLUMNS */
  preview: string;
  /** the entry's: typed as always there, though a line may leave it out */
  timestamp: string;
  tokens: number;
  flags: NodeFlags;
}

export function entryRow(entry: SessionEntry): EntryRow {
  const preview = entryPreview(entry, previewReach(DIGEST_COLUMNS));
  const message = messageFromEntry(entry);
  return { kind: preview.kind, preview: clip(preview.text, DIGEST_COLUMNS), timestamp: entry.timestamp, tokens: message ? estimateTokens(message) : 0, flags: flagsOf(entry) };
}

/** The digest of an entry; `blocks` when the caller made them already (without archived originals they are the same). */
export function digestOf(entry: DigestedEntry, blocks: readonly Block[] = entryBlocks(entry)): EntryDigest {
  const message = messageFromEntry(entry);
  const { timestamp, ...row } = entryRow(entry);
  const digest: EntryDigest = { ...(timestamp !== undefined ? { timestamp } : {}), ...row };
  if (!message) digest.noMessage = true;
  if (message?.role === "assistant") {
    digest.model = message.model;
    digest.provider = message.provider;
    const usage = usageOf(message);
    const reported = usage ? calculateContextTokens(usage) : 0;
    if (reported > 0) digest.usage = reported;
  }
  if (!(message?.role === "toolResult" && message.prunedAt !== undefined)) digest.lengths = bodyLengths(entry.id, blocks);
  return digest;
}
