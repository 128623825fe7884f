/**
 * The `/bonsai` report: context use against the window and the compaction threshold, what the
 * next compaction would summarize and keep, the last compaction's method, coverage additions and
 * time, and what request pruning saved. Pure: facts in, lines out.
 */
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS } from "../../../src/compaction/settings.js";
import { planCompaction } from "../../../src/compaction/prepare.js";
import { estimateMessagesTokens } from "../../../src/compaction/tokens.js";
import type { SessionEntry } from "../../../src/format/entry-types.js";
import type { CompactionRecord } from "./compaction.js";

export interface StatusFacts {
  branch: readonly SessionEntry[];
  usage?: { tokens: number | null; contextWindow: number };
  settings: CompactionSettings;
  lastCompaction?: CompactionRecord;
  lastPruning?: { replaced: number; tokensSaved: number };
}

const n = (value: number) => value.toLocaleString("en-US");
const plural = (count: number, word: string) => `${n(count)} ${word}${count === 1 ? "" : "s"}`;

/** The last compaction entry on the branch, for sessions compacted before this process started. */
function lastCompactionOnBranch(branch: readonly SessionEntry[]): CompactionRecord | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry.type !== "compaction") continue;
    const details = (entry.details ?? {}) as { method?: string; coverage?: { added?: unknown[] }; bonsai?: { ms?: number } };
    return {
      at: entry.timestamp,
      method: details.method ?? (entry.fromHook ? "extension" : "pi"),
      ms: details.bonsai?.ms ?? 0,
      tokensBefore: entry.tokensBefore,
      firstKeptEntryId: entry.firstKeptEntryId,
      coverageAdded: details.coverage?.added?.length ?? 0,
      warnings: [],
    };
  }
  return undefined;
}

export function statusLines(facts: StatusFacts): string[] {
  const settings = { ...DEFAULT_COMPACTION_SETTINGS, ...facts.settings };
  const lines: string[] = [];
  const window = facts.usage?.contextWindow ?? 0;
  const threshold = window > 0 ? window - settings.reserveTokens : 0;
  if (facts.usage && window > 0) {
    const tokens = facts.usage.tokens;
    const used = tokens === null ? "unknown until the next answer" : `${n(tokens)} tokens (${Math.round((tokens / window) * 100)}%)`;
    lines.push(`context: ${used} of the ${n(window)}-token window; compaction at ${n(threshold)} (window - reserve ${n(settings.reserveTokens)})`);
  } else {
    lines.push("context: no model selected, so no window to measure against");
  }
  const plan = planCompaction(facts.branch, settings);
  if (plan.ok) {
    const p = plan.preparation;
    const summarized = p.messagesToSummarize.length + p.turnPrefixMessages.length;
    const summarizedTokens = estimateMessagesTokens(p.messagesToSummarize) + estimateMessagesTokens(p.turnPrefixMessages);
    lines.push(
      `next compaction: summarizes ${plural(summarized, "message")} (~${n(summarizedTokens)} tokens)${p.isSplitTurn ? ", splitting a turn" : ""}; keeps ${plural(p.recentMessages.length, "message")} from entry ${p.firstKeptEntryId} (~${n(estimateMessagesTokens(p.recentMessages))} tokens)`,
    );
  } else {
    lines.push(`next compaction: ${plan.message}`);
  }
  const last = facts.lastCompaction ?? lastCompactionOnBranch(facts.branch);
  if (last) {
    const time = last.ms > 0 ? ` in ${(last.ms / 1000).toFixed(1)} s` : "";
    lines.push(
      `last compaction: ${last.method}${time}, ${n(last.tokensBefore)} tokens before, kept from ${last.firstKeptEntryId}, coverage check added ${plural(last.coverageAdded, "fact")}`,
    );
    for (const warning of last.warnings) lines.push(`  ${warning}`);
  } else {
    lines.push("last compaction: none on this branch");
  }
  if (facts.lastPruning) {
    const { replaced, tokensSaved } = facts.lastPruning;
    lines.push(
      replaced === 0
        ? "request pruning: nothing to prune in the last request"
        : `request pruning: ${plural(replaced, "tool result")} replaced in the last request, ~${n(tokensSaved)} tokens saved (the file is unchanged)`,
    );
  }
  return lines;
}
