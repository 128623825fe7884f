/**
 * pi from 0.87 (today `@earendil-works/pi-coding-agent` 1.x) still writes version 3, and adds to
 * the context rule of pi.ts:
 * - `context_edit` entries: an earlier message of the context left out (`replacement: null`) or
 *   sent with other content. Only edits among the context's own entries count, the latest of a
 *   target wins, and only a target in the context is changed. New content replaces a user's,
 *   assistant's, tool result's or custom message's `content`: a string stays a string for user and
 *   custom messages and becomes one text block for assistants and tool results. A null edit
 *   removes whatever the target gives, a compaction's summary and system checkpoint included.
 * - system messages (the prompt and the tools): those among a compaction's kept entries are left
 *   out; the compaction's `systemMessage`, the state when it was made, is sent before its summary.
 * Read from pi 1.6.0's `buildSessionProjection` and `projectContextEntry`
 * (dist/core/session-manager.js); checked against pi 1.6.0 itself by the oracle suite.
 */
import type { AgentMessage, SystemMessage, TextContent } from "../message-types.js";
import type { CompactionEntry, ContextEditEntry, SessionEntry } from "../entry-types.js";
import { compactionSummaryMessageFromEntry, messageFromEntry } from "../entry-messages.js";
import { compactionSegments, latestSettings } from "./pi.js";
import type { ContextSegments, Dialect, ProjectedMessage } from "./types.js";

type Edit = ContextEditEntry["replacement"];

/** The indexes of the entries a context is made of, in order: the compaction, its kept entries (system messages left out), the rest. */
function contextIndexes(path: readonly SessionEntry[], { compaction, kept, start }: ContextSegments): number[] {
  const indexes: number[] = [];
  if (compaction >= 0) indexes.push(compaction);
  for (let i = Math.max(kept, 0); i < compaction; i++) if (!isSystemMessage(path[i])) indexes.push(i);
  for (let i = start; i < path.length; i++) indexes.push(i);
  return indexes;
}

const isSystemMessage = (entry: SessionEntry) => entry.type === "message" && entry.message.role === "system";

/** The latest edit of each target, among the context's entries whose targets are also in it. */
function editsOf(path: readonly SessionEntry[], indexes: readonly number[]): Map<string, Edit> {
  const ids = new Set(indexes.map((i) => path[i].id));
  const edits = new Map<string, Edit>();
  for (const i of indexes) {
    const entry = path[i];
    if (entry.type === "context_edit" && ids.has(entry.targetId)) edits.set(entry.targetId, entry.replacement);
  }
  return edits;
}

const EDITABLE = new Set(["user", "assistant", "toolResult", "custom"]);

/** A message with an edit's content, as pi sends it. */
function edited(message: AgentMessage, content: unknown): AgentMessage {
  if (!EDITABLE.has(message.role)) return message;
  const asBlocks = (message.role === "assistant" || message.role === "toolResult") && typeof content === "string";
  return { ...message, content: asBlocks ? [{ type: "text", text: content } satisfies TextContent] : content } as AgentMessage;
}

function project(path: readonly SessionEntry[], segments: ContextSegments): ProjectedMessage[] {
  const indexes = contextIndexes(path, segments);
  const edits = editsOf(path, indexes);
  const out: ProjectedMessage[] = [];
  for (const index of indexes) {
    const entry = path[index];
    const edit = edits.get(entry.id);
    if (edit === null) continue; // left out, a compaction's summary and checkpoint included
    if (index === segments.compaction) {
      const compaction = entry as CompactionEntry;
      if (compaction.systemMessage) out.push({ index, message: compaction.systemMessage });
      out.push({ index, message: compactionSummaryMessageFromEntry(compaction) });
      continue;
    }
    let message = entry.type === "compaction" ? undefined : messageFromEntry(entry);
    if (!message) continue;
    if (message.role === "system" && message.content === null) message = { ...message, content: "" };
    out.push({ index, message: edit ? edited(message, edit.content) : message });
  }
  return out;
}

const textOf = (content: SystemMessage["content"]): string =>
  typeof content === "string" ? content : (content ?? []).flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");

/**
 * The system prompt and tools the system messages of a context add up to, as pi replays them:
 * contents appended (blank-line separated), sections patched by name (null deletes), tools
 * removed then added by name; undefined when there is neither a system message nor a tool.
 * A compaction keeps it as its `systemMessage`, so what pi sends after it is what it sent before.
 */
export function systemCheckpoint(context: readonly AgentMessage[], now: number): SystemMessage | undefined {
  const contents: string[] = [];
  const sections = new Map<string, string>();
  const tools = new Map<string, unknown>();
  let seen = false;
  for (const m of context) {
    if (m.role !== "system") continue;
    seen = true;
    const text = textOf(m.content);
    if (text) contents.push(text);
    for (const [name, value] of Object.entries(m.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
    for (const tool of m.toolsRemoved ?? []) tools.delete(tool.name);
    for (const tool of m.toolsAdded ?? []) tools.set((tool as { name: string }).name, tool);
  }
  if (!seen && tools.size === 0) return undefined;
  return {
    role: "system",
    content: contents.join("\n\n"),
    ...(sections.size > 0 && { sections: Object.fromEntries(sections) }),
    ...(tools.size > 0 && { toolsAdded: [...tools.values()] }),
    timestamp: now,
  };
}

export const pi1Dialect: Dialect = {
  name: "pi-1",
  writtenBy: "pi from 0.87 (pi 1.x)",
  ruleSource: "pi 1.6.0, buildSessionProjection in dist/core/session-manager.js",
  contextEdits: true,
  segments: compactionSegments,
  project,
  settings: latestSettings,
  settingsFromLatest: true,
  // pi 0.84 and later: the leaf that was left
  branchSummaryFromId: (_destination, leftLeaf) => leftLeaf ?? "root",
  compactionFields(context, now) {
    const systemMessage = systemCheckpoint(context(), now);
    return systemMessage ? { systemMessage } : {};
  },
  appendsOnly: (entry) => entry.type !== "context_edit",
};
