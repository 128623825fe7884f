/**
 * Session file format (v3): a header line, then entries that form a tree through id/parentId.
 * Field names are the format's own. Both dialects are described: pi (`fromHook`, model_change
 * `{provider, modelId}`, `session_info`) and oh-my-pi (`fromExtension`, model_change
 * `{model: "provider/id", role?}`, header `title`).
 */
import type { AgentMessage, ImageContent, SystemMessage, TextContent } from "./message-types.js";

export const CURRENT_SESSION_VERSION = 3;

export interface SessionHeader {
  type: "session";
  /** absent means version 1 */
  version?: number;
  id: string;
  timestamp: string;
  cwd: string;
  /** oh-my-pi keeps the session name here; pi uses a session_info entry */
  title?: string;
  parentSession?: string;
  [legacy: string]: unknown;
}

export interface EntryBase {
  id: string;
  parentId: string | null;
  /** ISO time */
  timestamp: string;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}

export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  /** oh-my-pi writes null for "off" */
  thinkingLevel: string | null;
}

export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  /** pi spelling */
  provider?: string;
  modelId?: string;
  /** oh-my-pi spelling: "provider/modelId" */
  model?: string;
  role?: string;
  /** written by `bonsai chat`: how it reached the model (never a key), so a resumed chat reaches it again */
  chat?: { baseUrl?: string; api?: string; contextWindow?: number };
}

export interface FileLists {
  readFiles: string[];
  modifiedFiles: string[];
}

export interface CompactionEntry<T = unknown> extends EntryBase {
  type: "compaction";
  summary: string;
  shortSummary?: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
  preserveData?: Record<string, unknown>;
  /** pi spelling */
  fromHook?: boolean;
  /** oh-my-pi spelling */
  fromExtension?: boolean;
  /** pi ≥ 0.87: the system prompt and tools when the compaction was made, sent before the summary */
  systemMessage?: SystemMessage;
  /** oh-my-pi: how it was made (remote, snapcompact, handoff, soft, shake) and its size after */
  method?: string;
  tokensAfter?: number;
}

export interface BranchSummaryEntry<T = unknown> extends EntryBase {
  type: "branch_summary";
  /** the entry the summary hangs off, or "root" */
  fromId: string;
  summary: string;
  details?: T;
  fromHook?: boolean;
  fromExtension?: boolean;
}

export interface CustomEntry<T = unknown> extends EntryBase {
  type: "custom";
  customType: string;
  data?: T;
}

export interface CustomMessageEntry<T = unknown> extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: T;
}

export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  label?: string;
}

export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}

export interface TtsrInjectionEntry extends EntryBase {
  type: "ttsr_injection";
  injectedRules: string[];
}

export interface SessionInitEntry extends EntryBase {
  type: "session_init";
  systemPrompt: string;
  task: string;
  tools: string[];
  outputSchema?: unknown;
}

export interface ModeChangeEntry extends EntryBase {
  type: "mode_change";
  mode: string;
  data?: unknown;
}

/**
 * pi ≥ 0.87: an earlier message of the branch left out of the context (`replacement: null`) or
 * sent with other content, appended instead of rewriting the message (format/dialects/pi-1.ts).
 */
export interface ContextEditEntry extends EntryBase {
  type: "context_edit";
  targetId: string;
  replacement: null | { content: unknown };
  /** bonsai's own mark on an edit it appended to prune tool output (ops/prune-edits.ts) */
  prunedAt?: number;
}

/** pi ≥ 0.87: tokens a request spent outside the conversation (a cache warm-up); no message. */
export interface UsageEntry extends EntryBase {
  type: "usage";
  [field: string]: unknown;
}

/** oh-my-pi's `/clear`: the context starts after the latest one, unless a compaction follows it. */
export interface ResetBoundaryEntry extends EntryBase {
  type: "reset_boundary";
}

/** oh-my-pi: the session was named (the title slot holds the name too); no message. */
export interface TitleChangeEntry extends EntryBase {
  type: "title_change";
  title?: string;
  [field: string]: unknown;
}

/** oh-my-pi's bookkeeping entries that carry no message: model usage, service tier, credential pins. */
export interface OmpStateEntry extends EntryBase {
  type: "model_usage" | "service_tier_change" | "credential_pin";
  [field: string]: unknown;
}

export type SessionEntry =
  | MessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry
  | TtsrInjectionEntry
  | SessionInitEntry
  | ModeChangeEntry
  | ContextEditEntry
  | UsageEntry
  | ResetBoundaryEntry
  | TitleChangeEntry
  | OmpStateEntry;

export type EntryType = SessionEntry["type"];

/** A line of a session file: the header or an entry. */
export type FileEntry = SessionHeader | SessionEntry;

/** Entries bonsai writes to persist the leaf; every reader treats them as extension state. */
export const CHECKOUT_CUSTOM_TYPE = "bonsai.checkout";

/** Whether an entry is a bonsai.checkout marker: it only records where the leaf was moved. */
export function isCheckoutMarker(entry: { type: string; customType?: string }): boolean {
  return entry.type === "custom" && entry.customType === CHECKOUT_CUSTOM_TYPE;
}

export interface ModelRef {
  provider: string;
  modelId: string;
}

export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel: string;
  model: ModelRef | null;
}

export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
}

/** Whether a compaction or branch summary was produced by a hook/extension, in either dialect. */
export function isFromExtension(entry: { fromHook?: boolean; fromExtension?: boolean }): boolean {
  return entry.fromHook === true || entry.fromExtension === true;
}
