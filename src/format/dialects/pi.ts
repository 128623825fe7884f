/**
 * pi up to 0.86 (pi 0.73.1, `@mariozechner/pi-coding-agent`; bonsai's own files): the context
 * is the path from the root, with the latest compaction's summary replacing everything before its
 * first kept entry. Read from pi 0.73.1's `buildSessionContext` (dist/core/session-manager.js).
 */
import type { AgentMessage } from "../message-types.js";
import type { CompactionEntry, SessionEntry } from "../entry-types.js";
import { compactionSummaryMessageFromEntry, messageFromEntry, modelFromChange } from "../entry-messages.js";
import type { ContextSegments, ContextSettings, Dialect, ProjectedMessage } from "./types.js";

/**
 * The latest compaction's summary comes first, then the entries it kept (from the first entry on
 * the path whose id is its firstKeptEntryId, up to the compaction; none when no entry before it
 * has that id, as a retain-none compaction's own id), then every entry after it. Entries that
 * carry no message (compactions among the kept ones included) contribute nothing.
 */
export function compactionSegments(path: readonly SessionEntry[]): ContextSegments {
  let compaction = path.length - 1;
  while (compaction >= 0 && path[compaction].type !== "compaction") compaction--;
  if (compaction < 0) return { compaction: -1, kept: -1, start: 0 };
  const firstKeptId = (path[compaction] as CompactionEntry).firstKeptEntryId;
  for (let i = 0; i < compaction; i++) if (path[i].id === firstKeptId) return { compaction, kept: i, start: compaction + 1 };
  return { compaction, kept: compaction, start: compaction + 1 };
}

/**
 * Each entry's own message, in order: the summary, the kept entries, the entries from `start`;
 * `messageOf` says what an entry gives (default: messageFromEntry).
 */
export function plainProjection(
  path: readonly SessionEntry[],
  { compaction, kept, start }: ContextSegments,
  messageOf: (entry: SessionEntry) => AgentMessage | undefined = messageFromEntry,
): ProjectedMessage[] {
  const out: ProjectedMessage[] = [];
  if (compaction >= 0) out.push({ index: compaction, message: compactionSummaryMessageFromEntry(path[compaction] as CompactionEntry) });
  const push = (index: number) => {
    const message = messageOf(path[index]);
    if (message) out.push({ index, message });
  };
  for (let i = Math.max(kept, 0); i < compaction; i++) push(i);
  for (let i = start; i < path.length; i++) push(i);
  return out;
}

/** The latest thinking level and model set on the path: by a change entry, or by an assistant's reply. */
export function latestSettings(path: readonly SessionEntry[]): ContextSettings {
  const settings: ContextSettings = { thinkingLevel: "off", model: null };
  for (const entry of path) {
    if (entry.type === "thinking_level_change") settings.thinkingLevel = entry.thinkingLevel ?? "off";
    else if (entry.type === "model_change") settings.model = modelFromChange(entry) ?? settings.model;
    else if (entry.type === "message" && entry.message.role === "assistant") {
      settings.model = { provider: entry.message.provider, modelId: entry.message.model };
    }
  }
  return settings;
}

export const piDialect: Dialect = {
  name: "pi",
  writtenBy: "pi up to 0.86, and bonsai",
  ruleSource: "pi 0.73.1, buildSessionContext in dist/core/session-manager.js",
  contextEdits: false,
  segments: compactionSegments,
  project: (path, segments) => plainProjection(path, segments),
  settings: latestSettings,
  settingsFromLatest: true,
  // pi 0.73.1: the destination
  branchSummaryFromId: (destination) => destination ?? "root",
  compactionFields: () => ({}),
  appendsOnly: () => true,
};
