/**
 * What `/session` prints: the file or database location, its entries by kind, the tokens the
 * model reported and what they cost. Pure over the session's entries.
 */
import type { SessionEntry } from "../format/entry-types.js";
import { formatContextUsage, formatTokens } from "./footer.js";
import { wrapHanging } from "./wrap.js";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export interface SessionStats {
  entries: number;
  messages: number;
  userMessages: number;
  assistantMessages: number;
  toolResults: number;
  compactions: number;
  branchSummaries: number;
  labels: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

/** Counts over every entry of the file (all branches): what the session has cost so far. */
export function sessionStats(entries: readonly SessionEntry[]): SessionStats {
  const stats: SessionStats = {
    entries: entries.length,
    messages: 0,
    userMessages: 0,
    assistantMessages: 0,
    toolResults: 0,
    compactions: 0,
    branchSummaries: 0,
    labels: 0,
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cost: 0,
  };
  for (const entry of entries) {
    if (entry.type === "compaction") stats.compactions++;
    else if (entry.type === "branch_summary") stats.branchSummaries++;
    else if (entry.type === "label") stats.labels++;
    if (entry.type !== "message") continue;
    stats.messages++;
    const message = entry.message;
    if (message.role === "user") stats.userMessages++;
    else if (message.role === "toolResult") stats.toolResults++;
    else if (message.role === "assistant") {
      stats.assistantMessages++;
      const usage = message.usage;
      if (!usage) continue;
      stats.input += usage.input || 0;
      stats.output += usage.output || 0;
      stats.cacheRead += usage.cacheRead || 0;
      stats.cacheWrite += usage.cacheWrite || 0;
      stats.cost += usage.cost?.total || 0;
    }
  }
  return stats;
}

export function formatCost(dollars: number): string {
  if (dollars === 0) return "$0";
  return dollars < 0.01 ? `$${dollars.toFixed(4)}` : `$${dollars.toFixed(2)}`;
}

export function sessionInfoLines(input: {
  /** the session file; undefined for a database session or one in memory */
  file: string | undefined;
  /** where a database session is (`sqlite:…#ID`, `postgres://…#ID`, no password) */
  location?: string;
  entries: readonly SessionEntry[];
  usage: Parameters<typeof formatContextUsage>[0];
  model: string;
  /** the columns to wrap to (a path breaks after a `/`, under its label); none: one line each */
  width?: number;
}): string[] {
  const s = sessionStats(input.entries);
  const cache = s.cacheRead || s.cacheWrite ? `, cache ${formatTokens(s.cacheRead)} read / ${formatTokens(s.cacheWrite)} written` : "";
  const counts = [
    `${s.userMessages} user`,
    `${s.assistantMessages} assistant`,
    plural(s.toolResults, "tool result"),
    plural(s.compactions, "compaction"),
    plural(s.branchSummaries, "branch summary", "branch summaries"),
    plural(s.labels, "label change"),
  ];
  const rows: [string, string][] = [
    input.file === undefined && input.location !== undefined ? ["location: ", input.location] : ["file:     ", input.file ?? "(not saved)"],
    ["entries:  ", `${s.entries} (${counts.join(", ")})`],
    ["model:    ", input.model],
    ["context:  ", formatContextUsage(input.usage)],
    ["tokens:   ", `${formatTokens(s.input)} in, ${formatTokens(s.output)} out${cache}`],
    ["cost:     ", formatCost(s.cost)],
  ];
  return rows.flatMap(([head, text]) => wrapHanging(head, text, input.width));
}
