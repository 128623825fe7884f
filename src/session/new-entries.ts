/**
 * The entries SessionManager appends: the fields of each kind before the entry gets its id,
 * parent and time, written in both dialects where pi and oh-my-pi differ, and the entry itself
 * with its fields in the order the reference writes them.
 */
import { generateEntryId } from "../format/ids.js";
import type { ImageContent, TextContent } from "../format/message-types.js";
import type {
  ContextEditEntry,
  BranchSummaryEntry,
  CompactionEntry,
  CustomEntry,
  CustomMessageEntry,
  LabelEntry,
  ModelChangeEntry,
  SessionEntry,
} from "../format/entry-types.js";

export type NewEntry<E extends SessionEntry> = Omit<E, "id" | "parentId" | "timestamp">;

export interface CompactionExtras {
  shortSummary?: string;
  preserveData?: Record<string, unknown>;
}

/** Type first, then the tree fields, then the rest: the order the reference writes. */
export function stampEntry<E extends SessionEntry>(fields: NewEntry<E>, parentId: string | null, taken: { has(id: string): boolean }): E {
  const { type, ...rest } = fields as { type: string };
  return { type, id: generateEntryId(taken), parentId, timestamp: new Date().toISOString(), ...rest } as unknown as E;
}

/** pi reads provider/modelId, oh-my-pi reads model. */
export function modelChangeFields(provider: string, modelId: string, role?: string, chat?: ModelChangeEntry["chat"]): NewEntry<ModelChangeEntry> {
  const entry: NewEntry<ModelChangeEntry> = { type: "model_change", provider, modelId, model: `${provider}/${modelId}` };
  if (role !== undefined) entry.role = role;
  if (chat !== undefined && Object.keys(chat).length > 0) entry.chat = chat;
  return entry;
}

export function compactionFields<T>(
  summary: string,
  firstKeptEntryId: string,
  tokensBefore: number,
  details: T | undefined,
  fromExtension: boolean | undefined,
  extra: CompactionExtras,
): NewEntry<CompactionEntry> {
  const entry: NewEntry<CompactionEntry<T>> = { type: "compaction", summary, firstKeptEntryId, tokensBefore };
  if (extra.shortSummary !== undefined) entry.shortSummary = extra.shortSummary;
  if (details !== undefined) entry.details = details;
  if (extra.preserveData !== undefined) entry.preserveData = extra.preserveData;
  if (fromExtension !== undefined) {
    entry.fromHook = fromExtension;
    entry.fromExtension = fromExtension;
  }
  return entry as NewEntry<CompactionEntry>;
}

export function branchSummaryFields<T>(
  fromId: string | null,
  summary: string,
  details: T | undefined,
  fromExtension: boolean | undefined,
): NewEntry<BranchSummaryEntry> {
  const entry: NewEntry<BranchSummaryEntry> = { type: "branch_summary", fromId: fromId ?? "root", summary };
  if (details !== undefined) entry.details = details;
  if (fromExtension !== undefined) {
    entry.fromHook = fromExtension;
    entry.fromExtension = fromExtension;
  }
  return entry;
}

export function customFields<T>(customType: string, data: T | undefined): NewEntry<CustomEntry> {
  const entry: NewEntry<CustomEntry> = { type: "custom", customType };
  if (data !== undefined) entry.data = data;
  return entry;
}

export function customMessageFields<T>(
  customType: string,
  content: string | (TextContent | ImageContent)[],
  display: boolean,
  details: T | undefined,
): NewEntry<CustomMessageEntry> {
  const entry: NewEntry<CustomMessageEntry> = { type: "custom_message", customType, content, display };
  if (details !== undefined) entry.details = details;
  return entry;
}

export function labelFields(targetId: string, label: string | undefined): NewEntry<LabelEntry> {
  const entry: NewEntry<LabelEntry> = { type: "label", targetId };
  if (label !== undefined) entry.label = label;
  return entry;
}

/**
 * pi 1.x's context edit: `targetId`'s message sent with `replacement`'s content, or left out
 * (null). `prunedAt` marks one bonsai appended to prune tool output (pi ignores the field).
 */
export function contextEditFields(targetId: string, replacement: ContextEditEntry["replacement"], prunedAt?: number): NewEntry<ContextEditEntry> {
  const entry: NewEntry<ContextEditEntry> = { type: "context_edit", targetId, replacement };
  if (prunedAt !== undefined) entry.prunedAt = prunedAt;
  return entry;
}
